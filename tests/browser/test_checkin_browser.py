"""Door staff scan passes with the scanner page on a phone (390 px) in Chromium, whose fake
camera shows a real pass's QR code (a Y4M video drawn with segno, tests/browser/fake_camera.py).

Online: the first scan admits (green), the second of the same pass is refused (red,
already admitted, naming the first gate). Offline: another pass is admitted from the
page's own signature check and queued; a forged code and another event's code typed in
are refused; back online, the queue uploads and the server holds the admission.
Screenshots at 1280 and 390 px go to test-artifacts/checkin-*.png.
"""
import base64
import uuid

import pytest
from playwright.sync_api import expect

from tests.browser.conftest import CHROMIUM, CHROMIUM_ARGS
from tests.browser.fake_camera import write_y4m

PHONE = {"width": 390, "height": 844}
PASSWORD = "pw-" + uuid.uuid4().hex

MAKE_CHECKIN_USER = """
from django.contrib.auth.models import User
from booking.organizers.models import Organizer, Team
user = User.objects.create_user({username!r}, password={password!r}, is_staff=True)
team, _ = Team.objects.get_or_create(organizer=Organizer.objects.get(slug="acme"),
                                     name="Door staff", defaults={{"role": "checkin"}})
team.members.add(user)
"""


@pytest.fixture
def camera(browser, tmp_path):
    """``camera(code)``: a new Chromium whose camera films ``code``'s QR code (closed after
    the test). The session's Playwright launches it (a second one cannot start here)."""
    launched = []

    def launch(code: str):
        video = write_y4m(tmp_path / f"camera-{len(launched)}.y4m", code)
        chromium = browser.browser_type.launch(
            executable_path=CHROMIUM, headless=True,
            args=[*CHROMIUM_ARGS, "--use-fake-ui-for-media-stream",
                  "--use-fake-device-for-media-stream",
                  f"--use-file-for-fake-video-capture={video}"])
        launched.append(chromium)
        return chromium
    yield launch
    for chromium in launched:
        chromium.close()


STALE_SCAN = """({list, code}) => {
  const key = `checkin:${list}:queue`;
  const queue = JSON.parse(localStorage.getItem(key)) || [];
  const then = new Date(Date.now() - 15 * 86400 * 1000).toISOString();
  queue.unshift({code, direction: "entry", nonce: crypto.randomUUID(), scanned_at: then,
                 gate: "Old phone"});
  localStorage.setItem(key, JSON.stringify(queue));
}"""


# The page's service worker is running and holds a copy of the page.
WORKER_READY = """async () => {
  await navigator.serviceWorker.ready;
  for (let tries = 0; tries < 50; tries++) {
    if (await caches.match(location.pathname, {ignoreVary: true})) return true;
    await new Promise((done) => setTimeout(done, 100));
  }
  return false;
}"""


def phone(chromium, live_site, storage_state=None):
    context = chromium.new_context(viewport=PHONE, storage_state=storage_state,
                                   has_touch=True, is_mobile=True)
    context.grant_permissions(["camera"], origin=live_site.url)
    context.set_default_timeout(15_000)
    return context, context.new_page()


def answer_shows(page, status: str, *texts: str):
    answer = page.locator("#answer")
    expect(answer).to_be_visible()
    expect(answer).to_have_attribute("data-status", status)
    for text in texts:
        expect(answer).to_contain_text(text)


