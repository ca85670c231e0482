"""The public list, event page and signup form, through Django's test client."""
import re
from datetime import datetime, timezone

import pytest
from django.core import mail
from django.urls import reverse

from booking.entry import forms as page_tokens
from booking.errors import BookingContention, InvalidBooking, StoreUnavailable
from tests.mail.helpers import deliver_owed


@pytest.fixture
def event(service):
    return service.create_event(name="Django meetup", capacity=2, strategy="lock_table",
                                starts_at=datetime(2031, 5, 4, 18, 30, tzinfo=timezone.utc))


def form_page(client, event_id):
    """GET the event page; return (response, the form's one-time token)."""
    response = client.get(reverse("booking:event_detail", args=[event_id]))
    match = re.search(r'name="token" value="([^"]+)"', response.content.decode())
    return response, match and match.group(1)


def submit(client, event_id, *, name="Ada Lovelace", email="ada@example.com", token=None):
    """POST the signup form; then the worker's outbox pass sends the e-mail it owes."""
    if token is None:
        token = form_page(client, event_id)[1]
    response = client.post(reverse("booking:event_detail", args=[event_id]),
                           {"name": name, "email": email, "token": token})
    deliver_owed()
    return response


def test_list__events__names_dates_seats_and_full(client, service):
    open_event = service.create_event(name="Open night", capacity=3)
    full_event = service.create_event(name="Tiny talk", capacity=1)
    service.book(full_event.id, name="Bo", email="bo@example.com")

    response = client.get("/")

    html = response.content.decode()
    assert response.status_code == 200
    assert reverse("booking:event_detail", args=[open_event.id]) in html
    assert "3 of 3 seats left" in html
    assert re.search(r"Tiny talk.*?Full", html, re.S)


def test_event_page__open__details_and_form(client, event):
    response, token = form_page(client, event.id)

    html = response.content.decode()
    assert response.status_code == 200
    assert "Django meetup" in html and "4 May 2031" in html
    assert "2 of 2 seats left" in html and "Capacity" not in html
    assert token and 'for="id_name"' in html and 'for="id_email"' in html


@pytest.mark.parametrize("event_id", ["0" * 32, "not-an-id", "ABCDEF" * 6])
def test_event_page__unknown_or_malformed_id__404(client, service, event_id):
    assert client.get(f"/events/{event_id}/").status_code == 404
    assert client.post(f"/events/{event_id}/", {"name": "A", "email": "a@b.co"}).status_code == 404


def test_signup__valid__303_to_confirmation_with_cancel_link(client, service, event):
    response = submit(client, event.id)

    assert response.status_code == 303
    page = client.get(response["Location"])
    html = page.content.decode()
    assert page.status_code == 200
    assert "You're booked" in html and "ada@example.com" in html
    assert "badge-full" not in html
    assert re.search(r'href="http://testserver/cancel/[^"]+/"', html)
    assert service.availability(event.id).confirmed == 1


def test_signup__confirmation_url__no_guessable_ids(client, service, event):
    response = submit(client, event.id)

    registration = service.find_registration(event.id, email="ada@example.com")
    location = response["Location"]
    assert location.startswith(f"/events/{event.id}/booked/")
    assert registration.registration_id not in location


def test_signup__email_mixed_case__stored_normalized(client, service, event):
    submit(client, event.id, email="  Ada@Example.COM ")

    assert [r.email for r in service.registrations(event.id)] == ["ada@example.com"]


def test_signup__sends_mail_with_absolute_cancel_link(client, service, event):
    submit(client, event.id)

    assert len(mail.outbox) == 1
    message = mail.outbox[0]
    assert message.to == ["ada@example.com"] and "Django meetup" in message.subject
    cancel_url = re.search(r"http://testserver/cancel/\S+/", message.body).group(0)
    assert client.get(cancel_url).status_code == 200


def test_signup__replayed_form__same_confirmation_one_seat_one_mail(client, service, event):
    token = form_page(client, event.id)[1]

    first = submit(client, event.id, token=token)
    second = submit(client, event.id, token=token)

    assert first.status_code == second.status_code == 303
    assert first["Location"] == second["Location"]
    assert service.availability(event.id).confirmed == 1
    assert len(mail.outbox) == 1


@pytest.mark.parametrize("strategy", ["aggregate", "lock_table", "slots"])
def test_signup__replay_after_taking_last_seat__same_confirmation_not_full(
        client, service, strategy):
    event = service.create_event(name="Last seat", capacity=1, strategy=strategy)
    token = form_page(client, event.id)[1]

    first = submit(client, event.id, token=token)
    second = submit(client, event.id, token=token)

    assert (first.status_code, second.status_code) == (303, 303)
    assert first["Location"] == second["Location"]


def test_signup__event_full__409_shows_event_full_without_form(client, service, event):
    token = form_page(client, event.id)[1]  # the form was opened while seats were left
    service.book(event.id, name="One", email="one@example.com")
    service.book(event.id, name="Two", email="two@example.com")

    response = submit(client, event.id, token=token)

    html = response.content.decode()
    assert response.status_code == 409
    assert "this event is full" in html and "last seat was just taken" in html and 'role="alert"' in html
    assert "Book my seat" not in html  # only the waiting list's form, filled in
    assert "Join the waiting list" in html and 'value="ada@example.com"' in html
    assert service.find_registration(event.id, email="ada@example.com") is None


def test_event_page__full__says_full_without_form(client, service):
    event = service.create_event(name="Tiny", capacity=1)
    service.book(event.id, name="One", email="one@example.com")

    response, token = form_page(client, event.id)

    html = response.content.decode()
    assert response.status_code == 200
    assert "Full" in html and "Book my seat" not in html and "Join the waiting list" in html


