"""The waiting list in a real (headless Chromium) browser: ask to join a full event, confirm
from the e-mailed link, get the offer e-mail, take the seat; leave from one's place page;
an offer that ran out; the organizer's waiting-list page and removing someone (told by
e-mail); the 202
page when the store cannot answer a re-check."""
import re
import time
import uuid

from django.urls import reverse
from playwright.sync_api import expect

from booking.waitlist import engine as waitlist_engine
from booking import links
from booking.links import offer_token


def offer_link(live_site, email) -> str:
    [mailed] = [m for m in live_site.mail_containing(email, count=2) if "/offers/" in m]
    return re.search(r"http://\S+/offers/\S+/", mailed).group(0)


def confirm_link(live_site, email) -> str:
    # Wait for this person's mail: another test's confirmation may already be there.
    [mine] = [m for m in live_site.mail_containing(email) if "/waiting-list/confirm/" in m]
    return re.search(r"http://\S+/waiting-list/confirm/\S+/", mine).group(0)


def organizer_opens_waiting_list(live_site, page, event):
    """Log in as a new organizer on the event's admin waiting-list page."""
    username, password = f"organizer{uuid.uuid4().hex[:6]}", uuid.uuid4().hex
    live_site.manage("createsuperuser", "--noinput", "--username", username,
                     "--email", "organizer@example.com",
                     env={"DJANGO_SUPERUSER_PASSWORD": password})
    page.goto(live_site.url + f"/admin/booking/dynamoevent/{event.id}/waiting-list/")
    page.get_by_label("Username").fill(username)
    page.get_by_label("Password").fill(password)
    page.get_by_role("button", name="Log in").click()


def ask_and_confirm(live_site, page, screenshot, event, email, name, shots=""):
    """Ask to join on the event's page, then confirm from the e-mail: the place page."""
    page.goto(live_site.url + f"/events/{event.id}/")
    page.get_by_label("Your name").fill(name)
    page.get_by_label("E-mail").fill(email)
    page.get_by_role("button", name="Join the waiting list").click()
    expect(page.get_by_role("heading", name="Check your e-mail to confirm your place")
           ).to_be_visible()
    if shots:
        screenshot(page, f"{shots}-check-your-email")
    page.goto(confirm_link(live_site, email))
    expect(page.get_by_role("heading", name="Confirm your place on the waiting list")
           ).to_be_visible()
    if shots:
        screenshot(page, f"{shots}-confirm")
    page.get_by_role("button", name="Confirm my place").click()
    expect(page.get_by_role("heading", name="You're on the waiting list")).to_be_visible()


def test_browser__join_full_event__offered_seat_taken(live_site, site_service, page, screenshot):
    event = site_service.create_event(name=f"Sold-out talk {uuid.uuid4().hex[:6]}", capacity=1,
                                      starts_at="2031-06-01T19:00:00+00:00")
    site_service.book(event.id, name="Early Bird", email=f"early{uuid.uuid4().hex[:6]}@example.com")
    email = f"grace{uuid.uuid4().hex[:6]}@example.com"

    page.goto(live_site.url + f"/events/{event.id}/")
    expect(page.get_by_role("heading", name="Join the waiting list")).to_be_visible()
    screenshot(page, "waitlist-1-full-event")
    ask_and_confirm(live_site, page, screenshot, event, email, "Grace Hopper", "waitlist-2")
    text = page.locator("main").inner_text()
    assert "number 1" in text and "for 1 day" in text
    screenshot(page, "waitlist-2-joined")

    early = site_service.registrations(event.id)[0]
    site_service.cancel(event.id, email=early.email)  # the seat is held for Grace at once
    waitlist_engine.flush()
    live_site.manage("booking_worker", "--once", "--min-age", "0")
    page.goto(offer_link(live_site, email))
    expect(page.get_by_role("heading", name="A seat is yours if you want it")).to_be_visible()
    screenshot(page, "waitlist-3-offer")
    page.get_by_role("button", name="Take the seat").click()

    page.wait_for_url(re.compile(r"/booked/"))
    expect(page.get_by_role("heading", name="You're booked")).to_be_visible()
    screenshot(page, "waitlist-4-booked")
    assert site_service.find_registration(event.id, email=email) is not None


