"""A request for a `streams` event in a real browser: received, number in line, the page
refreshing itself until the decision (the worker's stream decider), then the answer."""
import re
import uuid

from playwright.sync_api import expect


def test_browser__streams_request__number_in_line_then_decided_by_the_worker(
        live_site, site_service, page, screenshot):
    event = site_service.create_event(name=f"Queue night {uuid.uuid4().hex[:6]}", capacity=1,
                                      strategy="streams", starts_at="2031-06-01T19:00:00+00:00")
    site_service.book(event.id, name="Early Bird", email="early@example.com")
    email = f"ada{uuid.uuid4().hex[:6]}@example.com"

    page.goto(live_site.url + f"/events/{event.id}/")
    assert "1 earlier request is waiting for a decision" in page.locator("#seats-left").inner_text()
    page.get_by_label("Your name").fill("Ada Lovelace")
    page.get_by_label("E-mail").fill(email)
    page.get_by_role("button", name="Book my seat").click()

    page.wait_for_url(re.compile(r"/booked/"))
    expect(page.get_by_role("heading", name="Request received")).to_be_visible()
    assert page.locator("#place-in-line").inner_text() == "number 2"
    screenshot(page, "14-streams-received")

    live_site.manage("booking_worker", "--once", "--min-age", "0")  # decides, then mails

    # No reload from the test: the page's Refresh header brings the decision.
    expect(page.get_by_role("heading", name="No seat this time")).to_be_visible(timeout=15000)
    screenshot(page, "15-streams-no-seat")
    assert len(live_site.mail_containing(email)) == 1
    assert site_service.find_registration(event.id, email="early@example.com").is_confirmed
