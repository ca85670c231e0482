"""The shards strategy's own promises: a dry shard is never "full", the sold-out mark is
true when read and cheap to answer from, a throttled shard is left at once."""
import uuid
from unittest import mock

import pytest
from django.utils import timezone

from booking.dynamo.access import CancellationReason, TransactionCancelled
from booking.dynamo.tables import EVENT_LOCKS
from booking.errors import EventFull, InvalidBooking
from booking.models import Registration
from booking.strategies.shards import ShardsStrategy, capacity
from booking.strategies.shards.seats import (MARKERS, SHARDS, Hint, marker_key, shard_key,
                                             snapshots)
from harness.controls import HastyShardsStrategy, MarkingShardsStrategy
from tests.helpers import book_directly, table



def registration(event_id, email):
    return Registration(event_id=event_id, email=email, name=email.split("@")[0],
                        registered_at=timezone.now(), registration_id=uuid.uuid4().hex)


def shards_of(event_id):
    return [table(EVENT_LOCKS).get(shard_key(event_id, n)) for n in range(SHARDS)]


def test_provision__capacity_split_over_the_shards(service):
    event = service.create_event(name="Drop", capacity=21, strategy="shards")

    assert [s["capacity"] for s in shards_of(event.id)] == [3, 3, 3, 3, 3, 2, 2, 2]
    assert table(EVENT_LOCKS).get(marker_key(event.id)) == {**marker_key(event.id), "epoch": 0}


def test_book__picked_shard_dry__books_a_seat_elsewhere_until_none_is_left(service):
    event = service.create_event(name="Drop", capacity=3, strategy="shards")  # shards 0-2
    with mock.patch.object(Hint, "pick", return_value=SHARDS - 1):  # always picks a dry shard first
        for n in range(3):
            service.book(event.id, name=f"P{n}", email=f"p{n}@example.com")
        with pytest.raises(EventFull):
            service.book(event.id, name="Late", email="late@example.com")

    assert [s["confirmed_count"] for s in shards_of(event.id)][:3] == [1, 1, 1]
    assert table(EVENT_LOCKS).get(marker_key(event.id))["full_until"] > 0


def test_book__hasty_control__refuses_while_seats_are_free(service):
    event = service.create_event(name="Drop", capacity=3, strategy="shards")
    hasty = HastyShardsStrategy(store=service.store)

    with mock.patch.object(Hint, "pick", return_value=SHARDS - 1), pytest.raises(EventFull):
        book_directly(hasty, service, event, registration(event.id, "ada@example.com"))

    assert service.availability(event.id).confirmed == 0  # yet "full"


def test_book__sold_out__answered_from_one_read_without_a_write(service):
    event = service.create_event(name="Drop", capacity=1, strategy="shards")
    service.book(event.id, name="Ada", email="ada@example.com", request_id="r" * 32)
    with pytest.raises(EventFull):
        service.book(event.id, name="Bob", email="bob@example.com")  # marks it sold out

    with mock.patch.object(service.store, "transact_write") as write, \
            mock.patch.object(service.store, "transact_get") as read_all:
        with pytest.raises(EventFull):
            service.book(event.id, name="Cy", email="cy@example.com")
        again = service.book(event.id, name="Ada", email="ada@example.com", request_id="r" * 32)

    write.assert_not_called()
    read_all.assert_not_called()
    assert again.email == "ada@example.com"  # the request row still answers a repeat


def test_cancel__after_sold_out__clears_the_mark_and_the_seat_is_booked(service):
    event = service.create_event(name="Drop", capacity=1, strategy="shards")
    service.book(event.id, name="Ada", email="ada@example.com")
    with pytest.raises(EventFull):
        service.book(event.id, name="Bob", email="bob@example.com")

    service.cancel(event.id, email="ada@example.com")

    assert "full_until" not in table(EVENT_LOCKS).get(marker_key(event.id))
    assert service.book(event.id, name="Cy", email="cy@example.com").email == "cy@example.com"


def test_mark__on_the_marker_and_every_copy__each_read_answers__a_freed_seat_unmarks_all(
        service):
    event = service.create_event(name="Drop", capacity=1, strategy="shards")
    service.book(event.id, name="Ada", email="ada@example.com")
    with pytest.raises(EventFull):
        service.book(event.id, name="Bob", email="bob@example.com")  # marks it sold out
    markers = [table(EVENT_LOCKS).get(marker_key(event.id, copy)) for copy in range(MARKERS)]
    assert len({m["full_until"] for m in markers}) == 1

    for copy in range(MARKERS):  # whichever copy a rejection reads says "full", by reading
        with mock.patch("booking.strategies.shards.any_marker_key",
                        return_value=marker_key(event.id, copy)), \
                mock.patch.object(service.store, "transact_write") as write, \
                pytest.raises(EventFull):
            service.book(event.id, name="Cy", email=f"cy{copy}@example.com")
        write.assert_not_called()

    service.cancel(event.id, email="ada@example.com")
    assert not any("full_until" in table(EVENT_LOCKS).get(marker_key(event.id, copy))
                   for copy in range(MARKERS))
    with mock.patch("booking.strategies.shards.any_marker_key",
                    return_value=marker_key(event.id, MARKERS - 1)):
        assert service.book(event.id, name="Dee", email="dee@example.com").email == \
            "dee@example.com"


