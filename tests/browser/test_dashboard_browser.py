"""The admin's home shows an organizer's upcoming events with a chart of bookings over time
and its cancellations (headless Chromium, 1280 and 390 px)."""
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
