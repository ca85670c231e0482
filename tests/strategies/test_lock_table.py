import dataclasses
import time
import uuid
from unittest import mock

import pytest
from django.utils import timezone

from booking.dynamo.access import CancellationReason, TransactionCancelled
from booking.dynamo.metrics import RequestMeter
from booking.dynamo.tables import EVENT_LOCKS, REGISTRATIONS
from booking.dynamo.expressions import Members
from booking.errors import (BookingContention, EventFull, EventNotFound, InvalidBooking,
                            NotRegistered)
from booking.exactly_once.request_log import Request
from booking.exactly_once.riders import Riders
from booking.models import Order, Registration
from tests.helpers import hold_as_the_waiting_list, table


def test_book__lock_item_counts_and_versions(service):
    event = service.create_event(name="Talk", capacity=2, strategy="lock_table")

    service.book(event.id, name="Ada", email="ada@example.com")
    service.book(event.id, name="Bob", email="bob@example.com")
    service.cancel(event.id, email="ada@example.com")

    lock = table(EVENT_LOCKS).get({"event_id": event.id})
    assert lock == {"event_id": event.id, "capacity": 2, "confirmed_count": 1, "version": 4}


def test_book__transaction_conflict__retried_then_succeeds(service):
    event = service.create_event(name="Talk", capacity=2, strategy="lock_table")
    conflict = TransactionCancelled(
        [CancellationReason("None", None), CancellationReason("TransactionConflict", None)])
    store = service.store
    real = store.transact_write
    calls = []

    def flaky(operations, **kwargs):
        calls.append(1)
        if len(calls) < 3:
            raise conflict
        return real(operations, **kwargs)

    with mock.patch.object(store, "transact_write", flaky):
        service.book(event.id, name="Ada", email="ada@example.com")

    assert len(calls) == 3
    assert service.availability(event.id).confirmed == 1


def test_book__conflicts_never_end__raises_contention_and_stores_nothing(service):
    event = service.create_event(name="Talk", capacity=2, strategy="lock_table")
    conflict = TransactionCancelled([CancellationReason("TransactionConflict", None)] * 2)

    with mock.patch.object(service.store, "transact_write", side_effect=conflict) as write:
        with pytest.raises(BookingContention):
            service.book(event.id, name="Ada", email="ada@example.com")

    assert write.call_count == service.strategy("lock_table").retry.max_attempts
    assert list(table(REGISTRATIONS).query(key_condition="event_id = :e",
                                           values={":e": event.id})) == []


def test_book__throttled_until_retries_spent__contention_keeps_the_throttle_as_cause(service):
    from booking.strategies.base import RetryPolicy
    from harness.bench.drop import was_throttled

    event = service.create_event(name="Talk", capacity=2, strategy="lock_table")
    strategy = service.strategy("lock_table")
    strategy.retry = RetryPolicy(max_attempts=2, base_delay=0.001)
    throttled = TransactionCancelled(
        [CancellationReason("None", None), CancellationReason("ThrottlingError", None)])

    with mock.patch.object(service.store, "transact_write", side_effect=throttled):
        with pytest.raises(BookingContention) as raised:
            service.book(event.id, name="Ada", email="ada@example.com")

    assert raised.value.__cause__ is throttled  # the drop counts it as a throttle
    assert was_throttled(raised.value) and not was_throttled(BookingContention())


# --- the strategy's contract, called as the service and the waiting list call it --------
T = 1_000_000_000_000  # an epoch in milliseconds: these holds never read the real clock


def _registration(event, email, tickets=None):
    return Registration(event_id=event.id, email=email, name=email.split("@")[0],
                        registered_at=timezone.now(), registration_id=uuid.uuid4().hex,
                        request_id=uuid.uuid4().hex, ticket_counts=tickets)


def _book(strategy, event, email, tickets=None, order=None):
    registration = _registration(event, email, tickets)
    return strategy.book(event, registration, order or event.order(registration.tickets),
                         Riders(strategy.requests, Request.booking(registration)))


