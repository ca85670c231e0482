"""Passes as pictures: a pass's signed code drawn as a QR code, with segno.

SVG (inline markup, sized by the page's CSS) for the booked page and the printable
passes; PNG for e-mails, where mail clients show an inline image attached by Content-ID
(``cid:``) but no SVG. Always a full QR code (never a Micro QR, which phone cameras and
the scanner page cannot read), error correction level M (a creased print or a cracked
phone screen still reads), black on white, with the standard four-module quiet zone.
"""
import io

import segno

ERROR_CORRECTION = "m"
PNG_SCALE = 6  # pixels per module: about 300 px for a pass's code, sharp on a phone


def _qr(code: str) -> segno.QRCode:
    if not code:
        raise ValueError("A pass without a code cannot be drawn.")
    return segno.make_qr(code, error=ERROR_CORRECTION, boost_error=False)


def svg(code: str, *, title: str = "") -> str:
    """The QR code as inline SVG markup (no XML declaration, no fixed size: the CSS of
    class ``pass-qr`` sizes it). Safe to insert into a page unescaped: it holds only
    the drawing and ``title``, which segno escapes."""
    return _qr(code).svg_inline(scale=1, omitsize=True, svgclass="pass-qr", lineclass=None,
                                title=title or None, dark="#000", light="#fff")


def png(code: str) -> bytes:
    """The QR code as a PNG image (for an e-mail's inline attachment)."""
    out = io.BytesIO()
    _qr(code).save(out, kind="png", scale=PNG_SCALE, dark="#000", light="#fff")
    return out.getvalue()
