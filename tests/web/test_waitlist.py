"""The waiting list's public pages and e-mails: joining from the full event page (asking,
then confirming from the e-mailed link), the offer e-mail's link, taking or passing on the
seat, and offers that ended."""
import json
import re
import time
from io import StringIO

import pytest
from django.core import mail
from django.core.management import call_command
from django.urls import reverse

from booking.waitlist import engine as waitlist_engine
from booking.links import offer_token
from tests.mail.helpers import deliver_owed
from tests.web.test_signup import form_page


@pytest.fixture
def full_event(service):
    event = service.create_event(name="Small room", capacity=1, strategy="lock_table")
    service.book(event.id, name="Ada", email="ada@example.com")
    deliver_owed()
    mail.outbox.clear()
    return event


def ask(client, event_id, *, name="Bo Peep", email="Bo@Example.com"):
    """Ask to join from the event page's form (the page answers; the e-mail joins)."""
    token = form_page(client, event_id)[1]
    return client.post(reverse("booking:waitlist_join", args=[event_id]),
                       {"name": name, "email": email, "token": token})


def join_message(email):
    """The newest answer to a request to join sent to ``email`` (taken out of the outbox)."""
    deliver_owed()
    found = [m for m in mail.outbox if m.to == [email]
             and m.extra_headers["X-Booking-Message"].startswith("waitlist-join-")]
    for message in found:
        mail.outbox.remove(message)
    return found[-1]


def link_in(message, name) -> str:
    return re.search(rf"http://[^/\s]+(/waiting-list/{name}[^\s]*/)", message.body).group(1)


def join(client, event_id, *, name="Bo Peep", email="Bo@Example.com"):
    """Ask, then confirm from the e-mail's link: the person's place page."""
    ask(client, event_id, name=name, email=email)
    confirm = link_in(join_message(email), "confirm/")
    return client.get(client.post(confirm)["Location"])


def worker():
    out = StringIO()
    call_command("booking_worker", "--once", "--min-age", "0", "--json", stdout=out)
    return json.loads(out.getvalue())


def offer_link(message) -> str:
    return re.search(r"http://[^/\s]+(/offers/[^/\s]+/)", message.body).group(1)


def test_full_event_page__join_and_confirm__place_in_line_shown_and_stored(client, service,
                                                                          full_event):
    join(client, full_event.id, name="Cy", email="cy@example.com")

    response = join(client, full_event.id)

    html = response.content.decode()
    assert response.status_code == 200
    assert "on the waiting list" in html and "number 2" in html
    assert "for <strong>1 day</strong>" in html and "Leave the waiting list" in html
    assert [(e.email, e.status) for e in service.waiting_list(full_event.id)] == [
        ("cy@example.com", "waiting"), ("bo@example.com", "waiting")]


def test_place_page__says_the_offer_time_the_waiting_list_holds_seats_for(client, service,
                                                                         full_event):
    service.waitlist.engine.offer_seconds = 2 * 3600  # as its offers will hold them

    html = join(client, full_event.id).content.decode()

    assert "for <strong>2 hours</strong>" in html and "1 day" not in html


def test_join__bad_email__400_nothing_stored(client, service, full_event):
    response = ask(client, full_event.id, email="not-an-address")

    assert response.status_code == 400
    assert "Join the waiting list" in response.content.decode()
    assert service.waiting_list(full_event.id) == []


def test_join__seat_free_again__back_to_the_event_page(client, service, full_event):
    token = form_page(client, full_event.id)[1]
    service.cancel(full_event.id, email="ada@example.com")
    waitlist_engine.flush()  # the offer made right after

    response = client.post(reverse("booking:waitlist_join", args=[full_event.id]),
                           {"name": "Bo", "email": "bo@example.com", "token": token})

    assert response.status_code == 303
    assert service.waiting_list(full_event.id) == []