def test_signup__already_registered_other_case__409_with_message(client, service, event):
    service.book(event.id, name="Ada", email="ada@example.com")

    response = submit(client, event.id, email="ADA@example.com ")

    assert response.status_code == 409
    assert "already registered" in response.content.decode()
    assert service.availability(event.id).confirmed == 1


@pytest.mark.parametrize("name, email, field, text", [
    ("", "ada@example.com", "name", "Enter your name"),
    ("   ", "ada@example.com", "name", "Enter your name"),
    ("x" * 101, "ada@example.com", "name", "at most 100 characters"),
    ("Ada\x07", "ada@example.com", "name", "control characters"),
    ("Ada", "", "email", "Enter your e-mail address"),
    ("Ada", "not-an-email", "email", "valid e-mail"),
    ("Ada", "a" * 245 + "@example.com", "email", "at most 254 characters"),
])
def test_signup__invalid_input__400_error_at_field_nothing_stored(
        client, service, event, name, email, field, text):
    response = submit(client, event.id, name=name, email=email)

    html = response.content.decode()
    assert response.status_code == 400
    error = re.search(rf'id="id_{field}_error">(.*?)</p>', html, re.S)
    assert error and text in error.group(1)
    assert f'aria-describedby="id_{field}_helptext id_{field}_error"' in html or \
        f'aria-describedby="id_{field}_error"' in html
    assert service.registrations(event.id) == []
    assert mail.outbox == []


def test_signup__service_rejects_field__400_error_at_that_field(
        client, service, event, monkeypatch):
    token = form_page(client, event.id)[1]

    def refuse(*args, **kwargs):
        raise InvalidBooking("This address cannot receive mail.", field="email")
    monkeypatch.setattr(service, "register", refuse)
    response = submit(client, event.id, token=token)

    html = response.content.decode()
    assert response.status_code == 400
    assert re.search(r'id="id_email_error">.*cannot receive mail', html)


@pytest.mark.parametrize("token", ["", "forged", "use-other-event"])
def test_signup__bad_form_token__400_fresh_token_nothing_stored(client, service, event, token):
    if token == "use-other-event":
        token = page_tokens.new_form_token(service.create_event(name="Other", capacity=5).id)
    elif token == "forged":
        good = page_tokens.new_form_token(event.id)
        token = good[:-3] + ("aaa" if not good.endswith("aaa") else "bbb")

    response = submit(client, event.id, token=token)

    html = response.content.decode()
    assert response.status_code == 400
    assert "form has expired" in html
    fresh = re.search(r'name="token" value="([^"]+)"', html).group(1)
    assert page_tokens.request_id_from_form_token(fresh, event.id)
    assert service.registrations(event.id) == []


@pytest.mark.parametrize("error", [BookingContention(), StoreUnavailable()])
def test_signup__store_busy_or_down__503_plain_message_token_kept(
        client, service, event, monkeypatch, error):
    token = form_page(client, event.id)[1]

    def refuse(*args, **kwargs):
        raise error
    monkeypatch.setattr(service, "register", refuse)
    response = submit(client, event.id, token=token)

    assert response.status_code == 503
    assert error.message.replace("'", "&#x27;") in response.content.decode()
    assert f'value="{token}"' in response.content.decode()


def test_list__store_unavailable__503(client, service, monkeypatch):
    def refuse():
        raise StoreUnavailable()
    monkeypatch.setattr(service, "list_events", refuse)

    response = client.get("/")

    # The short page that loads again by itself (a read the store did not answer).
    assert response.status_code == 503 and response["Retry-After"]
    assert "loads again by itself" in response.content.decode()


def test_signup__without_csrf_token__403_nothing_stored(service, event):
    from tests.conftest import BrowserFormClient

    strict = BrowserFormClient(enforce_csrf_checks=True)
    response = submit(strict, event.id, token=page_tokens.new_form_token(event.id))

    assert response.status_code == 403
    assert service.registrations(event.id) == []


def test_signup__oversized_body__400_nothing_stored(client, service, event, settings):
    settings.DATA_UPLOAD_MAX_MEMORY_SIZE = 1024

    response = submit(client, event.id, name="A" * 2000)

    assert response.status_code == 400
    assert service.registrations(event.id) == []


def test_signup_post__lock_table__decided_in_one_request_whole_post_in_two(client, server_store,
                                                                          settings):
    # Counted on the wire (botocore's before-send hook): the event page's read, then the
    # booking's one transaction with its request row and outbox row. The e-mail goes out
    # on its own thread after the answer (counted in the benchmark's MAIL REQ/BOOK). The
    # abuse limits add two counter updates of their own (tests/web/test_rate_limits.py).
    settings.BOOKING_SIGNUP_RATE = settings.BOOKING_SIGNUP_EMAIL_RATE = "off"
    from booking.dynamo.metrics import RequestMeter
    from booking.wiring import get_booking_service

    event = get_booking_service().create_event(name="Count", capacity=5, strategy="lock_table")
    token = page_tokens.new_form_token(event.id)
    meter = RequestMeter().install(get_booking_service().store)
    try:
        with meter.track() as post:
            response = client.post(reverse("booking:event_detail", args=[event.id]),
                                   {"name": "Ada", "email": "ada@example.com", "token": token})
    finally:
        meter.uninstall()
    deliver_owed()

    assert response.status_code == 303
    assert post.operations == ["GetItem", "TransactWriteItems"]
    assert len(mail.outbox) == 1
