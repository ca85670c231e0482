"""slots says "full" from one consistent read (booking/strategies/slots/freed.py): the
sell-out verified once against the slot items at a freed epoch, then each rejection one
BatchGetItem, and every write that frees a slot bumps the epoch."""
import time
import uuid
from unittest import mock

import pytest
from django.utils import timezone

from booking.dynamo.metrics import RequestMeter
from booking.dynamo.tables import EVENT_LOCKS, SLOTS
from booking.errors import EventFull, EventNotFound
from booking.exactly_once.request_log import Request
from booking.exactly_once.riders import Riders
from booking.models import Order, Registration
from booking.strategies.base import now_ms
from booking.strategies.slots import SlotsStrategy
from booking.strategies.slots.freed import EPOCHS, epoch_key
from harness.controls import (EpochLastSlotsStrategy, IndexTrustingSlotsStrategy,
                              UnbumpedSlotsStrategy)
from tests.helpers import table
from tests.orders.test_orders import devconf


def registration(event_id, email):
    return Registration(event_id=event_id, email=email, name=email.split("@")[0],
                        registered_at=timezone.now(), registration_id=uuid.uuid4().hex,
                        request_id=uuid.uuid4().hex)


def plain(event):
    """A plain event's booking: one seat of the capacity."""
    return Order(seats={"capacity": 1}, capacities={"capacity": event.capacity})


def book(strategy, event, email):
    mine = registration(event.id, email)
    return strategy.book(event, mine, plain(event),
                         Riders(strategy.requests, Request.booking(mine)))


def cancel(strategy, event, email, release=None):
    request = Request.cancellation(uuid.uuid4().hex, event.id, email, None, time.time())
    return strategy.cancel(event, email, None, riders=Riders(strategy.requests, request),
                           release=release)


def epochs(event_id):
    return [(table(EVENT_LOCKS).get(epoch_key(event_id, n)) or {}).get("epoch")
            for n in range(EPOCHS)]


def metered(store, call):
    meter = RequestMeter().install(store)
    try:
        with meter.track() as tally:
            call()
    finally:
        meter.uninstall()
    return tally


def refused(hinted, event, email):
    with pytest.raises(EventFull):
        book(hinted, event, email)


def sold_out(service, capacity=1, held=0):
    """An event with ``capacity`` seats, ``held`` of them held for waiting-list offers (a
    minute), the rest booked; a process of its own (``hinted``) refused "full" once."""
    event = service.create_event(name="Tea", capacity=capacity, strategy="slots")
    hinted = SlotsStrategy(store=service.store)
    holds = []
    for n in range(held):
        now = now_ms()
        members, ref = hinted.hold_ops(event, f"held{n}@example.com", plain(event),
                                       until=now + 60_000, now=now)
        service.store.transact_write([op for _, op in members])
        holds.append((f"held{n}@example.com", now + 60_000, ref))
    for n in range(capacity - held):
        book(hinted, event, f"p{n}@example.com")
    refused(hinted, event, "bob@example.com")
    return event, hinted, holds


def test_book__verified_full__every_next_rejection_is_one_batch_read(service):
    event, hinted, _ = sold_out(service)

    for email in ("cy@example.com", "dee@example.com"):
        rejection = metered(service.store, lambda: refused(hinted, event, email))
        assert rejection.operations == ["BatchGetItem"] and rejection.writes == 0


def test_book__first_rejection__reads_the_epoch_then_the_slots_themselves(service):
    event, hinted, _ = sold_out(service)  # the event's epoch item now exists (at 0)
    other = SlotsStrategy(store=service.store)  # a process that has not verified yet

    first = metered(service.store, lambda: refused(other, event, "cy@example.com"))

    # the index lookup(s), the epoch, one consistent Query of the slots, the batch read
    assert first.operations[-3:] == ["GetItem", "Query", "BatchGetItem"]
    assert first.writes == 0
    assert epochs(event.id) == [0] * EPOCHS


