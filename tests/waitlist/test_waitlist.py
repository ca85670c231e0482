"""The waiting list on every guarded strategy (moto, in process): joining, offers that hold
a seat, accepting, leaving, and offers released by time."""
import time
from datetime import datetime, timedelta, timezone

import pytest

from booking.waitlist import engine as waitlist_engine
from booking.errors import (AlreadyRegistered, AlreadyWaiting, BookingClosed, EventFull,
                            InvalidBooking, NotWaiting, OfferExpired, SeatsAvailable)
from booking.models import BOOKED, EXPIRED, LEFT, OFFERED, WAITING

GUARDED = ("aggregate", "lock_table", "slots", "shards")


@pytest.fixture(params=GUARDED)
def full_event(request, service):
    event = service.create_event(name="Small room", capacity=1, strategy=request.param)
    service.book(event.id, name="Ada", email="ada@example.com")
    return event


def cancel(service, event_id, email="ada@example.com"):
    """Cancel, and wait for the offer made right after it (a background thread)."""
    service.cancel(event_id, email=email)
    waitlist_engine.flush()


def statuses(service, event):
    return [(e.email, e.status) for e in service.waiting_list(event.id)]


def test_join__event_not_full__refused_with_nothing_stored(service):
    event = service.create_event(name="Room", capacity=2, strategy="lock_table")
    with pytest.raises(SeatsAvailable):
        service.join_waiting_list(event.id, name="Bo", email="bo@example.com")
    assert service.waiting_list(event.id) == []


def test_join__full_event__in_join_order_one_entry_per_person(service, full_event):
    first = service.join_waiting_list(full_event.id, name="Bo", email="bo@example.com",
                                      request_id="join-request-1")
    service.join_waiting_list(full_event.id, name="Cy", email="cy@example.com")

    with pytest.raises(AlreadyWaiting):
        service.join_waiting_list(full_event.id, name="Bo", email=" BO@Example.com ")
    with pytest.raises(AlreadyRegistered):
        service.join_waiting_list(full_event.id, name="Ada", email="ada@example.com")
    repeat = service.join_waiting_list(full_event.id, name="Bo", email="bo@example.com",
                                       request_id="join-request-1")
    with pytest.raises(InvalidBooking):
        service.join_waiting_list(full_event.id, name="Di", email="di@example.com",
                                  request_id="join-request-1")
    assert repeat == first
    assert [(e.position, e.email, e.status) for e in service.waiting_list(full_event.id)] == [
        (1, "bo@example.com", WAITING), (2, "cy@example.com", WAITING)]


def test_cancel__first_in_line_offered_at_once__seat_held_then_accepted(service, full_event):
    service.join_waiting_list(full_event.id, name="Bo", email="bo@example.com")
    service.join_waiting_list(full_event.id, name="Cy", email="cy@example.com")

    cancel(service, full_event.id)

    assert statuses(service, full_event) == [("bo@example.com", OFFERED),
                                             ("cy@example.com", WAITING)]
    availability = service.availability(full_event.id)
    assert (availability.confirmed, availability.held, availability.is_full) == (0, 1, True)
    with pytest.raises(EventFull):
        service.book(full_event.id, name="Eve", email="eve@example.com")
    with pytest.raises(NotWaiting):  # waiting, but not offered anything yet
        service.accept_offer(full_event.id, email="cy@example.com")
    registration = service.accept_offer(full_event.id, email="bo@example.com")
    again = service.accept_offer(full_event.id, email="bo@example.com")

    assert again == registration
    assert service.find_registration(full_event.id, email="bo@example.com") == registration
    assert statuses(service, full_event)[0] == ("bo@example.com", BOOKED)
    availability = service.availability(full_event.id)
    assert (availability.confirmed, availability.held) == (1, 0)
    assert service.audit(full_event.id) == []
    outbox = {row["kind"] for row in service.requests.outbox.pending()}
    assert "offer" in outbox


