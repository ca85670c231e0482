"""The event's page in a drop: its seats are read cheaply and in bounded time, and its
form's POST asks the cool-down before the abuse limits spend a write. On DynamoDB Local
(the store's requests counted by ``RequestMeter``, as in tests/service/test_requests.py).

- While the event cools down the page reads nothing and says seats are going fast (no
  count), with its form (control: the page as it was, reading the seats anyway).
- A drop's page views within a second read the seats once (control: nothing remembered).
- "Full" is never said from memory (control: a memory that keeps "full" too).
- A turned-away POST spends no limiter write, keeps what was typed, says when to come back
  (control: the form as it was, without asking the cool-down first).
"""
import re

import pytest
from django.urls import reverse

from booking.dynamo.metrics import RequestMeter
from booking.errors import EventFull
from booking.service import bookings as bookings_module
from booking.service.shedding import CoolDown
from booking.entry import limits as rate_limits
from booking.wiring import get_booking_service
from harness.controls import control_service
from tests.web.test_signup import form_page

GOING_FAST = "Seats are being taken fast"


@pytest.fixture
def service(server_store):
    return get_booking_service()


def page_url(event):
    return reverse("booking:event_detail", args=[event.id])


def tracked(service, call):
    """(call's result, the store requests this thread sent while it ran)."""
    meter = RequestMeter().install(service.store)
    try:
        with meter.track() as tally:
            result = call()
    finally:
        meter.uninstall()
    return result, tally


def cooling(service, event):
    service.recent_event(event.id)  # the event as remembered, as on a busy page
    service.bookings.cool_down = CoolDown(30.0)
    service.bookings.cool_down.throttled(event.id)


def assert_form_without_a_count(response, tally):
    html = response.content.decode()
    assert response.status_code == 200, html
    assert GOING_FAST in html and 'name="token"' in html and "Book my seat" in html
    assert "seats left" not in html and " of 5 seat" not in html and "is full" not in html
    assert tally.requests == 0, tally.operations


def page_while_cooling(client, service):
    event = service.create_event(name="Drop", capacity=5, strategy="shards")
    cooling(service, event)
    return tracked(service, lambda: client.get(page_url(event)))


def test_page__event_cools_down__form_no_count_no_store_request(client, service):
    response, tally = page_while_cooling(client, service)

    assert_form_without_a_count(response, tally)


def test_page__event_cools_down__control_reading_anyway__caught(client, service, monkeypatch):
    monkeypatch.setattr(service, "page_availability", service.availability)

    response, tally = page_while_cooling(client, service)

    with pytest.raises(AssertionError):
        assert_form_without_a_count(response, tally)


VIEWS = 10


def views_in_a_drop(client, service):
    """VIEWS page views of a shards event at one instant (the seats' clock held still):
    the store requests they sent."""
    event = service.create_event(name="Drop", capacity=100, strategy="shards")
    service.recent_event(event.id)
    service.bookings.clock = lambda: 1000.0
    responses, tally = tracked(service, lambda: [client.get(page_url(event))
                                                 for _ in range(VIEWS)])
    assert all("100 of 100 seats left" in r.content.decode() for r in responses)
    return tally


def test_page__views_within_a_second__seats_read_once(client, service):
    tally = views_in_a_drop(client, service)

    assert tally.operations == ["BatchGetItem"]  # the marker and 8 shards, once
    service.bookings.clock = lambda: 1000.0 + bookings_module.RECENT_SEATS_SECONDS
    event_id = service.list_events()[0].id
    _, later = tracked(service, lambda: client.get(reverse("booking:event_detail",
                                                           args=[event_id])))
    assert later.operations == ["BatchGetItem"]  # a second later: read again


def test_page__views_within_a_second__control_remembering_nothing__a_read_each(
        client, service, monkeypatch):
    monkeypatch.setattr(bookings_module, "RECENT_SEATS_SECONDS", 0.0)

    tally = views_in_a_drop(client, service)

    assert tally.operations == ["BatchGetItem"] * VIEWS  # as before: a read per view


def full_then_freed_elsewhere(client, service):
    """A full event's page, then its seat freed by another process: the page again."""
    event = service.create_event(name="Tea", capacity=1, strategy="lock_table")
    service.book(event.id, name="Ada", email="ada@example.com")
    full = client.get(page_url(event)).content.decode()
    control_service(store=service.store).cancel(event.id, email="ada@example.com")
    return full, client.get(page_url(event)).content.decode()


def assert_full_only_from_a_read(full, again):
    assert "This event is full" in full
    assert "This event is full" not in again and "1 of 1 seat left" in again


