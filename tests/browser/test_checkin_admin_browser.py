"""The admin's check-in pages in a real (headless Chromium) browser: an event without a
list offers "Create the entrance list" in one click; the lists page and a list's scan log
fit a 390 px phone (their tables scroll inside their own box, the page never sideways)."""
import uuid

from playwright.sync_api import expect

from tests.browser.conftest import PHONE_WIDTH, WIDTH_TOLERANCE, page_width

MAKE_EDITOR = """
from django.contrib.auth.models import User
from booking.organizers.models import Organizer, Team
user = User.objects.create_user({username!r}, password={password!r}, is_staff=True)
organizer = Organizer.objects.create(slug={slug!r}, name="Door editors")
Team.objects.create(organizer=organizer, name="Editors", role="editor").members.add(user)
"""


def test_browser__admin_checkin__entrance_list_in_one_click_and_fits_a_phone(
        live_site, site_service, page, screenshot):
    tag = uuid.uuid4().hex[:6]
    username, password = f"doorboss{tag}", uuid.uuid4().hex
    slug = f"door{tag}"  # an organizer of this test's own: its editor sees its events only
    live_site.manage("shell", "-c", MAKE_EDITOR.format(username=username, password=password,
                                                       slug=slug))
    event = site_service.create_event(
        name=f"Door admin night {tag}", capacity=10, organizer=slug,
        starts_at="2031-09-01T18:00:00+00:00", quotas={"floor": 5},
        ticket_types={"standing-floor-access": ["floor"], "seated-balcony": []},
        max_per_order=2)
    ada = site_service.book(event.id, name="Ada Lovelace", email=f"ada{tag}@example.com",
                            tickets={"seated-balcony": 1})

    page.goto(live_site.url + "/admin/")
    page.get_by_label("Username").fill(username)
    page.get_by_label("Password").fill(password)
    page.get_by_role("button", name="Log in").click()
    page.goto(live_site.url + "/checkin/")  # the scanner's start page links the editor there
    expect(page.locator(".event-card", has_text=event.name)).to_contain_text(
        "No check-in list yet")
    screenshot(page, "checkin-pick-no-list")
    page.get_by_role("link", name="Create the entrance list").click()
    assert page.url.endswith(f"/admin/booking/dynamoevent/{event.id}/checkin/")
    expect(page.locator("#result_list")).to_contain_text("No check-in list yet")
    screenshot(page, "admin-checkin-0-no-list")
    page.get_by_role("button", name="Create the entrance list").click()
    expect(page.locator(".messagelist")).to_contain_text("Added the check-in list 'Entrance'")
    (entrance,) = site_service.checkin_lists(event.id)
    assert (entrance.name, entrance.ticket_types, entrance.allow_reentry,
            entrance.occupancy_limit) == ("Entrance", None, False, None)
    expect(page.get_by_role("button", name="Create the entrance list")).to_have_count(0)
    site_service.create_checkin_list(event.id, name="Balcony stairs with a long name",
                                     ticket_types=["seated-balcony"], allow_reentry=True,
                                     occupancy_limit=40)
    (ada_pass,) = site_service.passes(ada)
    site_service.scan(entrance.id, ada_pass.code, gate="North gate by the river",
                      nonce=uuid.uuid4().hex)
    page.reload()
    expect(page.locator("#result_list")).to_contain_text("Balcony stairs with a long name")
    page.set_viewport_size({"width": PHONE_WIDTH, "height": 800})
    assert page_width(page) <= PHONE_WIDTH + WIDTH_TOLERANCE, "no sideways scrolling"
    screenshot(page, "admin-checkin-1-lists")

    page.get_by_role("link", name="Entrance").click()
    expect(page.locator("#result_list")).to_contain_text("Ada Lovelace")
    screenshot(page, "admin-checkin-2-scan-log")
