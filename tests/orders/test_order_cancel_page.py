"""The cancellation link of an order (booking/web/cancel.py): a quantity per ticket type
held, some seats or all of them; a resubmitted form, a forged form token and bad
quantities change nothing. And the order in the confirmation's calendar file."""
import re

import pytest
from django.core import mail
from django.urls import reverse

from booking import calendar, links
from booking.mail import sender as booking_mail
from booking.models import ticket_label
from tests.orders.test_orders import devconf

ADA = "ada@example.com"


@pytest.fixture
def order(request, service):
    """Ada's order of 2 conference and 1 workshop-a seats (on lock_table unless a test is
    parametrized indirectly with another strategy: the page is the same on every one)."""
    strategy = getattr(request, "param", "lock_table")
    event = devconf(service, strategy, starts_at="2030-06-01 10:00")
    registration = service.book(event.id, name="Ada", email=ADA,
                                tickets={"conference": 2, "workshop-a": 1})
    booking_mail.flush()
    return event, registration


def cancel_url(registration):
    return reverse("booking:cancel",
                   args=[links.registration_token(registration, salt=links.CANCEL_SALT)])


def form_token(html):
    return re.search(r'name="form_token" value="([^"]+)"', html).group(1)


def post_seats(client, url, quantities, token=None):
    token = token or form_token(client.get(url).content.decode())
    data = {"form_token": token, **{f"cancel_{t}": str(n) for t, n in quantities.items()}}
    response = client.post(url, data)
    booking_mail.flush()
    return response


def held(service, event):
    found = service.find_registration(event.id, email=ADA)
    return found.tickets if found else None


def test_ticket_label__reads_as_words():
    assert ticket_label("workshop-a") == "Workshop A"
    assert ticket_label("early_bird") == "Early bird"
    assert ticket_label("conference") == "Conference"
    assert ticket_label("day-2") == "Day 2"


def test_cancel_page__order__a_quantity_per_type_held__cancels_nothing(client, service, order):
    event, registration = order
    html = client.get(cancel_url(registration)).content.decode()
    # A box per pass, none ticked to begin with: one click never gives up seats unasked.
    boxes = re.findall(r'<input type="checkbox" name="passes" value="([^"]+)"[^>]*>', html)
    assert boxes == [f"{registration.registration_id}-{n}" for n in (1, 2, 3)]
    assert "checked" not in "".join(re.findall(r'<input type="checkbox"[^>]*>', html))
    assert "Cancel seats of your order?" in html
    assert "2 × Conference, 1 × Workshop A (3 seats)" in html
    assert "Conference, pass 2 of 3" in html and "Workshop A, pass 3 of 3" in html
    assert "Workshop B" not in html  # a type the order does not hold
    assert held(service, event) == {"conference": 2, "workshop-a": 1}


@pytest.mark.parametrize("order", ["lock_table", "aggregate", "slots"], indirect=True)
def test_cancel_page__some_seats__frees_just_those_and_shows_the_rest(client, service, order):
    event, registration = order
    url = cancel_url(registration)
    mail.outbox.clear()
    response = post_seats(client, url, {"conference": 1, "workshop-a": 0})
    # A page opened before asked a quantity per type: still accepted.
    assert response.status_code == 303 and response["Location"].endswith("?seats=1&part=1")
    assert held(service, event) == {"conference": 1, "workshop-a": 1}
    assert service.availability(event.id).quotas["capacity"].confirmed == 2
    page = client.get(response["Location"]).content.decode()
    # A plain confirmation, not another cancel form.
    assert "That seat is cancelled" in page and "<form" not in page
    assert "1 × Conference, 1 × Workshop A (2 seats)" in page
    assert registration.reference in page
    assert len(mail.outbox) == 1 and "Part of your order" in mail.outbox[0].body


def test_cancel_page__the_same_form_resubmitted__cancels_once(client, service, order):
    event, registration = order
    url = cancel_url(registration)
    token = form_token(client.get(url).content.decode())
    first = post_seats(client, url, {"conference": 1, "workshop-a": 0}, token=token)
    again = post_seats(client, url, {"conference": 1, "workshop-a": 0}, token=token)
    assert first.status_code == again.status_code == 303
    assert held(service, event) == {"conference": 1, "workshop-a": 1}


