"""The pages that say where seats are, in a real (headless Chromium) browser: past events
below the upcoming ones, a closed event, a cancellation whose seat went to the waiting
list, and a streams line longer than the seats."""
import uuid
from datetime import datetime, timedelta, timezone

from playwright.sync_api import expect

from booking.links import CANCEL_SALT, registration_token


def test_browser__seat_states__say_one_thing_at_a_time(live_site, site_service, page,
                                                       screenshot):
    tag = uuid.uuid4().hex[:6]
    site_service.create_event(name=f"Spring meetup 2020 {tag}", capacity=20,
                              starts_at="2020-03-01 18:00")
    site_service.create_event(name=f"Started a moment ago {tag}", capacity=20,
                              starts_at=datetime.now(timezone.utc) - timedelta(minutes=5))
    closed = site_service.create_event(name=f"Closed for now {tag}", capacity=0,
                                       starts_at="2031-07-01T18:00:00+00:00")
    full = site_service.create_event(name=f"Full house {tag}", capacity=1,
                                     starts_at="2031-07-02T18:00:00+00:00")
    ada = site_service.book(full.id, name="Ada", email=f"ada{tag}@example.com")
    site_service.join_waiting_list(full.id, name="Bob", email=f"bob{tag}@example.com")
    line = site_service.create_event(name=f"Streams drop {tag}", capacity=1, strategy="streams",
                                     starts_at="2031-07-03T18:00:00+00:00")
    for n in range(3):
        site_service.book(line.id, name=f"P{n}", email=f"p{n}{tag}@example.com")

    page.goto(live_site.url + "/")
    expect(page.get_by_role("heading", name="Started and past events")).to_be_visible()
    assert "3 earlier requests are waiting for a decision" in page.content()  # streams card
    screenshot(page, "pages-1-upcoming-and-past")

    page.goto(live_site.url + f"/events/{closed.id}/")
    expect(page.get_by_text("no seats are offered")).to_be_visible()
    screenshot(page, "pages-2-closed-event")

    page.goto(live_site.url + f"/cancel/{registration_token(ada, salt=CANCEL_SALT)}/")
    page.get_by_role("button", name="Yes, cancel my booking").click()
    expect(page.get_by_role("heading", name="Your booking is cancelled")).to_be_visible()
    page.reload()  # the freed seat is offered to the line right after the answer
    expect(page.locator("#seats-left")).to_contain_text("waiting list")
    expect(page.get_by_role("link", name="Changed your mind? Join the waiting list")).to_be_visible()
    screenshot(page, "pages-3-cancelled-seat-to-the-line")

    page.goto(live_site.url + f"/events/{line.id}/")
    expect(page.get_by_text("gets a seat only if one is left when its turn comes")).to_be_visible()
    screenshot(page, "pages-4-streams-line")