def test_browser__scanner__camera_online_offline_queue_and_forgeries(
        live_site, site_service, camera, screenshot):
    tag = uuid.uuid4().hex[:6]
    event = site_service.create_event(name=f"Door night {tag}", capacity=10,
                                      starts_at="2031-09-01T18:00:00+00:00", organizer="acme")
    door = site_service.create_checkin_list(event.id, name="Main door")
    ada = site_service.book(event.id, name="Ada Lovelace", email=f"ada{tag}@example.com")
    bob = site_service.book(event.id, name="Bob Dylan", email=f"bob{tag}@example.com")
    (ada_pass,), (bob_pass,) = site_service.passes(ada), site_service.passes(bob)
    other = site_service.create_event(name=f"Other night {tag}", capacity=5, organizer="acme")
    (other_pass,) = site_service.passes(site_service.book(other.id, name="Cy",
                                                          email=f"cy{tag}@example.com"))
    username = f"door{tag}"
    live_site.manage("shell", "-c", MAKE_CHECKIN_USER.format(username=username,
                                                             password=PASSWORD))

    # --- online, the camera filming Ada's pass ---------------------------------------
    context, page = phone(camera(ada_pass.code), live_site)
    page.goto(live_site.url + "/checkin/")  # sends to the sign-in page first
    page.get_by_label("Username").fill(username)
    page.get_by_label("Password").fill(PASSWORD)
    page.get_by_role("button", name="Log in").click()
    screenshot(page, "checkin-0-lists")
    page.get_by_role("link", name="Main door").click()
    expect(page.locator("#network")).to_have_text("Online")
    expect(page.locator("#counts")).to_contain_text("admitted 0 of 2")
    page.get_by_text("This scanner:").click()
    page.get_by_label("Gate name (shown when a pass is scanned twice)").fill("North gate")
    screenshot(page, "checkin-1-scanner")
    assert page.evaluate("document.documentElement.scrollWidth") <= PHONE["width"]

    page.get_by_role("button", name="Scan with camera").click()
    answer_shows(page, "admitted", "Admitted", "Ada Lovelace")
    screenshot(page, "checkin-2-admitted")
    page.get_by_role("button", name="Next scan").click()
    # The camera still films Ada's pass: after a short pause it is read again.
    answer_shows(page, "already_admitted", "Already in", "North gate")
    screenshot(page, "checkin-3-already-admitted")
    page.get_by_role("button", name="Next scan").click()
    page.get_by_role("button", name="Stop camera").click()
    assert site_service.checkin_list(door.id).admitted == 1
    page.get_by_label("Find a name").fill("lovelace")  # a guest without their pass
    page.get_by_role("button", name="Find").click()
    expect(page.locator("#people")).to_contain_text("Ada Lovelace")
    expect(page.get_by_role("button", name="Admission (in since")).to_be_visible()
    screenshot(page, "checkin-3b-name-search")
    state = context.storage_state()  # the signed-in session and this phone's memory
    context.close()

    # --- offline, the camera filming Bob's pass --------------------------------------
    context, page = phone(camera(bob_pass.code), live_site, storage_state=state)
    page.goto(live_site.url + f"/checkin/{door.id}/")
    # A scan this phone kept for more than two weeks (the server no longer takes its
    # time): reported when the page sends its queue, and taken out of it.
    page.evaluate(STALE_SCAN, {"list": door.id, "code": ada_pass.code})
    page.reload()
    expect(page.locator("#synced")).to_contain_text("1 offline scan sent. Reported: A scan made")
    expect(page.locator("#synced")).to_contain_text("not accepted: The scan's time is too far")
    expect(page.locator("#queue")).to_be_hidden()
    assert page.evaluate(WORKER_READY)
    context.set_offline(True)
    expect(page.locator("#network")).to_have_text("Offline")
    page.get_by_role("button", name="Scan with camera").click()
    answer_shows(page, "admitted", "Admitted", "offline")
    screenshot(page, "checkin-4-admitted-offline")
    page.get_by_role("button", name="Next scan").click()
    # Still filming Bob's pass: this phone remembers letting it in.
    answer_shows(page, "already_admitted", "already admitted on this phone", "North gate")
    page.get_by_role("button", name="Next scan").click()
    page.get_by_role("button", name="Stop camera").click()
    expect(page.locator("#queue")).to_have_text("1 scan waiting to be sent")
    page.reload()  # the phone closed the tab: the page opens again without a connection
    expect(page.locator("#network")).to_have_text("Offline")
    expect(page.locator("#queue")).to_have_text("1 scan waiting to be sent")
    expect(page.locator("#counts")).to_contain_text("admitted 1 of 2 (at ")  # last seen
    screenshot(page, "checkin-5-offline-queue")
    assert site_service.checkin_list(door.id).admitted == 1  # nothing reached the server

    signed, _, signature = bob_pass.code.rpartition(".")
    forged = signed + "." + ("A" if signature[0] != "A" else "B") + signature[1:]
    page.get_by_label("Type a code").fill(forged)
    page.get_by_role("button", name="Check").click()
    answer_shows(page, "unknown_code", "Not valid", "signature")
    screenshot(page, "checkin-6-forged-offline")
    page.get_by_role("button", name="Next scan").click()
    altered = "BP1." + base64.urlsafe_b64encode(
        f"{event.id}.{bob_pass.pass_id}.vip".encode()).decode().rstrip("=") + "." + signature
    page.get_by_label("Type a code").fill(altered)  # its claims changed, the signature kept
    page.get_by_role("button", name="Check").click()
    answer_shows(page, "unknown_code", "signature")
    page.get_by_role("button", name="Next scan").click()
    page.get_by_label("Type a code").fill(other_pass.code)  # real, of another event
    page.get_by_role("button", name="Check").click()
    answer_shows(page, "unknown_code", "another event")
    page.get_by_role("button", name="Next scan").click()
    expect(page.locator("#queue")).to_have_text("1 scan waiting to be sent")

    # --- back online: the queue uploads ----------------------------------------------
    context.set_offline(False)
    expect(page.locator("#synced")).to_have_text("1 offline scan sent.")
    expect(page.locator("#queue")).to_be_hidden()
    expect(page.locator("#counts")).to_contain_text("admitted 2 of 2")
    screenshot(page, "checkin-7-queue-uploaded")
    counted = site_service.checkin_list(door.id)
    assert (counted.admitted, counted.inside, counted.conflicts) == (2, 2, 0)
    again = site_service.scan(door.id, bob_pass.code, nonce=uuid.uuid4().hex)
    assert again.status == "already_admitted" and again.first_gate == "North gate"
    context.close()


