"""An order in a real (headless Chromium) browser, keyboard only: a quantity per ticket
type, the confirmation showing the order, then its cancellation link cancelling some of
its seats, at 1280 and 390 px (docs/orders.md, docs/web.md)."""
import re
import uuid

from playwright.sync_api import expect


def devconf(site_service, *, workshop: int):
    """An event with a conference ticket and a workshop of ``workshop`` seats."""
    return site_service.create_event(
        name=f"DevConf {uuid.uuid4().hex[:6]}", capacity=20, strategy="lock_table",
        starts_at="2031-06-01T09:00:00+00:00", quotas={"workshop-a": workshop},
        ticket_types={"conference": [], "workshop-a": ["workshop-a"]}, max_per_order=4)


def test_browser__order_of_several_types__booked_whole_and_shown(
        live_site, site_service, page, screenshot):
    event = devconf(site_service, workshop=2)
    email = f"ada{uuid.uuid4().hex[:6]}@example.com"

    page.goto(live_site.url + f"/events/{event.id}/")
    expect(page.get_by_label("Workshop A")).to_be_visible()
    assert "2 seats left." in page.content()
    page.get_by_label("Your name").fill("Ada Lovelace")
    page.get_by_label("E-mail").fill(email)
    page.get_by_label("Conference").fill("2")
    page.get_by_label("Workshop A").fill("1")
    screenshot(page, "orders-1-form")
    page.get_by_label("Workshop A").press("Enter")  # submit from the keyboard

    page.wait_for_url(re.compile(r"/booked/"))
    expect(page.get_by_role("heading", name="You're booked")).to_be_visible()
    assert "2 × Conference, 1 × Workshop A (3 seats)" in page.content()
    screenshot(page, "orders-2-confirmation")
    assert "Tickets: 2 × Conference, 1 × Workshop A" in live_site.mail_containing(email)[0]

    page.get_by_role("link", name="Cancel my booking").click()  # part of the order
    expect(page.get_by_role("heading", name="Cancel seats of your order?")).to_be_visible()
    first = page.get_by_label("Conference, pass 1 of 3")
    expect(first).not_to_be_checked()  # nothing chosen unasked
    first.check()
    screenshot(page, "orders-3-cancel-some-seats")
    page.get_by_role("button", name="Yes, cancel these seats").click()
    expect(page.get_by_role("status")).to_contain_text("That seat is cancelled")
    assert "1 × Conference, 1 × Workshop A (2 seats)" in page.content()
    screenshot(page, "orders-4-part-cancelled")
    page.get_by_role("link", name="Your booking").click()
    page.get_by_role("button", name="Cancel these seats").click()  # nothing ticked
    expect(page.get_by_role("alert")).to_contain_text("Choose at least one pass to cancel.")
    screenshot(page, "orders-5-cancel-refused")
    assert site_service.find_registration(event.id, email=email).tickets == {
        "conference": 1, "workshop-a": 1}

    page.set_viewport_size({"width": 390, "height": 700})
    page.goto(live_site.url + f"/events/{event.id}/")
    assert page.evaluate("document.documentElement.scrollWidth") <= 390, "no sideways scrolling"


def test_browser__order_that_does_not_fit_a_quota__says_which_and_offers_the_line(
        live_site, site_service, page, screenshot):
    event = devconf(site_service, workshop=1)
    site_service.book(event.id, name="Bo", email=f"bo{uuid.uuid4().hex[:6]}@example.com",
                      tickets={"workshop-a": 1})

    page.goto(live_site.url + f"/events/{event.id}/")
    page.get_by_label("Your name").fill("Ada Lovelace")
    page.get_by_label("E-mail").fill(f"ada{uuid.uuid4().hex[:6]}@example.com")
    page.get_by_label("Conference").fill("1")
    page.get_by_label("Workshop A").fill("1")
    page.get_by_label("Workshop A").press("Enter")

    expect(page.get_by_role("alert")).to_contain_text("Workshop A")
    assert "&#x27;workshop-a&#x27;" not in page.content()  # the type's words, not its key
    join = page.get_by_role("button", name=re.compile("waiting list", re.I))
    expect(join).to_be_visible()
    screenshot(page, "orders-6-quota-full-offers-the-line")
    assert site_service.availability(event.id).quotas["capacity"].confirmed == 1
