"""The cool-down starts only when the store's throttling left a person without a definite
answer. A throttle the booking absorbed (botocore's retry went through and the person got a
seat), or one met by a booking that then failed for another reason (the store's 500s), does
not turn the event's next bookings away; a booking throttled until its deadline does.
Against DynamoDB Local behind the fault proxy. The control is a cool-down built here that
starts on every throttle seen, as it did before: it turns the next booking away."""

import pytest

from booking.dynamo.access import throttles
from booking.errors import OutcomeUnknown, Overloaded, StillDeciding, StoreUnavailable
from booking.service.shedding import CoolDown
from booking.wiring import service_from_settings
from localdynamo.faults import ERROR500, THROTTLE
from tests.conftest import proxied_tables

COOL_DOWN = 30.0  # long enough that the next booking surely falls inside it


class EveryThrottle(CoolDown):
    """The control: cools the event down after any throttle, answered or not."""

    def after(self, event_id, *, throttled, denied):
        if throttled:
            self.throttled(event_id)


@pytest.fixture
def proxied(local_server, settings):
    settings.BOOKING_REQUEST_DEADLINE = 2.0
    settings.BOOKING_SHED_SECONDS = COOL_DOWN
    settings.BOOKING_SIGNUP_RATE = settings.BOOKING_SIGNUP_EMAIL_RATE = "off"
    with proxied_tables(local_server, "c") as proxied:
        yield proxied


def booked_through_one_throttle(proxy, service, strategy):
    """Ada's booking write is throttled once, botocore's retry books her: the event."""
    event = service.create_event(name="Drop", capacity=80, strategy=strategy)
    proxy.injector.script(THROTTLE, 1, only_mutating=True)
    before = throttles()
    ada = service.book(event.id, name="Ada", email="ada@example.com")
    assert ada.event_id == event.id and throttles() == before + 1  # the throttle was met
    return event


@pytest.mark.parametrize("strategy", ["shards", "lock_table"])
def test_book__throttle_absorbed__next_booking_not_turned_away(proxied, strategy):
    proxy, store = proxied
    service = service_from_settings(store=store)
    event = booked_through_one_throttle(proxy, service, strategy)

    assert service.bookings.cool_down.retry_after(event.id) is None
    service.book(event.id, name="Bea", email="bea@example.com")


def test_control__cool_down_on_every_throttle__next_booking_turned_away(proxied):
    proxy, store = proxied
    service = service_from_settings(store=store)
    service.bookings.cool_down = EveryThrottle(COOL_DOWN)
    event = booked_through_one_throttle(proxy, service, "shards")

    with pytest.raises(Overloaded):
        service.book(event.id, name="Bea", email="bea@example.com")


def throttled_then_failing(proxy, service):
    """Ada's write is throttled once, then every write gets a 500 until her deadline: she
    gets no definite answer, and not because of the throttle. The event."""
    event = service.create_event(name="Drop", capacity=80, strategy="shards")
    proxy.injector.script(THROTTLE, 1, only_mutating=True)
    proxy.injector.script(ERROR500, 100_000, only_mutating=True)
    before = throttles()
    try:
        with pytest.raises((StoreUnavailable, OutcomeUnknown)):
            service.book(event.id, name="Ada", email="ada@example.com")
    finally:
        proxy.injector.clear_script()
    assert throttles() == before + 1
    return event


def test_book__throttle_then_another_failure__next_booking_not_turned_away(proxied):
    proxy, store = proxied
    service = service_from_settings(store=store)
    event = throttled_then_failing(proxy, service)

    assert service.bookings.cool_down.retry_after(event.id) is None
    service.book(event.id, name="Bea", email="bea@example.com")


def test_control__throttle_then_another_failure__turned_away_on_every_throttle(proxied):
    proxy, store = proxied
    service = service_from_settings(store=store)
    service.bookings.cool_down = EveryThrottle(COOL_DOWN)
    event = throttled_then_failing(proxy, service)

    with pytest.raises(Overloaded):
        service.book(event.id, name="Bea", email="bea@example.com")


def test_book__throttled_until_its_deadline__next_booking_turned_away(proxied):
    proxy, store = proxied
    service = service_from_settings(store=store)
    event = service.create_event(name="Drop", capacity=80, strategy="shards")
    proxy.injector.script(THROTTLE, 100_000, only_mutating=True)
    try:
        with pytest.raises(StillDeciding):
            service.book(event.id, name="Ada", email="ada@example.com")
    finally:
        proxy.injector.clear_script()

    with pytest.raises(Overloaded):
        service.book(event.id, name="Bea", email="bea@example.com")


def test_after__only_an_unanswered_throttle_starts_it():
    now = [100.0]
    cool_down = CoolDown(5.0, clock=lambda: now[0])

    cool_down.after("answered", throttled=True, denied=False)
    cool_down.after("calm", throttled=False, denied=False)
    cool_down.after("denied", throttled=True, denied=True)

    assert cool_down.retry_after("answered") is None and cool_down.retry_after("calm") is None
    assert 1 <= cool_down.retry_after("denied") <= 10
    now[0] += 5.0
    assert cool_down.retry_after("denied") is None