def test_mark__copies_not_made_yet__read_as_not_marked_and_the_booking_writes(service):
    event = service.create_event(name="Drop", capacity=2, strategy="shards")
    assert table(EVENT_LOCKS).get(marker_key(event.id, 1)) is None  # made by the first mark
    service.strategy("shards").dry.note(event.id, range(SHARDS))  # every shard seen dry
    with mock.patch("booking.strategies.shards.any_marker_key",
                    return_value=marker_key(event.id, 1)), \
            mock.patch.object(service.store, "batch_get", wraps=service.store.batch_get) as read:
        service.book(event.id, name="Ada", email="ada@example.com")

    read.assert_called()  # read first, found no mark on the copy not made yet, and wrote

    assert service.availability(event.id).confirmed == 1


@pytest.mark.parametrize("control", [False, True])
def test_mark__seat_freed_between_read_and_mark__mark_refused(service, control):
    # Bob's read finds no seat; Ada cancels before Bob marks the event sold out. The mark
    # must be refused, or Cy is told "full" with a seat free. The control marks blindly.
    event = service.create_event(name="Drop", capacity=1, strategy="shards")
    service.book(event.id, name="Ada", email="ada@example.com")
    strategy = (MarkingShardsStrategy if control else type(service.strategy("shards")))(
        store=service.store)
    strategy.between_read_and_write = lambda: service.cancel(event.id, email="ada@example.com")

    with mock.patch.object(Hint, "pick", return_value=SHARDS - 1):
        with pytest.raises(EventFull):  # true at the instant Bob's read saw
            book_directly(strategy, service, event, registration(event.id, "bob@example.com"))
        strategy.between_read_and_write = lambda: None
        if control:
            with pytest.raises(EventFull):
                book_directly(strategy, service, event, registration(event.id, "cy@example.com"))
        else:
            book_directly(strategy, service, event, registration(event.id, "cy@example.com"))

    assert service.availability(event.id).confirmed == (0 if control else 1)


def test_book__shard_throttled__goes_to_another_shard(service):
    event = service.create_event(name="Drop", capacity=16, strategy="shards")
    store, real, shards_tried = service.store, service.store.transact_write, []

    def throttled_once(operations, **kwargs):
        shards_tried.append(operations[1][1]["Key"]["event_id"]["S"])
        if len(shards_tried) == 1:
            raise TransactionCancelled([CancellationReason("None", None),
                                        CancellationReason("ThrottlingError", None)])
        return real(operations, **kwargs)

    with mock.patch.object(store, "transact_write", throttled_once):
        service.book(event.id, name="Ada", email="ada@example.com")

    assert len(shards_tried) == 2 and shards_tried[0] != shards_tried[1]


def test_change_capacity__shares_follow_counts_and_below_confirmed_refused(service):
    event = service.create_event(name="Drop", capacity=8, strategy="shards")
    for n in range(5):
        service.book(event.id, name=f"P{n}", email=f"p{n}@example.com")

    service.update_event(event.id, expected_version=1, capacity=21)
    shards = shards_of(event.id)
    assert sum(s["capacity"] for s in shards) == 21
    assert all(s["capacity"] >= s["confirmed_count"] for s in shards)
    with pytest.raises(InvalidBooking):
        service.update_event(event.id, expected_version=2, capacity=4)


def test_audit__shard_count_wrong__named_then_repaired(service):
    event = service.create_event(name="Drop", capacity=8, strategy="shards")
    service.book(event.id, name="Ada", email="ada@example.com")
    table(EVENT_LOCKS).update(shard_key(event.id, 5), "SET confirmed_count = :n",
                              values={":n": 3})

    assert [v.invariant for v in service.audit(event.id)] == ["counter_matches_registrations"]
    service.repair(event.id)
    assert service.audit(event.id) == []
    assert service.availability(event.id).confirmed == 1


class MarksEveryTime(ShardsStrategy):
    """The control: marks the event sold out after every read that found no seat."""

    def mark_sold_out(self, event_id, seen, sold_out):
        capacity.mark_sold_out(self, event_id, {q: seen[q].full_until() for q in sold_out},
                               seen["capacity"].marker)


@pytest.mark.parametrize("strategy_class, marks", [(ShardsStrategy, 1), (MarksEveryTime, 3)])
def test_mark__sold_out_read_three_times_at_one_epoch__marked_once(service, strategy_class,
                                                                   marks):
    event = service.create_event(name="Drop", capacity=1, strategy="shards")
    service.book(event.id, name="Ada", email="ada@example.com")
    strategy = strategy_class(store=service.store)
    seen = snapshots(strategy, event.id, ["capacity"])
    sent = []
    with mock.patch.object(capacity, "mark_sold_out",
                           side_effect=lambda *args: sent.append(args)):
        for _ in range(3):
            strategy.mark_sold_out(event.id, seen, ["capacity"])

    assert len(sent) == marks