BIG_QUEUE = """({list, codes, count}) => {
  const start = Date.now() - 60 * 60 * 1000;
  const queue = [];
  for (let i = 0; i < count; i++) {
    queue.push({code: codes[i % codes.length], direction: "entry", nonce: crypto.randomUUID(),
                scanned_at: new Date(start + i * 1000).toISOString(), gate: "North gate"});
  }
  const text = JSON.stringify(queue);
  localStorage.setItem(`checkin:${list}:queue`, text);
  return new TextEncoder().encode(JSON.stringify({scans: queue})).length;
}"""


def test_browser__scanner__a_queue_over_the_body_limit_uploads_whole_with_its_conflicts(
        live_site, site_service, browser, screenshot):
    """400 queued scans (more bytes than the site takes in one request) upload in parts;
    every scan's answer counts, the 397 double admissions are reported as conflicts."""
    tag = uuid.uuid4().hex[:6]
    event = site_service.create_event(name=f"Big queue {tag}", capacity=10,
                                      starts_at="2031-09-01T18:00:00+00:00", organizer="acme")
    door = site_service.create_checkin_list(event.id, name="Big door")
    codes = [site_service.passes(site_service.book(
        event.id, name=f"Guest {n}", email=f"g{n}{tag}@example.com"))[0].code for n in range(3)]
    username = f"bigq{tag}"
    live_site.manage("shell", "-c", MAKE_CHECKIN_USER.format(username=username,
                                                             password=PASSWORD))
    context = browser.new_context(viewport=PHONE)
    context.set_default_timeout(60_000)
    page = context.new_page()
    page.goto(live_site.url + "/checkin/")
    page.get_by_label("Username").fill(username)
    page.get_by_label("Password").fill(PASSWORD)
    page.get_by_role("button", name="Log in").click()
    page.get_by_role("link", name="Big door").click()
    size = page.evaluate(BIG_QUEUE, {"list": door.id, "codes": codes, "count": 400})
    assert size > 131072  # more than one request may carry (REQUEST_BODY_MAX_BYTES)
    page.reload()
    expect(page.locator("#synced")).to_contain_text("400 offline scans sent. Reported:",
                                                    timeout=90_000)
    expect(page.locator("#synced")).to_contain_text("already admitted")
    expect(page.locator("#queue")).to_be_hidden()
    screenshot(page, "checkin-8-big-queue-uploaded")
    counted = site_service.checkin_list(door.id)
    assert (counted.admitted, counted.conflicts) == (3, 397)
    assert len(site_service.scan_log(door.id)) == 400
    context.close()


