import threading
import time

import pytest
from django.utils import timezone

from tests.helpers import table
from booking.dynamo.tables import SLOTS
from booking.dynamo.access import TransactionCancelled
from booking.errors import EventFull
from booking.models import Registration
from booking.strategies.base import now_ms
from booking.wiring import get_booking_service
from tests.orders.test_orders import devconf
from tests.strategies.interleaving import book_from_two_threads


def slots_of(event_id):
    return list(table(SLOTS).query(key_condition="event_id = :e", values={":e": event_id}))


def test_create_event__one_free_slot_per_seat(service):
    event = service.create_event(name="Talk", capacity=30, strategy="slots")

    slots = slots_of(event.id)

    assert sorted(s["slot"] for s in slots) == list(range(30))
    assert all(s["free_in"] == event.id and "holder" not in s for s in slots)
    assert len({s["shuffle"] for s in slots}) > 1


def test_book_and_cancel__claim_and_free_one_slot(service):
    event = service.create_event(name="Talk", capacity=3, strategy="slots")

    service.book(event.id, name="Ada", email="ada@example.com")
    claimed = [s for s in slots_of(event.id) if "holder" in s]
    assert [(s["holder"], "free_in" in s) for s in claimed] == [("ada@example.com", False)]

    service.cancel(event.id, email="ada@example.com")
    assert all("holder" not in s and s["free_in"] == event.id for s in slots_of(event.id))


def test_book__both_read_the_last_free_slot_then_both_claim__one_wins(server_store):
    """Deterministic interleaving: both callers look up free slots before either writes.

    Runs against the embedded server: in-process moto is not safe for concurrent threads
    (a failed transaction's rollback can undo another thread's committed write).
    """
    service = get_booking_service()
    event = service.create_event(name="Last seat", capacity=1, strategy="slots")
    strategy = service.strategy("slots")
    both_read = threading.Barrier(2)
    first_round = threading.local()

    def wait_for_the_other():
        if not getattr(first_round, "done", False):
            first_round.done = True
            both_read.wait(timeout=10)

    strategy.between_read_and_write = wait_for_the_other
    try:
        outcomes = book_from_two_threads(service, event.id)
    finally:
        del strategy.between_read_and_write

    assert sorted(outcomes) == ["EventFull", "ok"]
    assert service.availability(event.id).confirmed == 1


def test_book__capacity_beyond_slot_limit__refused(service):
    from booking.errors import InvalidBooking

    with pytest.raises(InvalidBooking):
        service.create_event(name="Huge", capacity=10_001, strategy="slots")


def test_book__all_slots_taken__full_even_if_index_lists_none(service):
    event = service.create_event(name="Talk", capacity=2, strategy="slots")
    service.book(event.id, name="A", email="a@example.com")
    service.book(event.id, name="B", email="b@example.com")

    with pytest.raises(EventFull):
        service.book(event.id, name="C", email="c@example.com")


def test_order__a_lapsed_holds_slot_taken_over__its_offer_no_longer_accepted(service):
    # Time releases a hold: once lapsed, its slot is a free seat to an order as to a
    # plain booking; the offer it held for can then no longer be accepted.
    event = devconf(service, "slots", workshop=1)
    strategy, order = service.strategy("slots"), event.order({"workshop-a": 1})
    now = now_ms()
    until = now + 2000  # live through the refusal below, even on a loaded machine
    members, ref = strategy.hold_ops(event, "held@example.com", order, until=until, now=now)
    service.store.transact_write([op for _, op in members])
    with pytest.raises(EventFull) as full:
        service.book(event.id, name="Bo", email="bo@example.com", tickets={"workshop-a": 1})
    assert full.value.quota == "workshop-a"

    time.sleep(max(until + 100 - now_ms(), 0) / 1000)
    assert service.book(event.id, name="Cy", email="cy@example.com",
                        tickets={"workshop-a": 1}).tickets == {"workshop-a": 1}
    held = Registration(event_id=event.id, email="held@example.com", name="Held",
                        registered_at=timezone.now(), registration_id="held" * 8,
                        ticket_counts={"workshop-a": 1})
    with pytest.raises(TransactionCancelled):
        service.store.transact_write(
            [op for _, op in strategy.accept_ops(event, held, order, now=now_ms(), ref=ref)])
    assert strategy.release_expired(event, now=now_ms()) == 1  # its capacity slot
    assert service.availability(event.id).quotas["workshop-a"].confirmed == 1
    assert service.audit(event.id) == []
