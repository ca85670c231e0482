"""A person signs up and cancels in a real (headless Chromium) browser, keyboard only."""
import re
import uuid

from playwright.sync_api import expect


def seats_left(page) -> str:
    return page.locator("#seats-left").inner_text().strip()


def test_browser__signup_then_cancel__seat_taken_and_returned(
        live_site, site_service, page, screenshot):
    event = site_service.create_event(name=f"Browser night {uuid.uuid4().hex[:6]}", capacity=3,
                                      starts_at="2031-06-01T19:00:00+00:00")
    full = site_service.create_event(name="Sold-out workshop", capacity=1)
    site_service.book(full.id, name="Early Bird", email="early@example.com")
    email = f"grace{uuid.uuid4().hex[:6]}@example.com"

    page.goto(live_site.url + "/")
    card = page.locator(".event-card", has_text=event.name)
    assert "3 of 3 seats left" in card.inner_text()
    assert "Full" in page.locator(".event-card", has_text="Sold-out workshop").inner_text()
    assert page.evaluate("getComputedStyle(document.body).fontFamily")  # the CSS loaded
    screenshot(page, "1-event-list")

    card.get_by_role("link", name=event.name).click()
    assert seats_left(page) == "3 of 3 seats left"
    page.get_by_label("Your name").fill("   ")
    page.get_by_label("E-mail").fill("not-an-email")
    page.get_by_role("button", name="Book my seat").click()
    expect(page.get_by_role("alert")).to_be_visible()  # waits for the new page
    assert page.get_by_label("E-mail").get_attribute("aria-invalid") == "true"
    screenshot(page, "2-form-errors")

    page.get_by_label("Your name").fill("Grace Hopper")
    page.get_by_label("E-mail").fill(email.upper())
    screenshot(page, "3-form-filled")
    page.get_by_label("E-mail").press("Enter")  # submit from the keyboard

    page.wait_for_url(re.compile(r"/booked/"))
    expect(page.get_by_role("heading", name="You're booked")).to_be_visible()  # waits for the new page
    assert email in page.content() and "Add to calendar" in page.content()
    screenshot(page, "4-confirmation")
    mailed = live_site.mail_containing(email)
    assert len(mailed) == 1
    cancel_url = re.search(r"http://\S+/cancel/\S+/", mailed[0]).group(0)
    assert page.get_by_role("link", name="Cancel my booking").get_attribute("href") == cancel_url

    page.goto(cancel_url)
    expect(page.get_by_role("heading", name="Cancel your booking?")).to_be_visible()  # waits for the new page
    screenshot(page, "5-cancel-confirm")
    page.get_by_role("button", name="Yes, cancel my booking").click()

    page.wait_for_url(re.compile(r"/done/(\?seats=\d+)?$"))
    assert seats_left(page) == "3"
    screenshot(page, "6-cancelled")
    assert site_service.find_registration(event.id, email=email) is None

    page.set_viewport_size({"width": 375, "height": 700})
    page.goto(live_site.url + f"/events/{event.id}/")
    width = page.evaluate("document.documentElement.scrollWidth")
    assert width <= 375, "no sideways scrolling on a phone"
    screenshot(page, "7-phone-event")


def test_browser__full_already_registered_resend_and_other_pages(
        live_site, site_service, page, screenshot):
    event = site_service.create_event(
        name=f"Wine tasting {uuid.uuid4().hex[:6]}", capacity=2, time_zone="Europe/Berlin",
        starts_at="2031-12-12 19:30", ends_at="2031-12-12 22:00",
        venue="Weinbar, Kastanienallee 1, 10435 Berlin",
        description="Six wines from the Mosel, with bread and cheese.\nBring a friend.")
    email = f"ada{uuid.uuid4().hex[:6]}@example.com"

    def sign_up(person_email):
        page.goto(live_site.url + f"/events/{event.id}/")
        page.get_by_label("Your name").fill("Ada Lovelace")
        page.get_by_label("E-mail").fill(person_email)
        page.get_by_role("button", name="Book my seat").click()

    sign_up(email)
    expect(page.get_by_role("heading", name="You're booked!")).to_be_visible()
    page.goto(live_site.url + f"/events/{event.id}/")
    expect(page.locator(".facts")).to_contain_text("19:30–22:00 CET (Europe/Berlin)")
    screenshot(page, "8-event-with-details")

    sign_up(email.upper())
    expect(page.get_by_role("heading", name="You're already registered")).to_be_visible()
    screenshot(page, "9-already-registered")
    page.get_by_role("button", name="E-mail my confirmation again").click()
    expect(page.get_by_role("heading", name="Check your inbox")).to_be_visible()
    screenshot(page, "10-confirmation-resent")
    assert len(live_site.mail_containing(email, count=2)) == 2

    page.goto(live_site.url + f"/events/{event.id}/")
    page.get_by_label("Your name").fill("Bo")
    page.get_by_label("E-mail").fill(f"late{email}")
    site_service.book(event.id, name="Cy", email=f"cy{email}")  # the last seat goes first
    page.get_by_role("button", name="Book my seat").click()
    expect(page.get_by_text("the last seat was just taken")).to_be_visible()
    assert page.get_by_role("button", name="Book my seat").count() == 0
    screenshot(page, "11-just-missed-full")

    mailed = live_site.mail_containing(email)[0]
    cancel_url = re.search(r"http://\S+/cancel/\S+/", mailed).group(0)
    page.goto(cancel_url)
    page.get_by_role("button", name="Yes, cancel my booking").click()
    page.wait_for_url(re.compile(r"/done/(\?seats=\d+)?$"))
    page.goto(cancel_url)
    expect(page.get_by_role("heading", name="Already cancelled")).to_be_visible()
    screenshot(page, "12-cancel-already")
    page.goto(live_site.url + "/events/" + "0" * 32 + "/")
    screenshot(page, "13-not-found")
