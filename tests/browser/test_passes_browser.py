"""Passes in a real (headless Chromium) browser: booked through the form, each seat's QR
code on the booked page, in the confirmation e-mail (an inline PNG) and on the printable
page (one a page when printed) reads back as the pass's code with jsQR, the decoder the
scanner page uses. Screenshots: test-artifacts/passes-*.png."""
import base64
import email
import email.policy
import re
import uuid

from playwright.sync_api import expect

JSQR = "/static/booking/vendor/jsqr-1.4.0/jsQR.js"
# Draws an image (an <svg> element's markup or a data: URL) on a canvas and decodes it.
DECODE = """async (source) => {
  const image = new Image();
  image.src = source.startsWith("data:") ? source
    : "data:image/svg+xml;base64," + btoa(source);
  await image.decode();
  const side = 400;
  const canvas = document.createElement("canvas");
  canvas.width = canvas.height = side;
  const context = canvas.getContext("2d");
  context.fillStyle = "#fff";
  context.fillRect(0, 0, side, side);
  context.drawImage(image, 0, 0, side, side);
  const found = jsQR(context.getImageData(0, 0, side, side).data, side, side);
  return found && found.data;
}"""


def test_browser__passes__booked_page_email_and_print_read_back_as_their_codes(
        live_site, site_service, page, screenshot):
    tag = uuid.uuid4().hex[:6]
    event = site_service.create_event(
        name=f"Pass fair {tag}", capacity=20, starts_at="2031-10-01T09:00:00+00:00",
        ticket_types={"conference": [], "workshop": []}, max_per_order=4,
        venue="Hall 3, Pier 9")
    address = f"ada{tag}@example.com"

    page.goto(live_site.url + f"/events/{event.id}/")
    page.get_by_label("Your name").fill("Ada Lovelace")
    page.get_by_label("E-mail").fill(address)
    page.get_by_label("Conference").fill("1")
    page.get_by_label("Workshop").fill("1")
    page.get_by_label("Workshop").press("Enter")
    page.wait_for_url(re.compile(r"/booked/"))
    expect(page.get_by_role("heading", name="Your passes")).to_be_visible()
    passes = site_service.passes(site_service.find_registration(event.id, email=address))
    codes = [p.code for p in passes]
    assert [p.ticket_label for p in passes] == ["Conference", "Workshop"]
    screenshot(page, "passes-1-booked-page")

    page.add_script_tag(url=live_site.url + JSQR)  # from the site itself (its CSP allows it)
    shown = [page.evaluate(DECODE, svg.evaluate("node => new XMLSerializer().serializeToString(node)"))
             for svg in page.locator("svg.pass-qr").all()]
    assert shown == codes

    (sent,) = live_site.mail_containing(address)
    message = email.message_from_string(sent, policy=email.policy.default)
    html = next(p for p in message.walk() if p.get_content_type() == "text/html")
    images = {p["Content-ID"].strip("<>"): p.get_content()
              for p in message.walk() if p.get_content_type() == "image/png"}
    cids = re.findall(r'src="cid:([^"]+)"', html.get_content())
    assert sorted(cids) == sorted(images) and len(cids) == 2
    mailed = [page.evaluate(DECODE, "data:image/png;base64," +
                            base64.b64encode(images[cid]).decode()) for cid in cids]
    assert mailed == codes
    text = next(p for p in message.walk() if p.get_content_type() == "text/plain")
    assert all(code in text.get_content() for code in codes)

    page.get_by_role("link", name="Print the passes").click()
    expect(page.get_by_role("heading", name=f"Your passes for Pass fair {tag}")).to_be_visible()
    screenshot(page, "passes-2-printable")
    # Each printed pass: whose it is, the event, its date, time and venue.
    expect(page.locator(".pass-name")).to_have_text(["Ada Lovelace", "Ada Lovelace"])
    expect(page.locator(".pass-when")).to_have_text(["Wed 1 Oct 2031, 09:00 UTC"] * 2)
    expect(page.locator(".pass-venue")).to_have_text(["Hall 3, Pier 9"] * 2)
    page.emulate_media(media="print")
    breaks = page.locator(".pass-card").evaluate_all(
        "cards => cards.map(card => getComputedStyle(card).breakAfter)")
    assert breaks == ["page", "auto"]  # one pass a page
    assert page.locator(".site-header").is_hidden()
    assert page.get_by_role("button", name="Print").is_hidden()
    screenshot(page, "passes-3-printed")
