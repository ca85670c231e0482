"""The control strategy overbooks when two callers read before either writes."""
import threading

from booking.wiring import get_booking_service
from tests.strategies.interleaving import book_from_two_threads


def test_book__both_read_then_both_write__overbooks(server_store):
    service = get_booking_service()
    event = service.create_event(name="Last seat", capacity=1, strategy="unguarded")
    strategy = service.strategy("unguarded")
    both_read = threading.Barrier(2)
    strategy.between_read_and_write = lambda: both_read.wait(timeout=10)
    try:
        outcomes = book_from_two_threads(service, event.id)
    finally:
        del strategy.between_read_and_write

    assert outcomes == ["ok", "ok"]
    assert service.availability(event.id).confirmed == 2  # write skew: 2 for 1 seat