def test_browser__scanner__short_codes_and_booking_references_online_and_offline(
        live_site, site_service, browser, screenshot):
    """The short code under a pass's QR admits that pass; a booking reference of a
    two-pass order offers its passes to pick; offline, a short code is found in the
    roster the page keeps (a made-up one is refused)."""
    tag = uuid.uuid4().hex[:6]
    event = site_service.create_event(name=f"Short codes {tag}", capacity=10,
                                      starts_at="2031-09-01T18:00:00+00:00", organizer="acme",
                                      max_per_order=3, time_zone="Asia/Tokyo")
    door = site_service.create_checkin_list(event.id, name="Short door")
    ada = site_service.book(event.id, name="Ada Short", email=f"ada{tag}@example.com")
    duo = site_service.book(event.id, name="Duo Pair", email=f"duo{tag}@example.com",
                            tickets={"admission": 2})
    eve = site_service.book(event.id, name="Eve Late", email=f"eve{tag}@example.com")
    (ada_pass,), duo_passes = site_service.passes(ada), site_service.passes(duo)
    (eve_pass,) = site_service.passes(eve)
    username = f"short{tag}"
    live_site.manage("shell", "-c", MAKE_CHECKIN_USER.format(username=username,
                                                             password=PASSWORD))
    context = browser.new_context(viewport=PHONE)
    context.set_default_timeout(15_000)
    page = context.new_page()
    page.goto(live_site.url + "/checkin/")
    page.get_by_label("Username").fill(username)
    page.get_by_label("Password").fill(PASSWORD)
    page.get_by_role("button", name="Log in").click()
    page.get_by_role("link", name="Short door").click()
    expect(page.locator("#network")).to_have_text("Online")

    page.get_by_label("Type a code").fill(ada_pass.short_code.lower())
    page.get_by_role("button", name="Check").click()
    answer_shows(page, "admitted", "Admitted", "Ada Short")
    page.get_by_role("button", name="Next scan").click()
    page.get_by_label("Type a code").fill(ada_pass.short_code)
    page.get_by_role("button", name="Check").click()
    # the first admission's time in the event's zone, the zone named (not the phone's)
    answer_shows(page, "already_admitted", "GMT+9")
    screenshot(page, "checkin-9a-already-in-event-zone")
    page.get_by_role("button", name="Next scan").click()

    page.get_by_label("Type a code").fill(duo.reference)
    page.get_by_role("button", name="Check").click()
    expect(page.locator("#people")).to_contain_text("choose the one to scan")
    screenshot(page, "checkin-9-choose-a-pass")
    page.get_by_role("button", name=f"Admission · {duo_passes[1].short_code}").click()
    answer_shows(page, "admitted", "Admitted", "Duo Pair")
    page.get_by_role("button", name="Next scan").click()
    assert site_service.checkin_list(door.id).admitted == 2

    context.set_offline(True)
    expect(page.locator("#network")).to_have_text("Offline")
    page.get_by_label("Type a code").fill(eve_pass.short_code)
    page.get_by_role("button", name="Check").click()
    answer_shows(page, "admitted", "offline", "Admission")
    page.get_by_role("button", name="Next scan").click()
    made_up = ("0" if eve.reference[0] != "0" else "1") + eve.reference[1:] + "-1"
    page.get_by_label("Type a code").fill(made_up)
    page.get_by_role("button", name="Check").click()
    answer_shows(page, "unknown_code", "No pass with this code")
    screenshot(page, "checkin-10-short-code-offline-unknown")
    page.get_by_role("button", name="Next scan").click()
    context.set_offline(False)
    expect(page.locator("#synced")).to_have_text("1 offline scan sent.")
    assert site_service.checkin_list(door.id).admitted == 3
    context.close()