def _cancel(strategy, event, email, *, release=None, known=None):
    request = Request.cancellation(uuid.uuid4().hex, event.id, email, None, time.time(),
                                   tickets=release)
    return strategy.cancel(event, email, None, riders=Riders(strategy.requests, request),
                           known=known, release=release)


def _hold(strategy, event, email, tickets, *, until, now):
    return hold_as_the_waiting_list(strategy, event, email, event.order(tickets),
                                    until=until, now=now)


@pytest.fixture
def devconf(service):
    return service.create_event(
        name="DevConf", capacity=10, strategy="lock_table", quotas={"workshop": 2},
        ticket_types={"conference": [], "workshop": ["workshop"]}, max_per_order=4)


def test_book__stale_capacity_guess__corrected_from_the_refusal_then_booked(service):
    event = service.create_event(name="Talk", capacity=2, strategy="lock_table",
                                 max_per_order=2)
    strategy = service.strategy("lock_table")
    stale = Order(seats={"capacity": 2}, capacities={"capacity": 5})
    meter = RequestMeter().install(service.store)
    try:
        with meter.track() as booking:
            _book(strategy, event, "ada@example.com", {"admission": 2}, order=stale)
    finally:
        meter.uninstall()

    assert booking.operations == ["TransactWriteItems"] * 2
    with pytest.raises(EventFull) as full:  # the stored capacity, not the guess, decides
        _book(strategy, event, "bob@example.com", {"admission": 2}, order=stale)
    assert full.value.quota == "capacity"
    assert table(EVENT_LOCKS).get({"event_id": event.id})["confirmed_count"] == 2


def test_book__one_seat_after_a_capacity_edit__one_request_whatever_was_read(service):
    # A plain booking compares the stored count with the stored capacity: a capacity the
    # service read before an edit costs it nothing (a guess would cost a refused write).
    event = service.create_event(name="Talk", capacity=1, strategy="lock_table")
    strategy = service.strategy("lock_table")
    stale = Order(seats={"capacity": 1}, capacities={"capacity": 5})
    meter = RequestMeter().install(service.store)
    try:
        with meter.track() as booking:
            _book(strategy, event, "ada@example.com", order=stale)
    finally:
        meter.uninstall()

    assert booking.operations == ["TransactWriteItems"]
    with pytest.raises(EventFull):
        _book(strategy, event, "bob@example.com", order=stale)
    assert table(EVENT_LOCKS).get({"event_id": event.id})["confirmed_count"] == 1


def test_book__lock_item_gone__event_not_found_and_nothing_stored(service):
    event = service.create_event(name="Talk", capacity=2, strategy="lock_table")
    strategy = service.strategy("lock_table")
    table(EVENT_LOCKS).delete({"event_id": event.id})

    with pytest.raises(EventNotFound):
        _book(strategy, event, "ada@example.com")
    assert table(REGISTRATIONS).get({"event_id": event.id, "email": "ada@example.com"}) is None


def test_order__each_quota_its_lock_item__full_names_the_quota__part_cancelled(service,
                                                                               devconf):
    strategy = service.strategy("lock_table")
    _book(strategy, devconf, "ada@example.com", {"conference": 1, "workshop": 2})
    with pytest.raises(EventFull) as full:
        _book(strategy, devconf, "bob@example.com", {"workshop": 1})
    assert full.value.quota == "workshop"

    part = _cancel(strategy, devconf, "ada@example.com", release={"workshop": 1})

    assert part.tickets == {"workshop": 1}
    seats = strategy.availability(devconf)
    assert (seats.confirmed, seats.further["workshop"].confirmed) == (2, 1)
    assert table(EVENT_LOCKS).get({"event_id": f"{devconf.id}#workshop"})["confirmed_count"] == 1
    with pytest.raises(InvalidBooking):  # more than the order holds: nothing freed
        _cancel(strategy, devconf, "ada@example.com", release={"workshop": 2})
    assert strategy.audit(devconf) == []


