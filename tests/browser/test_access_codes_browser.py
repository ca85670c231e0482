"""Access codes in a real (headless Chromium) browser, keyboard only: a ``?code=...``
link fills the code in and shows the ticket type only it unlocks; a wrong code is
refused at its field; the right one books. At 1280 and 390 px (docs/orders.md)."""
import re
import uuid

import pytest

from playwright.sync_api import expect


def summit(site_service):
    event = site_service.create_event(
        name=f"Summit {uuid.uuid4().hex[:6]}", capacity=20, strategy="lock_table",
        starts_at="2031-06-01T09:00:00+00:00", ticket_types={"day": [], "speaker": []},
        code_only_types=["speaker"], max_per_order=2)
    site_service.create_access_codes(event.id, codes=["SPEAKER-7Q2K"], max_uses=5,
                                     ticket_types=["speaker"])
    return event


def test_browser__code_link__code_filled_type_unlocked_wrong_code_then_booked(
        live_site, site_service, page, screenshot):
    event = summit(site_service)
    email = f"ada{uuid.uuid4().hex[:6]}@example.com"

    page.goto(live_site.url + f"/events/{event.id}/")
    expect(page.get_by_text("Have an access code?")).to_be_visible()
    expect(page.get_by_label("Speaker")).to_have_count(0)  # code-only: hidden without one
    screenshot(page, "codes-1-form-without-code")

    page.goto(live_site.url + f"/events/{event.id}/?code=speaker-7q2k")
    expect(page.get_by_label("Access code")).to_have_value("speaker-7q2k")
    page.get_by_label("Your name").fill("Ada Lovelace")
    page.get_by_label("E-mail").fill(email)
    page.get_by_label("Day").fill("0")
    page.get_by_label("Speaker").fill("1")
    page.get_by_label("Access code").fill("WRONG-CODE")
    screenshot(page, "codes-2-form-with-code")
    page.get_by_label("Access code").press("Enter")

    expect(page.get_by_role("alert")).to_contain_text("not valid for this event")
    expect(page.get_by_label("Access code")).to_have_value("WRONG-CODE")
    screenshot(page, "codes-3-wrong-code")
    assert site_service.registrations(event.id) == []

    page.get_by_label("Access code").fill("speaker-7q2k")
    page.get_by_label("Access code").press("Enter")
    page.wait_for_url(re.compile(r"/booked/"))
    expect(page.get_by_role("heading", name="You're booked")).to_be_visible()
    screenshot(page, "codes-4-booked")
    booked = site_service.find_registration(event.id, email=email)
    assert booked.access_code == "SPEAKER-7Q2K" and booked.tickets == {"speaker": 1}


# --- the fourth round: a ?code= link checked within the wrong-code limit (F1) -------------
@pytest.fixture(scope="module")
def limited_site(live_site, tmp_path_factory):
    """The live site's tables, served by a second server whose wrong-code limit is 2 per
    10 minutes: spending it there leaves the session's site's own limit alone."""
    from tests.browser.conftest import LiveSite
    site = LiveSite({**live_site.env, "BOOKING_ACCESS_CODE_RATE": "2/10m"},
                    tmp_path_factory.mktemp("limited_site"))
    site.start()
    yield site
    site.stop()


def test_browser__wrong_code_links_past_the_limit__right_code_not_checked_notice_shown(
        limited_site, site_service, page, screenshot):
    event = summit(site_service)
    for n in range(2):
        page.goto(limited_site.url + f"/events/{event.id}/?code=GUESS-{n:04d}")
        expect(page.get_by_label("Speaker")).to_have_count(0)

    response = page.goto(limited_site.url + f"/events/{event.id}/?code=speaker-7q2k")

    assert response.status == 429
    expect(page.get_by_role("alert")).to_contain_text("Too many wrong access codes")
    expect(page.get_by_label("Access code")).to_have_value("speaker-7q2k")
    expect(page.get_by_label("Speaker")).to_have_count(0)
    screenshot(page, "codes-5-link-past-the-limit")
