"""Shedding load before it queues: once the store throttled an event's writes, the next
bookings for that event are answered 429 with Retry-After at once, without a request to the
store, for a moment; another event's bookings go on. Over the API, against DynamoDB Local
behind the fault proxy (throttling every write). The control is the service built here
without its cool-down: every next booking sends more writes into the throttle."""
import json
import time
import uuid

import pytest

from booking.entry import limits as rate_limits
from booking.wiring import install, service_from_settings
from localdynamo.faults import THROTTLE
from tests.conftest import proxied_tables

COOL_DOWN = 5.0
DEADLINE = 0.8


@pytest.fixture
def throttling(local_server, settings):
    """(proxy, store) with the booking settings this test needs: a short deadline, no
    abuse limits (they write counters), a cool-down long enough to see."""
    settings.BOOKING_REQUEST_DEADLINE = DEADLINE
    settings.BOOKING_SHED_SECONDS = COOL_DOWN
    settings.BOOKING_SIGNUP_RATE = settings.BOOKING_SIGNUP_EMAIL_RATE = "off"
    with proxied_tables(local_server, "h") as proxied:
        yield proxied


class Sent:
    """Counts the requests ``client`` sends to the store (every attempt)."""

    def __init__(self, client):
        self.client, self.count = client, 0
        self.unique_id = f"sent-{uuid.uuid4().hex}"
        client.meta.events.register("before-send.dynamodb", self._sent, unique_id=self.unique_id)

    def _sent(self, **_):
        self.count += 1

    def close(self):
        self.client.meta.events.unregister("before-send.dynamodb", unique_id=self.unique_id)


def book(client, event_id, number):
    started = time.monotonic()
    response = client.post(f"/api/v1/events/{event_id}/registrations/",
                           json.dumps({"name": "Someone", "email": f"p{number}@example.com"}),
                           content_type="application/json",
                           HTTP_IDEMPOTENCY_KEY=f"key-{number}")
    return response, time.monotonic() - started


def after_a_throttle(client, proxy, service):
    """The first booking is throttled; the store keeps throttling writes. Returns the next
    five bookings' answers and times, and the store requests they sent."""
    install(service)
    event = service.create_event(name="Drop", capacity=100, strategy="lock_table")
    proxy.injector.script(THROTTLE, 100_000, only_mutating=True)
    first, taken = book(client, event.id, 0)
    # Throttled until its deadline: "pending, ask again with the same key", in time.
    assert first.status_code == 202 and first["Retry-After"], first.content
    assert taken <= DEADLINE + 0.6, taken
    sent = Sent(service.store.client)
    try:
        answers = [book(client, event.id, number) for number in range(1, 6)]
    finally:
        sent.close()
        proxy.injector.clear_script()
    return event, answers, sent.count


def test_after_a_throttle__next_bookings_429_fast_without_a_store_request(client, throttling):
    proxy, store = throttling
    service = service_from_settings(store=store)

    event, answers, sent = after_a_throttle(client, proxy, service)

    assert sent == 0
    for response, taken in answers:
        assert response.status_code == 429, response.content
        assert response.json()["type"].endswith("/overloaded")
        assert 1 <= int(response["Retry-After"]) <= 2 * COOL_DOWN + 1
        assert taken < 0.2, taken
    # Never "full" from the cool-down, and another event is not turned away.
    other = service.create_event(name="Quiet", capacity=5, strategy="lock_table")
    assert book(client, other.id, 9)[0].status_code == 201


def test_control__no_cool_down__every_next_booking_writes_into_the_throttle(client,
                                                                           throttling):
    proxy, store = throttling
    service = service_from_settings(store=store)
    service.bookings.cool_down = None

    event, answers, sent = after_a_throttle(client, proxy, service)

    assert sent >= 5 and all(response.status_code != 429 for response, _ in answers)


def test_after_a_throttle__turned_away_bookings_spend_no_limiter_write(client, throttling,
                                                                       monkeypatch):
    # The cool-down is asked before the signup limits, whose counter write (even a refused
    # conditional one) would cost a write unit per turned-away ask.
    proxy, store = throttling
    service = service_from_settings(store=store)
    counted = []
    monkeypatch.setattr(rate_limits, "check_signup", lambda *args, **kwargs: counted.append(args))

    event, answers, sent = after_a_throttle(client, proxy, service)

    assert [response.status_code for response, _ in answers] == [429] * 5
    assert len(counted) == 1  # the first booking's, which was sent (and throttled)


def full_during_cool_down(client, service):
    """A sold-out event (one seat; a second person told "full" here), then the store's
    throttle: the answer to a third person while the event cools down."""
    from booking.service.shedding import CoolDown

    event = service.create_event(name="Gone", capacity=1, strategy="lock_table")
    assert book(client, event.id, 0)[0].status_code == 201
    assert book(client, event.id, 1)[0].status_code == 409
    service.bookings.cool_down = CoolDown(COOL_DOWN)
    service.bookings.cool_down.throttled(event.id)
    return book(client, event.id, 2)[0]


def test_after_a_sell_out__cool_down__full_is_still_told_from_a_read(client, service):
    response = full_during_cool_down(client, service)

    assert response.status_code == 409 and response.json()["type"].endswith("/event-full")


def test_after_a_sell_out__control_strategy_without_its_hint__only_busy(client, service,
                                                                        monkeypatch):
    strategy = service.strategy("lock_table")
    monkeypatch.setattr(strategy, "sold_out_lately", lambda event_id: False)

    response = full_during_cool_down(client, service)

    assert response.status_code == 429  # what the person met before: only "busy"