def test_page__full_then_freed_elsewhere__full_is_read_again_never_remembered(client,
                                                                             service):
    assert_full_only_from_a_read(*full_then_freed_elsewhere(client, service))


def test_page__control_remembering_full__caught(client, service, monkeypatch):
    remembered = {}

    def remembers_everything(event_id):
        if event_id not in remembered:
            remembered[event_id] = service.availability(event_id)
        return remembered[event_id]

    monkeypatch.setattr(service, "page_availability", remembers_everything)

    with pytest.raises(AssertionError):
        assert_full_only_from_a_read(*full_then_freed_elsewhere(client, service))


def post_while_cooling(client, service, monkeypatch, **extra):
    """Sign up while the event cools down: (answer, limiter calls, store requests)."""
    event = service.create_event(name="Drop", capacity=5, strategy="lock_table")
    token = form_page(client, event.id)[1]
    cooling(service, event)
    counted = []
    limit = rate_limits.check_signup
    monkeypatch.setattr(rate_limits, "check_signup",
                        lambda *a, **k: counted.append(a) or limit(*a, **k))
    response, tally = tracked(service, lambda: client.post(page_url(event), {
        "name": "Ada Lovelace", "email": "ada@example.com", "token": token, **extra}))
    return response, counted, tally


def assert_turned_away_before_spending(response, counted, tally):
    html = response.content.decode()
    assert response.status_code == 429, html
    assert 1 <= int(response["Retry-After"]) <= 61
    assert "Many people are booking this event right now" in html
    assert 'value="Ada Lovelace"' in html and 'value="ada@example.com"' in html
    assert counted == [] and tally.requests == 0, (counted, tally.operations)


def test_post__event_cools_down__429_form_as_typed_no_limiter_write(client, service,
                                                                     monkeypatch):
    assert_turned_away_before_spending(*post_while_cooling(client, service, monkeypatch))


def test_post__control_without_asking_the_cool_down_first__caught(client, service,
                                                                  monkeypatch):
    monkeypatch.setattr(service, "turn_away_if_busy", lambda event_id: None)  # as it was

    with pytest.raises(AssertionError):
        assert_turned_away_before_spending(*post_while_cooling(client, service, monkeypatch))


def test_recheck__event_cools_down__busy_still_checking_page_with_retry_after(
        client, service, monkeypatch):
    response, counted, tally = post_while_cooling(client, service, monkeypatch, checks="1")

    html = response.content.decode()
    assert response.status_code == 429 and 1 <= int(response["Retry-After"]) <= 61
    assert "Many people are booking this event right now" in html
    assert re.search(r'<form id="check-again"', html) and counted == []


class Unforgetting(dict):
    """A control's memory of seats: a "full" answer does not make it forget."""

    def pop(self, *args):
        return None


class NeverTold(dict):
    """A control's memory of "full" answers: it keeps none."""

    def __setitem__(self, key, value):
        pass


def pages_after_a_full_answer(client, service):
    """The page (one seat left, remembered), the seat sold by another process, a person
    told "full" here; the page again at that instant, and once the "full" is 3 s old."""
    event = service.create_event(name="Tea", capacity=1, strategy="lock_table")
    service.bookings.clock = lambda: 1000.0
    assert "1 of 1 seat left" in client.get(page_url(event)).content.decode()
    control_service(store=service.store).book(event.id, name="Ada", email="ada@example.com")
    with pytest.raises(EventFull):
        service.book(event.id, name="Bo", email="bo@example.com")
    response, tally = tracked(service, lambda: client.get(page_url(event)))
    service.bookings.clock = lambda: 1003.0
    return response.content.decode(), client.get(page_url(event)).content.decode(), tally


def test_page__after_a_full_answer__no_count_then_full_from_a_read(client, service):
    # At once: neither the remembered "1 seat left" nor a "full" nobody read; the form
    # answers. Later: "full" from a read at that instant.
    at_once, later, tally = pages_after_a_full_answer(client, service)
    assert tally.operations == []  # a drop's page views after its sell-out: nothing sent
    assert "seat left" not in at_once and "This event is full" not in at_once
    assert GOING_FAST in at_once and 'name="email"' in at_once
    assert "This event is full" in later


def test_page__after_a_full_answer__control_still_remembering__caught(client, service):
    service.bookings._seats_seen = Unforgetting()
    service.bookings._told_full = NeverTold()

    at_once, _, _ = pages_after_a_full_answer(client, service)
    assert "1 of 1 seat left" in at_once  # the page it shows: a seat that is gone