def test_cancel__link_names_a_registration_without_tickets__one_transaction(service):
    event = service.create_event(name="Talk", capacity=2, strategy="lock_table")
    strategy = service.strategy("lock_table")
    booked = _book(strategy, event, "ada@example.com")
    meter = RequestMeter().install(service.store)
    try:
        with meter.track() as cancellation:
            _cancel(strategy, event, "ada@example.com", known=booked)
    finally:
        meter.uninstall()

    assert cancellation.operations == ["TransactWriteItems"]
    with pytest.raises(NotRegistered):  # the same link again: nothing left to free
        _cancel(strategy, event, "ada@example.com", known=booked)
    assert table(EVENT_LOCKS).get({"event_id": event.id})["confirmed_count"] == 0


def test_cancel__link_on_an_event_with_orders__read_first_so_every_seat_is_freed(service,
                                                                               devconf):
    strategy = service.strategy("lock_table")
    booked = _book(strategy, devconf, "ada@example.com", {"conference": 1, "workshop": 2})
    link = dataclasses.replace(booked, ticket_counts=None)  # what a link names: no tickets

    removed = _cancel(strategy, devconf, "ada@example.com", known=link)

    assert removed.tickets == {"conference": 1, "workshop": 2}
    seats = strategy.availability(devconf)
    assert (seats.confirmed, seats.further["workshop"].confirmed) == (0, 0)
    assert strategy.audit(devconf) == []


def test_hold__one_seat_stored_bare__a_booking_takes_it_over_once_lapsed(service):
    event = service.create_event(name="Talk", capacity=1, strategy="lock_table")
    strategy = service.strategy("lock_table")
    _hold(strategy, event, "held@example.com", {"admission": 1}, until=T + 100, now=T)
    assert "hold_seats" not in table(EVENT_LOCKS).get({"event_id": event.id})
    with mock.patch("booking.strategies.lock_table.now_ms", return_value=T + 99), \
            pytest.raises(EventFull):
        _book(strategy, event, "bob@example.com")

    with mock.patch("booking.strategies.lock_table.now_ms", return_value=T + 100):
        _book(strategy, event, "cy@example.com")

    assert strategy.holds(event.id) == {}
    assert table(EVENT_LOCKS).get({"event_id": event.id})["confirmed_count"] == 1
    assert strategy.audit(event) == []


def test_hold__an_order_in_every_quota__never_taken_over__released_whole(service, devconf):
    strategy = service.strategy("lock_table")
    order = {"workshop": 2}
    ref = _hold(strategy, devconf, "ada@example.com", order, until=T + 100, now=T)
    with pytest.raises(EventFull):  # lapsed, but an order's hold is released, not taken
        _hold(strategy, devconf, "bob@example.com", {"workshop": 1}, until=T + 300, now=T + 200)
    with pytest.raises(TransactionCancelled):  # another offer's time: not this hold
        strategy.store.transact_write(Members(strategy.release_ops(
            devconf, "ada@example.com", devconf.order(order), until=T + 99, ref=ref)).operations)

    assert strategy.release_expired(devconf, now=T + 200) == 2  # the capacity's and the workshop's
    seats = strategy.availability(devconf)
    assert (seats.held, seats.confirmed, seats.further["workshop"].held) == (0, 0, 0)
    _hold(strategy, devconf, "bob@example.com", {"workshop": 1}, until=T + 300, now=T + 200)
    assert strategy.audit(devconf) == []


def test_accept__turns_every_quota_hold_into_the_order(service, devconf):
    strategy = service.strategy("lock_table")
    order = {"conference": 1, "workshop": 1}
    ref = _hold(strategy, devconf, "ada@example.com", order, until=T + 100, now=T)
    registration = _registration(devconf, "ada@example.com", order)

    strategy.store.transact_write(Members(strategy.accept_ops(
        devconf, registration, devconf.order(order), now=T + 50, ref=ref)).operations)

    assert strategy.holds(devconf.id) == {}
    assert strategy.find(devconf.id, "ada@example.com").tickets == order
    seats = strategy.availability(devconf)
    assert (seats.confirmed, seats.held, seats.further["workshop"].confirmed) == (2, 0, 1)
    assert strategy.audit(devconf) == []
