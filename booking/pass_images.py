"""Passes as pictures: a pass's signed code drawn as a QR code, with segno.

SVG (inline markup, sized by the page's CSS) for the booked page and the printable
passes; PNG for e-mails, where mail clients show an inline image attached by Content-ID
(``cid:``) but no SVG. Always a full QR code (never a Micro QR, which phone cameras and
the scanner page cannot read), error correction level M (a creased print or a cracked
phone screen still reads), black on white, with the standard four-module quiet zone.

Cheap wherever it is made (docs/development/benchmarks-door.md, "A pass's picture"):
the level and the mask are fixed, so segno encodes once instead of trying all eight masks
and scoring each (four fifths of its time); the PNG and the SVG are written here from
segno's matrix, a row at a time, instead of by segno's writers, which handle every colour
mode and option a module at a time; and both drawings of a code are kept (a page shown
again, a resend: no new work).
``tests/test_pass_images.py`` decodes every drawing at the size the e-mail and the
printable page use.
"""
import html
import re
import struct
import zlib
from functools import lru_cache

import segno

ERROR_CORRECTION = "m"
# Any of the eight masks reads; this one is never scored against the others.
MASK = 4
BORDER = 4  # the quiet zone, in modules
PNG_SCALE = 4  # pixels per module: about 260 px for a pass's code, shown at 240 in e-mails
KEPT = 1024  # codes whose drawings this process keeps (a few hundred bytes to 20 KB each)


@lru_cache(maxsize=KEPT)
def _qr(code: str) -> segno.QRCode:
    if not code:
        raise ValueError("A pass without a code cannot be drawn.")
    return segno.make_qr(code, error=ERROR_CORRECTION, boost_error=False, mask=MASK)


@lru_cache(maxsize=KEPT)
def svg(code: str, *, title: str = "") -> str:
    """The QR code as inline SVG markup (no XML declaration, no fixed size: the CSS of
    class ``pass-qr`` sizes it). Safe to insert into a page unescaped: it holds only
    the drawing and ``title``, escaped here. One horizontal stroke a run of dark modules,
    on a white square with the quiet zone, as segno's own SVG writer draws it."""
    matrix = _qr(code).matrix
    size = len(matrix) + 2 * BORDER
    strokes = [f"M{BORDER + run.start()} {BORDER + y}.5h{len(run.group())}"
               for y, row in enumerate(matrix)
               for run in _DARK_RUN.finditer(bytes(row))]
    heading = f"<title>{html.escape(title)}</title>" if title else ""
    return (f'<svg viewBox="0 0 {size} {size}" class="pass-qr">{heading}'
            f'<path fill="#fff" d="M0 0h{size}v{size}h-{size}z"/>'
            f'<path stroke="#000" d="{"".join(strokes)}"/></svg>')


_DARK_RUN = re.compile(rb"\x01+")


@lru_cache(maxsize=KEPT)
def png(code: str) -> bytes:
    """The QR code as a PNG image (for an e-mail's inline attachment): greyscale, one bit
    a pixel, ``PNG_SCALE`` pixels a module, quiet zone included."""
    return _png(_qr(code).matrix, scale=PNG_SCALE, border=BORDER)


def _png(matrix, *, scale: int, border: int) -> bytes:
    """A 1-bit greyscale PNG of ``matrix`` (rows of 0/1, 1 dark): 0 is black in PNG's
    greyscale, so a dark module is a 0 bit."""
    width = (len(matrix[0]) + 2 * border) * scale
    light_row = b"\x00" + _bits("1" * width)
    rows = [light_row] * (border * scale)
    for row in matrix:
        bits = "".join("0" if dark else "1" for dark in row)
        edge = "1" * (border * scale)
        line = b"\x00" + _bits(edge + "".join(c * scale for c in bits) + edge)
        rows.extend([line] * scale)
    rows.extend([light_row] * (border * scale))
    header = struct.pack(">IIBBBBB", width, width, 1, 0, 0, 0, 0)
    return b"".join((b"\x89PNG\r\n\x1a\n", _chunk(b"IHDR", header),
                     _chunk(b"IDAT", zlib.compress(b"".join(rows), 6)), _chunk(b"IEND", b"")))


def _bits(text: str) -> bytes:
    """'0'/'1' characters as bytes, the last one padded with light (1) bits."""
    padded = text + "1" * (-len(text) % 8)
    return int(padded, 2).to_bytes(len(padded) // 8, "big")


def _chunk(kind: bytes, data: bytes) -> bytes:
    return (struct.pack(">I", len(data)) + kind + data
            + struct.pack(">I", zlib.crc32(kind + data)))
