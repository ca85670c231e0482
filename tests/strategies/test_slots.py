import threading

import pytest

from tests.helpers import table
from booking.dynamo.tables import SLOTS
from booking.errors import EventFull
from booking.wiring import get_booking_service
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