def test_cancel_page__every_seat__cancels_the_order(client, service, order):
    event, registration = order
    response = post_seats(client, cancel_url(registration), {"conference": 2, "workshop-a": 1})
    assert response.status_code == 303
    assert response["Location"].endswith("/done/?seats=3")
    assert "Your 3 seats at" in client.get(response["Location"]).content.decode()
    assert held(service, event) is None
    assert service.availability(event.id).quotas["workshop-a"].confirmed == 0


@pytest.mark.parametrize("quantities, says", [
    ({"conference": 0, "workshop-a": 0}, "Choose at least one seat to cancel."),
    ({"conference": 3, "workshop-a": 0}, "Your order holds 2 of these."),
    ({"conference": -1, "workshop-a": 0}, "Enter 0 or more."),
    ({"conference": "two", "workshop-a": 0}, "Enter a whole number of seats."),
    ({"conference": 1}, "Enter a number of seats"),
])
def test_cancel_page__bad_quantities__400_nothing_changed(client, service, order, quantities,
                                                          says):
    event, registration = order
    response = post_seats(client, cancel_url(registration), quantities)
    assert response.status_code == 400
    assert says in response.content.decode()
    assert held(service, event) == {"conference": 2, "workshop-a": 1}


def test_cancel_page__forged_form_token__400_nothing_changed(client, service, order):
    event, registration = order
    url = cancel_url(registration)
    token = form_token(client.get(url).content.decode())
    response = post_seats(client, url, {"conference": 1, "workshop-a": 0}, token=token + "x")
    assert response.status_code == 400 and "This form has expired" in response.content.decode()
    signup_token = re.search(r'name="token" value="([^"]+)"', client.get(
        reverse("booking:event_detail", args=[event.id])).content.decode()).group(1)
    response = post_seats(client, url, {"conference": 1, "workshop-a": 0}, token=signup_token)
    assert response.status_code == 400  # another form's token is not this form's
    assert held(service, event) == {"conference": 2, "workshop-a": 1}


def test_cancel_page__tampered_link__400_nothing_changed(client, service, order):
    event, registration = order
    url = cancel_url(registration)
    token = form_token(client.get(url).content.decode())
    response = client.post(url[:-3] + "AA/", {"form_token": token, "cancel_conference": "1",
                                              "cancel_workshop-a": "0"})
    assert response.status_code == 400 and "link is not valid" in response.content.decode()
    assert held(service, event) == {"conference": 2, "workshop-a": 1}


def test_cancel_page__more_than_left_after_a_part_cancelled_elsewhere__400_unchanged(
        client, service, order):
    event, registration = order
    url = cancel_url(registration)
    token = form_token(client.get(url).content.decode())  # the page read 2 conference
    service.cancel(event.id, email=ADA, tickets={"conference": 1})
    response = post_seats(client, url, {"conference": 2, "workshop-a": 0}, token=token)
    assert response.status_code == 400
    assert "Your order holds 1 of these." in response.content.decode()
    assert held(service, event) == {"conference": 1, "workshop-a": 1}


def test_cancel_page__one_seat_order__asks_as_ever(client, service):
    event = devconf(service, "lock_table")
    registration = service.book(event.id, name="Ada", email=ADA, tickets={"workshop-b": 1})
    html = client.get(cancel_url(registration)).content.decode()
    assert "Cancel your booking?" in html and "form_token" not in html
    assert "1 × Workshop B (1 seat)" in html
    assert client.post(cancel_url(registration)).status_code == 303
    assert held(service, event) is None


def test_ics__an_order__names_its_tickets(service, order):
    event, registration = order
    text = calendar.ics(event, site_url="http://testserver", registration=registration)
    assert "Your order: 2 × Conference\\, 1 × Workshop A (3 seats)" in text.replace("\r\n ", "")
    plain = calendar.ics(event, site_url="http://testserver")
    assert "Your order" not in plain