def test_offer_email__take_the_seat__booked_and_confirmed_once(client, service, full_event):
    join(client, full_event.id)
    service.cancel(full_event.id, email="ada@example.com")
    waitlist_engine.flush()  # the offer made right after

    # Ada's cancellation and Bo's offer (her confirmation went out with the join's pass).
    assert worker() == {"sent": 2}
    [offer] = [m for m in mail.outbox if m.extra_headers["X-Booking-Message"].startswith("offer-")]
    mail.outbox.clear()
    page = client.get(offer_link(offer))
    accepted = client.post(offer_link(offer), {"action": "accept"})
    again = client.post(offer_link(offer), {"action": "accept"})
    deliver_owed()

    assert offer.to == ["Bo@Example.com"] and "holding it for you for 1 day, until" in offer.body
    assert page.status_code == 200 and "Take the seat" in page.content.decode()
    assert accepted.status_code == 303 and again.status_code == 303
    assert accepted["Location"] == again["Location"]
    assert service.find_registration(full_event.id, email="bo@example.com") is not None
    assert [m.subject for m in mail.outbox] == ["Booked: Small room"]
    assert "You took this seat" in client.get(offer_link(offer)).content.decode()


def test_offer_page__pass_it_on__next_in_line_offered(client, service, full_event):
    join(client, full_event.id)
    join(client, full_event.id, name="Cy", email="cy@example.com")
    service.cancel(full_event.id, email="ada@example.com")
    waitlist_engine.flush()  # the offer made right after
    entry = service.waiting_entry(full_event.id, email="bo@example.com")
    link = reverse("booking:offer", args=[offer_token(full_event.id, entry.email, entry.offer_id)])

    response = client.post(link, {"action": "decline"})

    assert response.status_code == 200 and "Seat passed on" in response.content.decode()
    assert [e.status for e in service.waiting_list(full_event.id)] == ["left", "offered"]


def test_offer_page__pass_it_on_after_taking_it__says_the_seat_is_booked(client, service,
                                                                         full_event):
    join(client, full_event.id)
    service.cancel(full_event.id, email="ada@example.com")
    waitlist_engine.flush()  # the offer made right after
    entry = service.waiting_entry(full_event.id, email="bo@example.com")
    link = reverse("booking:offer", args=[offer_token(full_event.id, entry.email, entry.offer_id)])
    client.post(link, {"action": "accept"})

    response = client.post(link, {"action": "decline"})  # a second tab, an older page

    html = response.content.decode()
    assert response.status_code == 200
    assert "You took this seat" in html and "passed on" not in html
    assert service.find_registration(full_event.id, email="bo@example.com") is not None


def test_offer_page__expired__410_and_nothing_booked(client, service, full_event):
    service.waitlist.engine.offer_seconds = 0.2
    join(client, full_event.id)
    service.cancel(full_event.id, email="ada@example.com")
    waitlist_engine.flush()  # the offer made right after
    entry = service.waiting_entry(full_event.id, email="bo@example.com")
    link = reverse("booking:offer", args=[offer_token(full_event.id, entry.email, entry.offer_id)])
    time.sleep(0.3)

    page = client.get(link)
    response = client.post(link, {"action": "accept"})

    assert page.status_code == 410 and "has ended" in page.content.decode()
    assert response.status_code == 410
    assert service.find_registration(full_event.id, email="bo@example.com") is None


def test_offer_page__line_closed_at_the_start__409_started_never_gone_to_the_next(
        client, service, full_event):
    from tests.waitlist.test_waitlist import start_now

    join(client, full_event.id)
    service.cancel(full_event.id, email="ada@example.com")
    waitlist_engine.flush()
    entry = service.waiting_entry(full_event.id, email="bo@example.com")
    link = reverse("booking:offer", args=[offer_token(full_event.id, entry.email, entry.offer_id)])
    start_now(service, full_event)
    service.waiting_list_pass()  # the worker closes the line: the offer ends

    page = client.get(link).content.decode()

    assert "This event has started" in page and "next person" not in page


def test_join_form__says_what_the_address_is_for(client, service, full_event):
    page = client.get(reverse("booking:event_detail", args=[full_event.id])).content.decode()

    assert "first a link to confirm your place, then when a seat is offered to you" in page
    assert "confirmation and cancellation link" not in page