def free_one(how, service, event, holds, freer):
    if how == "cancel":
        cancel(freer, event, "p0@example.com")
    elif how == "release_hold":
        email, until, ref = holds[0]
        service.store.transact_write(
            [op for _, op in freer.release_ops(event, email, plain(event), until=until, ref=ref)])
    else:  # a capacity increase: a new free slot
        freer.change_capacity(event, expected_version=service.get_event(event.id).version,
                              capacity=event.capacity + 1, changes={})


@pytest.mark.parametrize("how", ["cancel", "release_hold", "capacity_increase"])
@pytest.mark.parametrize("control", [False, True])
def test_book__slot_freed_between_two_rejections__next_booking_takes_it(service, how, control):
    # One process is refused twice (the second from its one read); another frees a slot;
    # the first process's next booking must get it. The control frees without bumping
    # the epoch: the verified "full" stands and Cy is refused with a seat free.
    event, hinted, holds = sold_out(service, capacity=2, held=1)
    refused(hinted, event, "bob2@example.com")
    freer = (UnbumpedSlotsStrategy if control else SlotsStrategy)(store=service.store)
    free_one(how, service, event, holds, freer)

    if control:
        refused(hinted, event, "cy@example.com")
        assert service.availability(event.id).remaining == 1  # "full" with a seat free
    else:
        assert book(hinted, event, "cy@example.com").email == \
            "cy@example.com"
        assert service.availability(event.id).remaining == 0
        refused(hinted, event, "dee@example.com")
        assert service.audit(event.id) == []


def test_book__verified_full_with_a_hold__hold_lapses__its_seat_taken_over(service):
    event = service.create_event(name="Tea", capacity=1, strategy="slots")
    hinted, now = SlotsStrategy(store=service.store), now_ms()
    until = now + 2000  # live through the refusals below, even on a loaded machine
    members, _ = hinted.hold_ops(event, "held@example.com", plain(event), until=until,
                                 now=now)
    service.store.transact_write([op for _, op in members])
    refused(hinted, event, "bob@example.com")  # verified full until the hold lapses
    refused(hinted, event, "bo@example.com")

    time.sleep(max(until + 100 - now_ms(), 0) / 1000)  # no write frees the slot: time does
    assert book(hinted, event, "cy@example.com").email == \
        "cy@example.com"


@pytest.mark.parametrize("control", [False, True])
def test_book__slot_freed_right_after_the_verifying_read__next_booking_takes_it(service,
                                                                                control):
    # Bob's booking reads the slot items (none free) and Ada cancels right after that
    # read: "full" was true at its instant, and the epoch read before it is now stale, so
    # Cy's booking looks again. The control reads the epoch after the slot items: it
    # remembers "full" at the epoch the cancellation made, and Cy is refused a free seat.
    event = service.create_event(name="Tea", capacity=1, strategy="slots")
    service.book(event.id, name="Ada", email="ada@example.com")
    hinted = (EpochLastSlotsStrategy if control else SlotsStrategy)(store=service.store)
    real_pages, cancelled = service.store.pages, []

    def pages(operation, request, page_size=None):
        yield from real_pages(operation, request, page_size)
        if operation == "query" and "IndexName" not in request and not cancelled:
            cancelled.append(True)  # the slot items' consistent read has answered
            service.cancel(event.id, email="ada@example.com")

    with mock.patch.object(service.store, "pages", pages):
        refused(hinted, event, "bob@example.com")
    assert cancelled

    if control:
        refused(hinted, event, "cy@example.com")
        assert service.availability(event.id).remaining == 1
    else:
        assert book(hinted, event, "cy@example.com").email == \
            "cy@example.com"


