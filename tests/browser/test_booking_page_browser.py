"""An attendee opens their booking's page from the confirmation e-mail and cancels one seat
of three (headless Chromium, 1280 and 390 px)."""
import re
import uuid

from playwright.sync_api import expect


def test_browser__booking_page__cancels_one_seat_of_three_nothing_preselected(
        live_site, site_service, page, screenshot):
    event = site_service.create_event(
        name=f"DevConf {uuid.uuid4().hex[:6]}", capacity=20, strategy="lock_table",
        quotas={"workshop-a": 5}, max_per_order=4,
        ticket_types={"conference": [], "workshop-a": ["workshop-a"]})
    email = f"ada-{uuid.uuid4().hex[:8]}@example.com"  # the site's mail is shared by its tests
    page.goto(live_site.url + f"/events/{event.id}/")
    page.get_by_label("Name").fill("Ada Lovelace")
    page.get_by_label("E-mail").fill(email)
    page.get_by_label("Conference").fill("2")
    page.get_by_label("Workshop A").fill("1")
    page.get_by_role("button", name=re.compile("Book")).click()
    expect(page.get_by_text("You're booked!")).to_be_visible()
    (sent,) = live_site.mail_containing(email)
    link = re.search(r"(http://\S+/bookings/\S+/)", sent).group(1)
    reference = re.search(r"Booking reference: (\S+)", sent).group(1)

    page.goto(link)
    expect(page.locator(".booking-reference")).to_have_text(reference)
    expect(page.locator("dd.tickets")).to_contain_text("2 × Conference, 1 × Workshop A (3 seats)")
    boxes = page.get_by_role("checkbox")
    expect(boxes).to_have_count(3)
    for n in range(3):
        expect(boxes.nth(n)).not_to_be_checked()  # nothing chosen
    screenshot(page, "booking-page-1-opened")
    page.get_by_label("Conference, pass 1 of 3").check()
    page.get_by_role("button", name="Cancel these seats").click()
    expect(page.get_by_role("heading", name="That seat is cancelled")).to_be_visible()
    expect(page.locator("dd.tickets")).to_contain_text("1 × Conference, 1 × Workshop A (2 seats)")
    assert page.locator("form").count() == 0  # a plain confirmation, not another form
    screenshot(page, "booking-page-2-one-seat-cancelled")
    kept = site_service.find_registration(event.id, email=email)
    assert kept.tickets == {"conference": 1, "workshop-a": 1}
