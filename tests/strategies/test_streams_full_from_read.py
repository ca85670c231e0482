""""Full" from a read on ``streams``: once a process saw a request of the event rejected,
its next bookings of that event read the event item first, and one without room is
refused from that read, nothing written (no pending registration for the decider to
reject, no second write on the registrations' partition). The read, never the memory,
decides: a seat freed since is accepted."""
from unittest import mock

import pytest

from booking.dynamo.metrics import RequestMeter
from booking.errors import AlreadyRegistered, EventFull
from booking.models import CONFIRMED, PENDING, REJECTED
from tests.helpers import book_directly
from tests.strategies.test_sold_out import own_process, registration


def sold_out_and_seen(service, control=False):
    """Capacity 1: Ann confirmed, Bo rejected by the decider; the returned strategy (its
    own process) looked Bo's request up and saw the rejection."""
    event = service.create_event(name="Queue", capacity=1, strategy="streams")
    hinted = own_process(service, "streams", control)
    for email, status in (("ann@example.com", CONFIRMED), ("bo@example.com", REJECTED)):
        pending = book_directly(hinted, service, event, registration(event.id, email))
        assert pending.status == PENDING
        assert hinted.decide(pending) == status
    assert hinted.find(event.id, "bo@example.com").status == REJECTED
    return event, hinted


def test_book__rejection_seen__next_refusal_is_one_read_no_write(service):
    event, hinted = sold_out_and_seen(service)
    assert hinted.sold_out_lately(event.id)

    meter = RequestMeter().install(service.store)
    try:
        with meter.track() as refusal, pytest.raises(EventFull):
            book_directly(hinted, service, event, registration(event.id, "cy@example.com"))
    finally:
        meter.uninstall()

    assert refusal.operations == ["BatchGetItem"]
    assert hinted.find(event.id, "cy@example.com") is None  # nothing for the decider


def test_book__no_rejection_seen__accepted_pending_as_ever(service):
    event = service.create_event(name="Queue", capacity=1, strategy="streams")
    fresh = own_process(service, "streams")
    for email in ("ann@example.com", "bo@example.com"):
        book_directly(fresh, service, event, registration(event.id, email))
    # Nobody looked a rejection up in this process: no read first, the write accepts.
    assert not fresh.sold_out_lately(event.id)
    assert book_directly(fresh, service, event,
                         registration(event.id, "cy@example.com")).status == PENDING


@pytest.mark.parametrize("control", [False, True])
def test_book__rejection_seen_then_seat_freed_elsewhere__accepted_not_full(service, control):
    # The control trusts its memory and tells Cy "full" while a seat is free.
    event, hinted = sold_out_and_seen(service, control)
    service.cancel(event.id, email="ann@example.com")  # another process frees the seat

    if control:
        with pytest.raises(EventFull):
            book_directly(hinted, service, event, registration(event.id, "cy@example.com"))
        assert service.availability(event.id).remaining == 1  # "full" with room
        return
    cy = book_directly(hinted, service, event, registration(event.id, "cy@example.com"))
    assert cy.status == PENDING
    assert hinted.decide(cy) == CONFIRMED
    assert not hinted.sold_out_lately(event.id)  # the read found room: written next time


def test_book__rejection_seen__repeat_and_registered_answered_as_the_write_would(service):
    event, hinted = sold_out_and_seen(service)
    ann = hinted.find(event.id, "ann@example.com")
    with mock.patch.object(service.store, "transact_write") as write:
        with pytest.raises(AlreadyRegistered):  # Ann holds her seat: a new request of hers
            book_directly(hinted, service, event, registration(event.id, "ann@example.com"))
        with pytest.raises(EventFull):  # Bo was rejected: asking anew is a new request
            book_directly(hinted, service, event, registration(event.id, "bo@example.com"))
    write.assert_not_called()
    assert service.find_registration(event.id, email="ann@example.com") == ann