@pytest.mark.parametrize("control", [False, True])
def test_book__repair_lists_a_lost_free_slot__next_booking_takes_it(service, control):
    # A free slot lost its free mark (neither held nor listed): no read finds it free, so
    # "full" is verified; the audit's repair lists it again, which is a freeing write.
    event = service.create_event(name="Tea", capacity=2, strategy="slots")
    service.book(event.id, name="Ada", email="ada@example.com")
    slots = table(SLOTS)
    lost = next(item["slot"] for item in slots.query(
        key_condition="event_id = :e", values={":e": event.id}) if "holder" not in item)
    slots.update({"event_id": event.id, "slot": lost}, "REMOVE free_in")
    hinted = SlotsStrategy(store=service.store)
    refused(hinted, event, "bob@example.com")
    refused(hinted, event, "bo@example.com")

    repairer = (UnbumpedSlotsStrategy if control else SlotsStrategy)(store=service.store)
    assert repairer.repair(service.get_event(event.id)) == [f"listed free slot {lost} as free"]

    if control:
        refused(hinted, event, "cy@example.com")
        assert service.availability(event.id).remaining == 1
    else:
        assert book(hinted, event, "cy@example.com").email == \
            "cy@example.com"


class LaggingIndex:
    """The free-slot index has not caught up yet: it lists no free slot."""

    def _lookup(self, part, needed, start=None):
        return []


class LaggingSlots(LaggingIndex, SlotsStrategy):
    pass


class LaggingIndexTrustingSlots(LaggingIndex, IndexTrustingSlotsStrategy):
    pass


@pytest.mark.parametrize("control", [False, True])
def test_book__index_lags_behind_a_cancellation__booked_from_the_slots_themselves(service,
                                                                                  control):
    event, _, _ = sold_out(service)
    service.cancel(event.id, email="p0@example.com")
    late = (LaggingIndexTrustingSlots if control else LaggingSlots)(store=service.store)

    if control:  # "full" from the index alone: the freed slot is refused
        refused(late, event, "cy@example.com")
        assert service.availability(event.id).remaining == 1
    else:
        assert book(late, event, "cy@example.com").email == \
            "cy@example.com"


def test_event_without_epoch_item__first_free_creates_it_and_full_still_verified(service):
    # Events stored before the epoch have no epoch item: absent is epoch 0.
    event = service.create_event(name="Tea", capacity=1, strategy="slots")
    service.book(event.id, name="Ada", email="ada@example.com")
    assert epochs(event.id) == [None] * EPOCHS

    service.cancel(event.id, email="ada@example.com")
    assert epochs(event.id) == [1] * EPOCHS  # ADD made every copy
    hinted = SlotsStrategy(store=service.store)
    book(hinted, event, "bo@example.com")
    refused(hinted, event, "cy@example.com")
    assert metered(service.store, lambda: refused(
        hinted, event, "dee@example.com")).operations == ["BatchGetItem"]


def test_book__verified_full_then_event_deleted__not_found(service):
    event, hinted, _ = sold_out(service)
    service.delete_event(event.id)

    with pytest.raises(EventNotFound):
        book(hinted, event, "cy@example.com")
    assert epochs(event.id) == [None] * EPOCHS


@pytest.mark.parametrize("control", [False, True])
def test_order__quota_verified_full__cancelled_elsewhere__next_order_books(service, control):
    event = devconf(service, "slots", workshop=1)
    service.book(event.id, name="Ada", email="ada@example.com", tickets={"workshop-a": 1})
    for email in ("bob@example.com", "cy@example.com"):  # verified, then from the read
        with pytest.raises(EventFull) as full:
            service.book(event.id, name="B", email=email, tickets={"workshop-a": 1})
        assert full.value.quota == "workshop-a"
    freer = (UnbumpedSlotsStrategy if control else SlotsStrategy)(store=service.store)
    cancel(freer, service.get_event(event.id), "ada@example.com")

    if control:
        with pytest.raises(EventFull):
            service.book(event.id, name="Eve", email="eve@example.com",
                         tickets={"workshop-a": 1})
    else:
        assert service.book(event.id, name="Eve", email="eve@example.com",
                            tickets={"workshop-a": 1}).tickets == {"workshop-a": 1}
