"""A request that changes something and waited behind the proxy past
``BOOKING_QUEUE_DEADLINE`` (its ``X-Request-Start``, which config/nginx.conf sets) is
refused before it runs: 503 with Retry-After (problem+json under /api/, the error page
elsewhere), and not one DynamoDB request is sent (no abuse limit counted, nothing booked or
cancelled; counted on the wire). A fresh one, one without the header, one whose header is
malformed or in the future, and a page read run as before.

The control is the site without the check (the middleware taken out): the old request
books a seat its client has given up on.
"""
import json
import time

import pytest
from django.urls import reverse

from booking.dynamo.metrics import RequestMeter
from booking.web.middleware import waited_seconds
from tests.web.test_cancel import cancel_url
from tests.web.test_signup import form_page

DEADLINE = 5.0
QUEUE_CHECK = "booking.web.middleware.QueueDeadlineMiddleware"
BODY = {"name": "Ann", "email": "ann@example.com"}


def started(seconds_ago: float) -> str:
    return f"t={time.time() - seconds_ago:.3f}"


@pytest.fixture(autouse=True)
def deadline(settings):
    settings.BOOKING_QUEUE_DEADLINE = DEADLINE


@pytest.fixture
def event(service):
    return service.create_event(name="Queue night", capacity=3, strategy="lock_table")


@pytest.fixture
def meter(service):
    meter = RequestMeter().install(service.store)
    yield meter
    meter.uninstall()


def api_book(client, event, **headers):
    return client.post(f"/api/v1/events/{event.id}/registrations/", json.dumps(BODY),
                       content_type="application/json", HTTP_IDEMPOTENCY_KEY="ann-key-0001",
                       **headers)


def form_book(client, event, token=None, **headers):
    token = token or form_page(client, event.id)[1]
    return client.post(reverse("booking:event_detail", args=[event.id]),
                       {**BODY, "token": token}, **headers)


def sent(meter, ask):
    """(response, the DynamoDB operations it sent)."""
    with meter.track() as tally:
        response = ask()
    return response, tally.operations


def test_api_booking__waited_past_the_deadline__503_problem_nothing_sent(client, event,
                                                                          meter, service):
    response, operations = sent(meter, lambda: api_book(
        client, event, HTTP_X_REQUEST_START=started(DEADLINE + 1)))

    assert response.status_code == 503
    assert response["Content-Type"] == "application/problem+json"
    assert 1 <= int(response["Retry-After"]) <= 3
    assert response.json()["type"] == "/api/v1/problems/unavailable"
    assert "nothing was written" in response.json()["detail"]
    assert operations == []  # not the limits' read or write, not the booking
    assert service.registrations(event.id) == []


def test_signup_form__waited_past_the_deadline__503_page_nothing_sent(client, event, meter,
                                                                      service):
    token = form_page(client, event.id)[1]

    response, operations = sent(meter, lambda: form_book(
        client, event, token, HTTP_X_REQUEST_START=started(DEADLINE + 1)))

    assert response.status_code == 503
    assert response["Retry-After"].isdigit()
    assert "Refresh" not in response  # loading it again would drop the form
    assert "Nothing was booked or changed" in response.content.decode()
    assert operations == []
    assert service.registrations(event.id) == []


def test_cancel_form__waited_past_the_deadline__503_booking_kept(client, event, meter,
                                                                 service):
    ada = service.book(event.id, name="Ada", email="ada@example.com")

    response, operations = sent(meter, lambda: client.post(
        cancel_url(ada), HTTP_X_REQUEST_START=started(DEADLINE + 1)))

    assert response.status_code == 503
    assert operations == []
    assert service.find_registration(event.id, email="ada@example.com") is not None


@pytest.mark.parametrize("header", [None, "fresh", "future", "t=soon", "1700000000",
                                    "t=1e9", "t=" + "9" * 40])
def test_api_booking__fresh_absent_future_or_malformed_header__booked(client, event,
                                                                      service, header):
    headers = {} if header is None else {"HTTP_X_REQUEST_START": {
        "fresh": started(0.2), "future": started(-60)}.get(header, header)}

    response = api_book(client, event, **headers)

    assert response.status_code == 201, response.content
    assert [r.email for r in service.registrations(event.id)] == ["ann@example.com"]


def test_signup_form__fresh_header__booked(client, event, service):
    response = form_book(client, event, HTTP_X_REQUEST_START=started(0.2))

    assert response.status_code in (200, 302, 303), response.status_code
    assert service.find_registration(event.id, email="ann@example.com") is not None


def test_page_read__waited_past_the_deadline__still_served(client, event):
    response = client.get(reverse("booking:event_detail", args=[event.id]),
                          HTTP_X_REQUEST_START=started(DEADLINE + 1))

    assert response.status_code == 200  # a read changes nothing: served however late


def test_api_booking__control_without_the_check__the_old_request_books(client, event,
                                                                       service, settings):
    settings.MIDDLEWARE = [name for name in settings.MIDDLEWARE if name != QUEUE_CHECK]

    response = api_book(client, event, HTTP_X_REQUEST_START=started(DEADLINE + 1))

    assert response.status_code == 201  # the seat of a client that has given up
    assert len(service.registrations(event.id)) == 1


@pytest.mark.parametrize("header, expected", [
    ("t=1000.5", 1.5), (" t=1000 ", 2.0), ("t=1001.9", 0.1), ("t=1002.5", None),
    ("", None), ("t=", None), ("1000", None), ("t=-5", None), ("t=1000.1234567", None),
    ("t=10\u00b90", None), ("t=\uff11\uff10\uff10\uff10", None)])
def test_waited_seconds__parses_only_the_proxys_form(header, expected):
    waited = waited_seconds(header, now=1002.0)

    if expected is None:
        assert waited is None
    else:
        assert waited == pytest.approx(expected)
