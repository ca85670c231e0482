"""Pass pictures (booking/pass_images.py): every pass's QR code reads back as its code, at
the size the e-mail and the printable page show it, and drawing one is cheap (a fixed
mask: segno never tries and scores all eight)."""
import email
import io
import re

import pytest
import zxingcpp
from django.core import mail
from PIL import Image

from booking import pass_images
from booking.checkin.passes import PassSigner
from tests.mail.helpers import deliver_owed

EMAIL_SIZE = 240  # the e-mail's <img width="240" height="240">
# The printable page: at most 10 cm printed (96 CSS px an inch), 18rem on screen.
PAGE_SIZES = (round(10 / 2.54 * 96), 288)


def codes(count=24):
    """Pass codes as issued: every length of event id and pass number a pass can have."""
    signer = PassSigner(b"pass-images")
    return [signer.code(f"{n:x}" * (1 + n % 32), f"{n:032x}-{1 + n % 12}",
                        ("admission", "conference", "workshop-a")[n % 3])
            for n in range(count)]


def decoded(image: Image.Image) -> list[str]:
    """The QR codes found in ``image``, as the scanner page and phones read a pass: QR only.
    Asked for every format, zxing now and then also finds a linear barcode in a QR code's
    modules (an EAN-13 "0141936000051" beside the pass's code: about 1 image in 1,500)."""
    return [found.text for found in zxingcpp.read_barcodes(
        image, formats=zxingcpp.BarcodeFormat.QRCode)]


def svg_image(svg: str, size: int) -> Image.Image:
    """The inline SVG drawn as a browser draws it at ``size`` px: each stroke of the path
    ("M x y.5 h n") a row of ``n`` dark modules."""
    side = int(re.search(r'viewBox="0 0 (\d+) \1"', svg)[1])
    path = re.search(r'<path stroke="#000" d="([^"]+)"', svg)[1]
    modules = Image.new("L", (side, side), 255)
    for x, y, n in re.findall(r"M(\d+) (\d+)\.5h(\d+)", path):
        for dx in range(int(n)):
            modules.putpixel((int(x) + dx, int(y)), 0)
    return modules.resize((size, size), Image.NEAREST)


def test_png__every_code_decodes_at_the_e_mails_size():
    for code in codes():
        image = Image.open(io.BytesIO(pass_images.png(code)))
        assert image.size[0] >= EMAIL_SIZE  # never blown up blurred from a smaller one
        assert decoded(image) == [code]
        assert decoded(image.convert("L").resize((EMAIL_SIZE, EMAIL_SIZE),
                                                 Image.BILINEAR)) == [code]


def test_svg__every_code_decodes_at_the_printable_pages_sizes():
    for code in codes():
        svg = pass_images.svg(code, title="Conference: QR code to show at the door")
        for size in PAGE_SIZES:
            assert decoded(svg_image(svg, size)) == [code]


def test_svg_and_png__the_same_drawing_as_segnos_own():
    code = codes(1)[0]
    qr = pass_images._qr(code)
    ours = svg_image(pass_images.svg(code), qr.symbol_size()[0])
    theirs = io.BytesIO()
    qr.save(theirs, kind="png", scale=1)
    assert ours.tobytes() == Image.open(theirs).convert("L").tobytes()
    png = Image.open(io.BytesIO(pass_images.png(code))).convert("L")
    scale = pass_images.PNG_SCALE
    assert png.resize((png.size[0] // scale,) * 2, Image.NEAREST).tobytes() == (
        Image.open(theirs).convert("L").tobytes())


def test_encoding__fixed_level_and_mask__never_all_eight_tried(monkeypatch):
    # segno scores all eight masks only when none is given; the level is never raised.
    import segno.encoder

    scored = []
    real = segno.encoder.evaluate_mask
    monkeypatch.setattr(segno.encoder, "evaluate_mask",
                        lambda *args: scored.append(1) or real(*args))
    code = codes(1)[0] + "-not-seen-before"
    qr = pass_images._qr(code)
    assert qr.mask == pass_images.MASK and qr.error == "M" and not qr.is_micro
    assert scored == []


def test_drawings__kept_per_code__a_page_shown_again_draws_nothing(monkeypatch):
    code = codes(1)[0] + "-kept"
    first = pass_images.svg(code, title="t"), pass_images.png(code)
    monkeypatch.setattr(pass_images.segno, "make_qr", pytest.fail)
    assert (pass_images.svg(code, title="t"), pass_images.png(code)) == first


def test_confirmation__each_of_four_passes_decodes_to_its_code(client, service):
    event = service.create_event(name="Four", capacity=8, ticket_types={"day": [], "night": []},
                                 max_per_order=4)
    registration = service.book(event.id, name="Olga", email="olga@example.com",
                                tickets={"day": 3, "night": 1})
    deliver_owed()
    (sent,) = mail.outbox
    parsed = email.message_from_bytes(sent.message().as_bytes())
    images = [Image.open(io.BytesIO(part.get_payload(decode=True))) for part in parsed.walk()
              if part.get_content_type() == "image/png"]
    passes = service.passes(registration)
    assert len(images) == len(passes) == 4
    for image, the_pass in zip(images, passes):
        assert decoded(image.convert("L").resize((EMAIL_SIZE, EMAIL_SIZE),
                                                 Image.BILINEAR)) == [the_pass.code]
