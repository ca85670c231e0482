"""The admin's home shows an organizer's upcoming events with a chart of bookings over time
and its cancellations (headless Chromium, 1280 and 390 px)."""
import re
import uuid
from datetime import datetime, timedelta, timezone

from playwright.sync_api import expect

from tests.browser.test_editor_browser import sign_in


def test_browser__dashboard__chart_for_an_event_with_bookings(live_site, site_service, page,
                                                              screenshot):
    name = f"DevConf {uuid.uuid4().hex[:6]}"
    event = site_service.create_event(
        name=name, capacity=120, strategy="lock_table", time_zone="Europe/Berlin",
        starts_at=(datetime.now(timezone.utc) + timedelta(days=20)).isoformat(),
        quotas={"workshop-a": 30}, max_per_order=4,
        ticket_types={"conference": [], "workshop-a": ["workshop-a"]})
    site_service.book(event.id, name="Ada", email="ada@example.com", tickets={"conference": 3})
    site_service.book(event.id, name="Bo", email="bo@example.com", tickets={"workshop-a": 1})
    site_service.book(event.id, name="Cy", email="cy@example.com", tickets={"conference": 2})
    site_service.cancel(event.id, email="cy@example.com")  # a whole order
    site_service.book(event.id, name="Di", email="di@example.com", tickets={"conference": 2})
    site_service.cancel(event.id, email="di@example.com", tickets={"conference": 1})  # a part
    sign_in(live_site, page)
    panel = page.locator(f"#event-{event.id}")
    expect(panel).to_contain_text("3 orders, 5 seats")
    expect(panel.locator(".dashboard-cancellations")).to_contain_text(
        "Cancelled: 1 order, 3 seats.")
    chart = panel.locator("svg[role=img]")
    expect(chart).to_be_visible()
    assert "Conference 4, Workshop A 1" in chart.locator("desc").text_content()
    panel.get_by_text("The numbers", exact=True).click()
    expect(panel.locator("details table")).to_contain_text("4")
    screenshot(page, "dashboard-1-home")


MAKE_STAFF = """
from django.contrib.auth.models import User
User.objects.create_user({username!r}, password={password!r}, is_staff=True)
"""


def sign_in_organizer(live_site, page, slug: str) -> None:
    """A staff user of their own organizer (made as the README says: create_organizer), so
    the dashboard shows only this test's events, whatever the session's other tests made."""
    username, password = f"ann{uuid.uuid4().hex[:6]}", uuid.uuid4().hex
    live_site.manage("shell", "-c", MAKE_STAFF.format(username=username, password=password))
    live_site.manage("create_organizer", slug, "--member", f"{username}:admin")
    page.goto(live_site.url + "/admin/")
    page.get_by_label("Username").fill(username)
    page.get_by_label("Password").fill(password)
    page.get_by_role("button", name="Log in").click()


def test_browser__dashboard__every_upcoming_event_in_pages_steps_and_one_note(
        live_site, site_service, page, screenshot):
    """Twelve upcoming events: none drops off (10, then 2 on the next page); the chart of two
    bookings seconds apart is two steps over those seconds, its zone named; "what counts"
    as a cancellation is said once."""
    slug = f"org-{uuid.uuid4().hex[:6]}"
    sign_in_organizer(live_site, page, slug)  # the organizer exists before its events
    soon = datetime.now(timezone.utc) + timedelta(days=2)
    conference = site_service.create_event(
        name="Conference", capacity=50, strategy="lock_table", time_zone="Europe/Berlin",
        starts_at=soon.isoformat(), organizer=slug, quotas={"workshop-a": 10},
        max_per_order=4, ticket_types={"conference": [], "workshop-a": ["workshop-a"]},
        ticket_labels={"conference": "Conference pass", "workshop-a": "Workshop A"})
    site_service.book(conference.id, name="Ada", email="ada@example.com",
                      tickets={"conference": 2})
    site_service.book(conference.id, name="Bo", email="bo@example.com",
                      tickets={"workshop-a": 1})
    site_service.book(conference.id, name="Cy", email="cy@example.com",
                      tickets={"conference": 1})
    site_service.cancel(conference.id, email="cy@example.com")
    names = [f"Meetup {n:02d}" for n in range(10)]
    for n, name in enumerate(names):
        site_service.create_event(name=name, capacity=20, organizer=slug,
                                  time_zone="America/New_York",
                                  starts_at=(soon + timedelta(days=n + 1)).isoformat())
    full = site_service.create_event(name="Full house", capacity=1, organizer=slug,
                                     starts_at=(soon + timedelta(days=30)).isoformat())
    site_service.book(full.id, name="Di", email="di@example.com")
    page.goto(live_site.url + "/admin/")
    overview = page.locator(".organizer-overview")
    expect(overview).to_contain_text("Events 1–10 of 12, soonest first.")
    panel = page.locator(f"#event-{conference.id}")
    expect(panel).to_contain_text("Cancelled: 1 order, 1 seat.")
    expect(overview.locator(".dashboard-cancellations")).to_have_count(1)  # none: no line
    expect(overview.locator(".dashboard-cancellations-note")).to_have_count(1)
    chart = panel.locator("svg[role=img]")
    expect(chart).to_contain_text("Time in CET (Europe/Berlin)")
    expect(panel.locator("details th").first).to_contain_text("Day (CET (Europe/Berlin))")
    screenshot(page, "dashboard-2-every-event-first-page")
    page.get_by_role("link", name="Later events ›").click()
    expect(overview).to_contain_text("Events 11–12 of 12")
    expect(page.locator(f"#event-{full.id}")).to_contain_text("Full house")
    expect(page.locator(f"#event-{full.id}")).to_contain_text(re.compile(r"All seats\s*1\s*0\s*1"))
    screenshot(page, "dashboard-3-every-event-next-page")
