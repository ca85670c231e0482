"""The waiting list in a real (headless Chromium) browser: join a full event, get the
offer e-mail, take the seat; an offer that ran out; the organizer's waiting-list page."""
import re
import time
import uuid

from django.urls import reverse
from playwright.sync_api import expect

from booking.waitlist import engine as waitlist_engine
from booking.links import offer_token


def offer_link(live_site, email) -> str:
    [mailed] = live_site.mail_containing(email)
    return re.search(r"http://\S+/offers/\S+/", mailed).group(0)


def test_browser__join_full_event__offered_seat_taken(live_site, site_service, page, screenshot):
    event = site_service.create_event(name=f"Sold-out talk {uuid.uuid4().hex[:6]}", capacity=1,
                                      starts_at="2031-06-01T19:00:00+00:00")
    site_service.book(event.id, name="Early Bird", email=f"early{uuid.uuid4().hex[:6]}@example.com")
    email = f"grace{uuid.uuid4().hex[:6]}@example.com"

    page.goto(live_site.url + f"/events/{event.id}/")
    expect(page.get_by_role("heading", name="Join the waiting list")).to_be_visible()
    screenshot(page, "waitlist-1-full-event")
    page.get_by_label("Your name").fill("Grace Hopper")
    page.get_by_label("E-mail").fill(email)
    page.get_by_role("button", name="Join the waiting list").click()
    expect(page.get_by_role("heading", name="You're on the waiting list")).to_be_visible()
    assert "number 1" in page.content()
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

    username, password = f"organizer{uuid.uuid4().hex[:6]}", uuid.uuid4().hex
    live_site.manage("createsuperuser", "--noinput", "--username", username,
                     "--email", "organizer@example.com",
                     env={"DJANGO_SUPERUSER_PASSWORD": password})
    page.goto(live_site.url + f"/admin/booking/dynamoevent/{event.id}/waiting-list/")
    page.get_by_label("Username").fill(username)
    page.get_by_label("Password").fill(password)
    page.get_by_role("button", name="Log in").click()
    expect(page.get_by_role("heading", name=re.compile("Waiting list"))).to_be_visible()
    assert "offer lapsed" in page.content()
    screenshot(page, "admin-waitlist-1-lapsed-offer")
    live_site.manage("booking_worker", "--once", "--min-age", "0")  # passes it to the next
    page.reload()
    assert "expired" in page.content() and "offered" in page.content()
    screenshot(page, "admin-waitlist-2-passed-on")


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