def test_offer_page__event_started__409_closed_and_nothing_booked(client, service, full_event):
    from tests.waitlist.test_waitlist import start_now

    join(client, full_event.id)
    service.cancel(full_event.id, email="ada@example.com")
    waitlist_engine.flush()  # the offer made right after
    entry = service.waiting_entry(full_event.id, email="bo@example.com")
    link = reverse("booking:offer", args=[offer_token(full_event.id, entry.email, entry.offer_id)])
    start_now(service, full_event)

    page = client.get(link)
    response = client.post(link, {"action": "accept"})

    assert page.status_code == 409 and "This event has started" in page.content.decode()
    assert "Take the seat" not in page.content.decode()
    assert response.status_code == 409 and "This event has started" in response.content.decode()
    assert service.find_registration(full_event.id, email="bo@example.com") is None


def test_offer_page__forged_link__400(client, full_event):
    response = client.get(reverse("booking:offer", args=["not-a-real-token"]))

    assert response.status_code == 400


def test_order_event__join_with_quantities__e_mails_and_pages_show_the_order_held(client,
                                                                                 service):
    event = service.create_event(
        name="DevConf", capacity=2, strategy="lock_table", quotas={"workshop-a": 1},
        ticket_types={"conference": [], "workshop-a": ["workshop-a"]}, max_per_order=2)
    service.book(event.id, name="Ada", email="ada@example.com",
                 tickets={"conference": 1, "workshop-a": 1})
    deliver_owed()
    mail.outbox.clear()
    page, token = form_page(client, event.id)
    assert 'name="qty_workshop-a"' in page.content.decode()  # the waiting list's form asks
    bad = client.post(reverse("booking:waitlist_join", args=[event.id]),
                      {"name": "Bo", "email": "bo@example.com", "token": token,
                       "qty_conference": "0", "qty_workshop-a": "3"})
    assert bad.status_code == 400 and service.waiting_list(event.id) == []

    client.post(reverse("booking:waitlist_join", args=[event.id]),
                {"name": "Bo", "email": "bo@example.com", "token": token,
                 "qty_conference": "1", "qty_workshop-a": "1"})
    asked = join_message("bo@example.com")
    confirm = link_in(asked, "confirm/")
    assert "Tickets asked for: 1 × Conference, 1 × Workshop A (2 seats)" in asked.body
    assert "1 × Conference, 1 × Workshop A" in client.get(confirm).content.decode()
    place = client.get(client.post(confirm)["Location"]).content.decode()

    assert "1 × Conference, 1 × Workshop A (2 seats)" in place
    assert service.waiting_entry(event.id, email="bo@example.com").tickets == {
        "conference": 1, "workshop-a": 1}
    service.cancel(event.id, email="ada@example.com")
    waitlist_engine.flush()
    deliver_owed()
    worker()
    [offer] = [m for m in mail.outbox if m.extra_headers["X-Booking-Message"].startswith("offer-")]
    assert "Held for you: 1 × Conference, 1 × Workshop A (2 seats)" in offer.body
    assert "1 × Conference, 1 × Workshop A" in client.get(offer_link(offer)).content.decode()
    client.post(offer_link(offer), {"action": "accept"})
    assert service.find_registration(event.id, email="bo@example.com").tickets == {
        "conference": 1, "workshop-a": 1}


def test_order_does_not_fit_one_quota__409_offers_to_wait_for_that_order(client, service):
    event = service.create_event(
        name="DevConf", capacity=3, strategy="aggregate", quotas={"workshop-a": 1},
        ticket_types={"conference": [], "workshop-a": ["workshop-a"]}, max_per_order=2)
    service.book(event.id, name="Ada", email="ada@example.com", tickets={"workshop-a": 1})
    token = form_page(client, event.id)[1]

    refused = client.post(reverse("booking:event_detail", args=[event.id]),
                          {"name": "Bo", "email": "bo@example.com", "token": token,
                           "qty_conference": "0", "qty_workshop-a": "1"})

    html = refused.content.decode()
    assert refused.status_code == 409 and "Join the waiting list" in html
    assert 'id="waitlist_qty_workshop-a"' in html and 'value="1"' in html
    waitlist_token = re.findall(r'name="token" value="([^"]+)"', html)[-1]
    client.post(reverse("booking:waitlist_join", args=[event.id]),
                {"name": "Bo", "email": "bo@example.com", "token": waitlist_token,
                 "qty_conference": "0", "qty_workshop-a": "1"})
    assert "Tickets asked for: 1 × Workshop A" in join_message("bo@example.com").body
