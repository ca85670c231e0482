"""The waiting list on a streams event (DynamoDB Local, its stream real): a held seat is
taken for the decider too, accepting confirms without a decision, a lapsed hold goes to
the next in line, and the audit and repair count holds."""
import time

import pytest

from booking.waitlist import engine as waitlist_engine
from booking.errors import AlreadyRegistered, OfferExpired
from booking.models import BOOKED, EXPIRED, OFFERED, WAITING
from tests.strategies.test_streams import decide_all, statuses

pytestmark = pytest.mark.usefixtures("server_store")


@pytest.fixture
def service():
    from booking.wiring import get_booking_service

    return get_booking_service()


@pytest.fixture
def full_event(service):
    """Capacity 1, Ann confirmed by the decider."""
    event = service.create_event(name="Queue", capacity=1, strategy="streams")
    service.book(event.id, name="Ann", email="ann@example.com")
    decide_all(service)
    return event


def cancel_ann(service, event):
    service.cancel(event.id, email="ann@example.com")
    waitlist_engine.flush()  # the offer made right after


def lines(service, event):
    return [(e.email, e.status) for e in service.waiting_list(event.id)]


def test_cancel__first_in_line_held_a_seat__pending_request_rejected_then_offer_accepted(
        service, full_event):
    service.join_waiting_list(full_event.id, name="Bo", email="bo@example.com")
    cancel_ann(service, full_event)
    service.book(full_event.id, name="Cy", email="cy@example.com")  # after the seat was held

    assert decide_all(service) == {"rejected": 1}  # the held seat is taken
    accepted = service.accept_offer(full_event.id, email="bo@example.com")

    assert accepted.status == "confirmed"
    assert decide_all(service) == {}  # an accepted offer is never a pending request
    assert statuses(service, full_event) == {"bo@example.com": "confirmed",
                                             "cy@example.com": "rejected"}
    availability = service.availability(full_event.id)
    assert (availability.confirmed, availability.held, availability.pending) == (1, 0, 0)
    assert lines(service, full_event) == [("bo@example.com", BOOKED)]
    assert service.audit(full_event.id) == []


def test_join__who_may_queue__rejected_yes_confirmed_no(service, full_event):
    service.book(full_event.id, name="Cy", email="cy@example.com")
    decide_all(service)  # Cy: no seat this time

    service.join_waiting_list(full_event.id, name="Cy", email="cy@example.com")
    with pytest.raises(AlreadyRegistered):
        service.join_waiting_list(full_event.id, name="Ann", email="ann@example.com")

    assert lines(service, full_event) == [("cy@example.com", WAITING)]


def test_offer__lapsed__passes_to_the_next_in_line_and_cannot_be_accepted(service, full_event):
    waitlist = service.waitlist.engine
    service.join_waiting_list(full_event.id, name="Bo", email="bo@example.com")
    service.join_waiting_list(full_event.id, name="Cy", email="cy@example.com")
    cancel_ann(service, full_event)  # Bo is offered the seat
    clock = waitlist.clock
    waitlist.clock = lambda: clock() + 2 * 86_400_000  # two days on: Bo's offer ran out

    outcomes = service.waiting_list_pass()
    waitlist.clock = clock

    assert outcomes == {"offers_expired": 1, "seats_offered": 1}
    assert lines(service, full_event) == [("bo@example.com", EXPIRED),
                                          ("cy@example.com", OFFERED)]
    with pytest.raises(OfferExpired):
        service.accept_offer(full_event.id, email="bo@example.com")
    assert service.availability(full_event.id).held == 1
    assert service.audit(full_event.id) == []


def test_availability__lapsed_hold__still_taken_until_passed_on(service, full_event):
    # The decider never takes a lapsed hold over, so its seat is not offered to requests.
    service.waitlist.engine.offer_seconds = 0.2
    service.join_waiting_list(full_event.id, name="Bo", email="bo@example.com")
    cancel_ann(service, full_event)
    time.sleep(0.3)  # Bo's offer ran out; no worker pass yet

    availability = service.availability(full_event.id)
    [listed] = service.availabilities([service.get_event(full_event.id)]).values()
    service.join_waiting_list(full_event.id, name="Cy", email="cy@example.com")

    assert (availability.held, availability.remaining, availability.is_full) == (1, 0, True)
    assert listed == availability.__class__(capacity=1, confirmed=0, held=1)
    assert lines(service, full_event)[-1] == ("cy@example.com", WAITING)


def test_leave__held_seat_freed__the_decider_gives_it_to_a_pending_request(service,
                                                                           full_event):
    service.join_waiting_list(full_event.id, name="Bo", email="bo@example.com")
    cancel_ann(service, full_event)

    service.leave_waiting_list(full_event.id, email="bo@example.com")
    service.book(full_event.id, name="Cy", email="cy@example.com")

    assert decide_all(service) == {"confirmed": 1}
    assert service.availability(full_event.id).held == 0
    assert service.audit(full_event.id) == []


def test_repair__counter_lost_a_hold__recounted_with_holds(service, full_event):
    from tests.helpers import table
    from booking.dynamo.tables import EVENTS

    service.join_waiting_list(full_event.id, name="Bo", email="bo@example.com")
    cancel_ann(service, full_event)  # Bo's hold: count 1, no confirmed registration
    table(EVENTS).update({"event_id": full_event.id}, "SET confirmed_count = :zero",
                         values={":zero": 0})

    found = [v.invariant for v in service.audit(full_event.id)]
    repaired = service.repair(full_event.id)

    assert found == ["counter_matches_registrations"]
    assert repaired and service.audit(full_event.id) == []
    assert service.availability(full_event.id).held == 1