def test_offer__not_accepted_in_time__expires_and_passes_to_the_next(service, full_event):
    # The waiting list's own clock, moved on by hand: a slow machine cannot let the
    # next offer lapse too before the pass looks.
    waitlist, clock = service.waitlist.engine, [time.time() * 1000]
    waitlist.clock, waitlist.offer_seconds = (lambda: round(clock[0])), 60
    service.join_waiting_list(full_event.id, name="Bo", email="bo@example.com")
    service.join_waiting_list(full_event.id, name="Cy", email="cy@example.com")
    cancel(service, full_event.id)
    clock[0] += 61_000  # Bo's offer ran out

    with pytest.raises(OfferExpired):
        service.accept_offer(full_event.id, email="bo@example.com")
    outcome = service.waiting_list_pass()

    assert outcome == {"offers_expired": 1, "seats_offered": 1}
    assert statuses(service, full_event) == [("bo@example.com", EXPIRED),
                                             ("cy@example.com", OFFERED)]
    assert service.accept_offer(full_event.id, email="cy@example.com").email == "cy@example.com"
    assert service.availability(full_event.id).confirmed == 1
    assert service.audit(full_event.id) == []


def test_offer__expired__anyone_may_book_the_seat_without_anyone_acting(service, full_event):
    service.waitlist.engine.offer_seconds = 0.3
    service.join_waiting_list(full_event.id, name="Bo", email="bo@example.com")
    cancel(service, full_event.id)
    time.sleep(0.4)

    service.book(full_event.id, name="Eve", email="eve@example.com")  # takes the lapsed hold

    with pytest.raises(EventFull):
        service.book(full_event.id, name="Fay", email="fay@example.com")
    with pytest.raises(OfferExpired):
        service.accept_offer(full_event.id, email="bo@example.com")
    service.waiting_list_pass()
    assert statuses(service, full_event) == [("bo@example.com", EXPIRED)]
    assert service.availability(full_event.id).confirmed == 1
    assert service.audit(full_event.id) == []


def test_leave__declining_an_offer__releases_the_seat_to_the_next(service, full_event):
    service.join_waiting_list(full_event.id, name="Bo", email="bo@example.com")
    service.join_waiting_list(full_event.id, name="Cy", email="cy@example.com")
    cancel(service, full_event.id)

    service.leave_waiting_list(full_event.id, email="bo@example.com")

    assert statuses(service, full_event) == [("bo@example.com", LEFT),
                                             ("cy@example.com", OFFERED)]
    with pytest.raises(NotWaiting):
        service.leave_waiting_list(full_event.id, email="bo@example.com")
    service.leave_waiting_list(full_event.id, email="cy@example.com")
    assert service.availability(full_event.id).remaining == 1
    assert service.audit(full_event.id) == []


def test_capacity_raised__seats_offered_in_order(service, full_event):
    for n in range(3):
        service.join_waiting_list(full_event.id, name=f"P{n}", email=f"p{n}@example.com")

    service.update_event(full_event.id, expected_version=full_event.version, capacity=3)
    waitlist_engine.flush()

    assert [s for _, s in statuses(service, full_event)] == [OFFERED, OFFERED, WAITING]
    assert service.audit(full_event.id) == []


def test_delete_event__waiting_list_goes_with_it(service, full_event):
    service.join_waiting_list(full_event.id, name="Bo", email="bo@example.com")

    service.delete_event(full_event.id)

    assert service.waitlist.engine.entries(full_event.id) == []
    assert service.waiting_list_pass() == {}


def test_worker_pass__offered_person_booked_directly__entry_booked_held_seat_freed(service,
                                                                                   full_event):
    service.join_waiting_list(full_event.id, name="Bo", email="bo@example.com")
    cancel(service, full_event.id)  # Bo is offered Ada's seat
    service.update_event(full_event.id, expected_version=service.get_event(full_event.id).version,
                         capacity=2)
    waitlist_engine.flush()  # nobody else waits: the new seat stays free
    service.book(full_event.id, name="Bo", email="bo@example.com")  # the form, not the offer
    assert [v.invariant for v in service.audit(full_event.id)] == ["not_registered_and_waiting"]

    outcomes = service.waiting_list_pass()

    assert outcomes == {}
    assert statuses(service, full_event) == [("bo@example.com", BOOKED)]
    availability = service.availability(full_event.id)
    assert (availability.confirmed, availability.held, availability.remaining) == (1, 0, 1)
    assert service.audit(full_event.id) == []


