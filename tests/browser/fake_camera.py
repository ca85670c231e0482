"""A video file for Chromium's fake camera (``--use-file-for-fake-video-capture``): a QR
code drawn with segno, as a camera held still in front of a pass would see it.

Y4M, the plain format Chromium reads: a header line, then per frame ``FRAME\\n`` and the
Y (luma), U and V planes at 4:2:0 (U and V a quarter of the pixels each). Grey is U=V=128;
C420jpeg uses the full 0-255 range, so black modules are Y=0 and the paper Y=255.
"""
from pathlib import Path

import segno

WIDTH, HEIGHT, FPS = 640, 480, 10


def qr_frame(code: str, *, width: int = WIDTH, height: int = HEIGHT) -> bytes:
    """One frame (Y, U and V planes) showing ``code``'s QR code in the middle, on white."""
    rows = [list(row) for row in segno.make_qr(code, error="m").matrix_iter(border=4)]
    modules = len(rows)
    scale = max(1, (min(width, height) - 40) // modules)
    side = modules * scale
    left, top = (width - side) // 2, (height - side) // 2
    luma = bytearray(b"\xff" * (width * height))
    for y, row in enumerate(rows):
        for x, dark in enumerate(row):
            if dark:
                for dy in range(scale):
                    start = (top + y * scale + dy) * width + left + x * scale
                    luma[start:start + scale] = b"\x00" * scale
    chroma = b"\x80" * ((width // 2) * (height // 2))
    return bytes(luma) + chroma + chroma


def write_y4m(path: Path, code: str, *, frames: int = 10) -> Path:
    """A looping video of ``frames`` frames (one second at 10 fps) showing ``code``."""
    frame = qr_frame(code)
    with path.open("wb") as out:
        out.write(f"YUV4MPEG2 W{WIDTH} H{HEIGHT} F{FPS}:1 Ip A1:1 C420jpeg\n".encode("ascii"))
        for _ in range(frames):
            out.write(b"FRAME\n")
            out.write(frame)
    return path
