from unittest import mock

import pytest

from booking.dynamo.access import CancellationReason, TransactionCancelled
from tests.helpers import table
from booking.dynamo.tables import EVENT_LOCKS, REGISTRATIONS
from booking.errors import BookingContention


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