def test_browser__offer_ran_out__ended_page_and_admin_list(live_site, site_service, page,
                                                           screenshot):
    event = site_service.create_event(name=f"Tiny workshop {uuid.uuid4().hex[:6]}", capacity=1)
    site_service.book(event.id, name="Early Bird", email="early@example.com")
    email = f"ada{uuid.uuid4().hex[:6]}@example.com"
    site_service.join_waiting_list(event.id, name="Ada Lovelace", email=email)
    for n in range(2):
        site_service.join_waiting_list(event.id, name=f"Guest {n}", email=f"guest{n}@example.com")
    site_service.waitlist.engine.offer_seconds = 0.5
    site_service.cancel(event.id, email="early@example.com")
    waitlist_engine.flush()
    entry = site_service.waiting_entry(event.id, email=email)
    link = live_site.url + reverse("booking:offer",
                                   args=[offer_token(event.id, entry.email, entry.offer_id)])
    time.sleep(0.6)  # the offer's time runs out

    page.goto(link)
    expect(page.get_by_role("heading", name="This offer has ended")).to_be_visible()
    screenshot(page, "waitlist-5-offer-ended")

    organizer_opens_waiting_list(live_site, page, event)
    expect(page.get_by_role("heading", name=re.compile("Waiting list"))).to_be_visible()
    assert "offer lapsed" in page.content()
    screenshot(page, "admin-waitlist-1-lapsed-offer")
    live_site.manage("booking_worker", "--once", "--min-age", "0")  # passes it to the next
    page.reload()
    assert "expired" in page.content() and "offered" in page.content()
    screenshot(page, "admin-waitlist-2-passed-on")

    page.locator('input[name="selected"][value="guest1@example.com"]').check()
    page.locator('select[name="action"]').select_option("remove_selected")
    page.get_by_role("button", name="Go").click()
    expect(page.get_by_text("told them by e-mail")).to_be_visible()
    screenshot(page, "admin-waitlist-3-removed")
    assert "has removed you from its waiting list" in live_site.mail_containing(
        "Removed from the waiting list")[-1]


def test_browser__offer_after_the_event_started__closed_page(live_site, site_service, page,
                                                              screenshot):
    from datetime import datetime, timedelta, timezone

    event = site_service.create_event(name=f"Evening talk {uuid.uuid4().hex[:6]}", capacity=1,
                                      starts_at="2031-06-01T19:00:00+00:00")
    site_service.book(event.id, name="Early Bird", email="early@example.com")
    email = f"alan{uuid.uuid4().hex[:6]}@example.com"
    site_service.join_waiting_list(event.id, name="Alan Turing", email=email)
    site_service.cancel(event.id, email="early@example.com")
    waitlist_engine.flush()
    entry = site_service.waiting_entry(event.id, email=email)
    site_service.update_event(event.id, expected_version=site_service.get_event(event.id).version,
                              starts_at=datetime.now(timezone.utc) - timedelta(minutes=1))

    page.goto(live_site.url + reverse("booking:offer",
                                      args=[offer_token(event.id, entry.email, entry.offer_id)]))
    expect(page.get_by_role("heading", name="This event has started")).to_be_visible()
    assert page.get_by_role("button", name="Take the seat").count() == 0
    screenshot(page, "waitlist-6-event-started")


def test_browser__leave_from_the_place_page(live_site, site_service, page, screenshot):
    event = site_service.create_event(name=f"Packed talk {uuid.uuid4().hex[:6]}", capacity=1,
                                      starts_at="2031-06-02T19:00:00+00:00")
    site_service.book(event.id, name="Early Bird", email=f"early{uuid.uuid4().hex[:6]}@example.com")
    email = f"katherine{uuid.uuid4().hex[:6]}@example.com"
    ask_and_confirm(live_site, page, screenshot, event, email, "Katherine Johnson")

    page.get_by_role("button", name="Leave the waiting list").click()

    expect(page.get_by_role("heading", name="You have left the waiting list")).to_be_visible()
    screenshot(page, "waitlist-7-left")
    assert site_service.waiting_entry(event.id, email=email).status == "left"

    old = links.join_token(links.JoinRef(event.id, email, "Katherine Johnson", None,
                                         uuid.uuid4().hex, time.time() - 30 * 86400))
    page.goto(live_site.url + reverse("booking:waitlist_confirm", args=[old]))
    expect(page.get_by_text("This confirmation link has expired")).to_be_visible()
    screenshot(page, "waitlist-8-confirm-link-expired")


def test_browser__recheck_store_unreachable__says_what_is_known(live_site, page, screenshot):
    from django.template.loader import render_to_string

    from booking.entry.forms import SignupForm
    from booking.web.views import RECHECK_UNANSWERED

    # The page the re-check answers when the store cannot be reached, shown on the live
    # site's origin (its CSS), as the site renders it.
    form = SignupForm({"name": "Ada Lovelace", "email": "ada@example.com"})
    html = render_to_string("booking/in_progress.html", {
        "event_id": uuid.uuid4().hex, "message": RECHECK_UNANSWERED, "form": form,
        "token": "t", "checks": 2, "automatic": False})
    page.goto(live_site.url + "/")
    page.set_content(html)

    expect(page.get_by_role("button", name="Check again")).to_be_visible()
    screenshot(page, "recheck-1-store-unreachable")
