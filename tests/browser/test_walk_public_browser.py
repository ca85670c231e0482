"""A first attendee's walk in a real (headless Chromium) browser, at 1280 and 390 px: a
?code= link says what it unlocks and seats held for codes are said apart; the form tells
every error at once, shows the pass blocks of the seats chosen and the description apart
from the seats left; the booking's page from the e-mail shows the answers, and cancels
exactly the pass ticked (Pavel's), then the rest with a count-correct text."""
import re
import uuid

from playwright.sync_api import expect


def test_browser__walk__code_errors_passes_answers_and_choosing_whose_pass(
        live_site, site_service, page, screenshot):
    event = site_service.create_event(
        name=f"Talks {uuid.uuid4().hex[:6]}", capacity=10, strategy="lock_table",
        starts_at="2031-06-01T09:00:00+00:00", max_per_order=4,
        ticket_types={"conference": [], "speaker": []}, code_only_types=["speaker"],
        ticket_descriptions={"conference": "Talks all day"})
    site_service.set_questions(event.id, [
        {"id": "company", "label": "Company", "kind": "text", "required": True},
        {"id": "name_on_pass", "label": "Name on the pass", "kind": "text",
         "per_pass": True, "required": True}], expected_version=0)
    site_service.create_access_codes(event.id, codes=["SPEAKER-7Q2K"], max_uses=2,
                                     ticket_types=["speaker"], reserved_seats=2)
    email = f"olga{uuid.uuid4().hex[:6]}@example.com"

    page.goto(live_site.url + f"/events/{event.id}/?code=speaker-7q2k")
    expect(page.locator("#seats-left")).to_have_text(
        "8 seats left, 2 more held for access codes or waiting-list offers")
    expect(page.get_by_role("status").filter(has_text="applied")).to_contain_text(
        "Code SPEAKER-7Q2K applied: it unlocks Speaker tickets")
    expect(page.locator(".ticket-description").first).to_have_text("Talks all day.")
    screenshot(page, "walk-1-code-applied")

    page.goto(live_site.url + f"/events/{event.id}/")
    page.get_by_label("Conference").fill("5")  # more than an order holds
    expect(page.locator("[data-pass='4']")).to_be_visible()
    page.get_by_label("Access code").fill("NOPE-NOPE")
    page.get_by_role("button", name="Book my tickets").click()
    summary = page.get_by_role("alert")
    for error in ("Your name: Enter your name.", "E-mail: Enter your e-mail address.",
                  "Company: This question is required.",
                  "Access code: This access code is not valid for this event."):
        expect(summary).to_contain_text(error)
    expect(summary).to_contain_text("4")  # the quantity's own limit
    screenshot(page, "walk-2-every-error-at-once")

    page.get_by_label("Your name").fill("Olga Order")
    page.get_by_label("E-mail").fill(email)
    page.get_by_label("Conference").fill("3")
    page.get_by_label("Access code").fill("")
    page.get_by_label("Company").fill("Acme")
    expect(page.locator("[data-pass='4']")).to_be_hidden()  # only the seats chosen
    expect(page.locator("[data-pass='3'] legend")).to_have_text("Pass 3: Conference")
    for n, name in enumerate(["Olga", "Pavel", "Wanda"]):
        page.locator(f"#id_p{n}_name_on_pass").fill(name)
    screenshot(page, "walk-3-three-passes")
    page.get_by_role("button", name="Book my tickets").click()
    page.wait_for_url(re.compile(r"/booked/"))

    (sent,) = live_site.mail_containing(email)
    link = re.search(r"(http://\S+/bookings/\S+/)", sent).group(1)
    page.goto(link)
    expect(page.get_by_role("heading", name="Your answers")).to_be_visible()
    expect(page.get_by_role("link", name="Change my answers")).to_be_visible()
    expect(page.get_by_label("Conference, pass 2 of 3: Pavel")).not_to_be_checked()
    screenshot(page, "walk-4-booking-page")
    page.get_by_label("Conference, pass 2 of 3: Pavel").check()
    page.get_by_role("button", name="Cancel these seats").click()
    expect(page.get_by_role("heading", name="That seat is cancelled")).to_be_visible()
    kept = site_service.find_registration(event.id, email=email)
    assert [p.status for p in site_service.passes(kept)] == ["valid", "cancelled", "valid"]
    screenshot(page, "walk-5-pavels-pass-cancelled")

    page.get_by_role("link", name="Your booking").click()
    expect(page.locator(".pass-card")).to_have_count(2)  # Pavel's is gone from the page
    page.get_by_label("Conference, pass 1 of 3: Olga").check()
    page.get_by_label("Conference, pass 3 of 3: Wanda").check()
    page.get_by_role("button", name="Cancel these seats").click()
    expect(page.get_by_role("heading", name="Your booking is cancelled")).to_be_visible()
    expect(page.locator(".panel")).to_contain_text("Your 2 seats at")
    screenshot(page, "walk-6-the-rest-cancelled")
    assert site_service.find_registration(event.id, email=email) is None
