"""Confirmation pages and cancellation links, through Django's test client."""
import json
import re

import pytest
from django.core import signing
from django.urls import reverse

from booking import links as page_tokens


@pytest.fixture
def event(service):
    return service.create_event(name="Cancel club", capacity=2, strategy="slots")


@pytest.fixture
def booked(service, event):
    return service.book(event.id, name="Ada", email="ada@example.com")


def cancel_url(registration):
    return reverse("booking:cancel",
                   args=[page_tokens.registration_token(registration, salt=page_tokens.CANCEL_SALT)])


def confirmation_url(registration):
    token = page_tokens.registration_token(registration, salt=page_tokens.CONFIRMATION_SALT)
    return reverse("booking:booked", args=[registration.event_id, token])


def test_cancel__get__shows_what_and_cancels_nothing(client, service, event, booked):
    response = client.get(cancel_url(booked))

    html = response.content.decode()
    assert response.status_code == 200
    assert "Cancel club" in html and "ada@example.com" in html and "<form" in html
    assert service.availability(event.id).confirmed == 1


def test_cancel__post__303_to_cancelled_page_and_seat_free(client, service, event, booked):
    response = client.post(cancel_url(booked))

    assert response.status_code == 303
    page = client.get(response["Location"])
    assert page.status_code == 200
    assert "Your booking is cancelled" in page.content.decode()
    assert 'id="seats-left">2<' in page.content.decode()
    assert service.find_registration(event.id, email="ada@example.com") is None


def test_cancel__twice__harmless_and_says_already_cancelled(client, service, event, booked):
    url = cancel_url(booked)
    client.post(url)
    service.book(event.id, name="Bo", email="bo@example.com")

    again = client.post(url)
    page = client.get(url)

    assert again.status_code == 303
    assert page.status_code == 200 and "already cancelled" in page.content.decode()
    assert [r.email for r in service.registrations(event.id)] == ["bo@example.com"]


def test_cancel__old_link_after_rebooking__keeps_the_new_booking(client, service, event, booked):
    old_link = cancel_url(booked)
    service.cancel(event.id, email="ada@example.com")
    newer = service.book(event.id, name="Ada again", email="ada@example.com")

    shown = client.get(old_link)
    posted = client.post(old_link)

    assert "already cancelled" in shown.content.decode()
    assert posted.status_code == 303
    assert service.find_registration(event.id, email="ada@example.com") == newer


@pytest.mark.parametrize("tamper", ["garbage", "flip_signature", "confirmation_salt",
                                    "other_email"])
def test_cancel__tampered_or_foreign_token__400_cancels_nothing(
        client, service, event, booked, tamper):
    token = page_tokens.registration_token(booked, salt=page_tokens.CANCEL_SALT)
    if tamper == "garbage":
        token = "not-a-token"
    elif tamper == "flip_signature":
        token = token[:-2] + ("AA" if not token.endswith("AA") else "BB")
    elif tamper == "confirmation_salt":
        token = page_tokens.registration_token(booked, salt=page_tokens.CONFIRMATION_SALT)
    elif tamper == "other_email":  # another person's payload under Ada's (earlier) signed link
        legacy = signing.Signer(salt=page_tokens.CANCEL_SALT).sign_object(
            {"e": event.id, "m": "ada@example.com", "r": booked.registration_id})
        _, signature = legacy.split(":")
        payload = {"e": event.id, "m": "bo@example.com", "r": booked.registration_id}
        forged = signing.b64_encode(json.dumps(payload, separators=(",", ":")).encode())
        token = ":".join([forged.decode(), signature])

    url = reverse("booking:cancel", args=[token])
    shown, posted = client.get(url), client.post(url)

    assert shown.status_code == posted.status_code == 400
    assert "link is not valid" in posted.content.decode()
    assert service.availability(event.id).confirmed == 1


def test_cancelled_page__before_confirming__sends_back_to_the_question(client, booked):
    token = page_tokens.registration_token(booked, salt=page_tokens.CANCEL_SALT)

    response = client.get(reverse("booking:cancelled", args=[token]))

    assert response.status_code == 302
    assert response["Location"] == reverse("booking:cancel", args=[token])


def test_confirmation__valid_link__shows_booking_and_cancel_link(client, booked):
    response = client.get(confirmation_url(booked))

    html = response.content.decode()
    assert response.status_code == 200
    assert "ada@example.com" in html
    assert re.search(r'href="http://testserver/cancel/[^"]+/"', html)


def test_confirmation__after_cancel__410_no_cancel_link(client, service, event, booked):
    service.cancel(event.id, email="ada@example.com")

    response = client.get(confirmation_url(booked))

    assert response.status_code == 410
    assert "/cancel/" not in response.content.decode()


@pytest.mark.parametrize("tamper", ["garbage", "cancel_salt", "other_event"])
def test_confirmation__tampered_link__400(client, service, booked, tamper):
    token = page_tokens.registration_token(booked, salt=page_tokens.CONFIRMATION_SALT)
    event_id = booked.event_id
    if tamper == "garbage":
        token = token[:-4] + "zzzz"
    elif tamper == "cancel_salt":
        token = page_tokens.registration_token(booked, salt=page_tokens.CANCEL_SALT)
    else:
        event_id = service.create_event(name="Other", capacity=1).id

    response = client.get(reverse("booking:booked", args=[event_id, token]))

    assert response.status_code == 400