def start_now(service, event):
    """The organizer moves the event's start to a moment ago: bookings close."""
    service.update_event(event.id, expected_version=service.get_event(event.id).version,
                         starts_at=datetime.now(timezone.utc) - timedelta(seconds=1))


def test_accept__event_started_since_the_offer__booking_closed_nothing_booked(service,
                                                                              full_event):
    service.join_waiting_list(full_event.id, name="Bo", email="bo@example.com")
    cancel(service, full_event.id)
    start_now(service, full_event)

    with pytest.raises(BookingClosed):
        service.accept_offer(full_event.id, email="bo@example.com")

    assert service.find_registration(full_event.id, email="bo@example.com") is None


def test_cancel__after_the_start__no_offer_made(service, full_event):
    service.join_waiting_list(full_event.id, name="Bo", email="bo@example.com")
    start_now(service, full_event)

    cancel(service, full_event.id)

    assert statuses(service, full_event) == [("bo@example.com", WAITING)]
    assert service.availability(full_event.id).held == 0


def test_worker_pass__event_started__line_closed_holds_released_nothing_offered(service,
                                                                                full_event):
    service.join_waiting_list(full_event.id, name="Bo", email="bo@example.com")
    service.join_waiting_list(full_event.id, name="Cy", email="cy@example.com")
    cancel(service, full_event.id)  # Bo is offered Ada's seat
    start_now(service, full_event)

    outcomes = service.waiting_list_pass()

    assert outcomes == {"entries_closed": 2}
    assert statuses(service, full_event) == [("bo@example.com", EXPIRED),
                                             ("cy@example.com", EXPIRED)]
    assert service.availability(full_event.id).held == 0
    assert service.audit(full_event.id) == []
    assert service.waiting_list_pass() == {}  # nothing open is left to look at


def test_worker_pass__start_moved_back_into_the_future__line_kept(service, full_event):
    from harness.controls import control_service

    service.join_waiting_list(full_event.id, name="Bo", email="bo@example.com")
    start_now(service, full_event)
    worker = control_service(store=service.store)  # another process: its own memory
    worker.get_event(full_event.id)  # ... which read the event while it had started
    service.update_event(full_event.id, expected_version=service.get_event(full_event.id).version,
                         starts_at=datetime.now(timezone.utc) + timedelta(days=1))

    assert worker.waiting_list_pass() == {}
    assert statuses(service, full_event) == [("bo@example.com", WAITING)]


def test_join__strategy_without_holds__clear_error_nothing_stored(service):
    event = service.create_event(name="Control", capacity=1, strategy="unguarded")
    service.book(event.id, name="Ada", email="ada@example.com")

    with pytest.raises(InvalidBooking, match="no waiting list"):
        service.join_waiting_list(event.id, name="Bo", email="bo@example.com")
    cancel(service, event.id)  # nothing to offer, no error
    assert service.waitlist.engine.entries(event.id) == []


def test_costs__accept_two_requests__offer_with_nobody_waiting_one_query(service):
    from booking.dynamo.metrics import RequestMeter

    event = service.create_event(name="Costs", capacity=1, strategy="lock_table")
    service.book(event.id, name="Ada", email="ada@example.com")
    service.join_waiting_list(event.id, name="Bo", email="bo@example.com")
    cancel(service, event.id)
    meter = RequestMeter().install(service.store)
    try:
        with meter.track() as accept:
            service.accept_offer(event.id, email="bo@example.com")
        with meter.track() as nobody_waiting:
            service.waitlist.engine.offer_all(event.id)
    finally:
        meter.uninstall()

    assert accept.operations == ["GetItem", "TransactWriteItems"]
    assert nobody_waiting.operations == ["Query"]
