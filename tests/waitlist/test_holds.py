"""Waiting-list holds at the strategy level (a time-limited hold): a hold takes a seat until
a time, nobody can take it before, anyone can take it after; accepting needs it unexpired."""
import pytest
from django.utils import timezone

from booking.dynamo.access import TransactionCancelled
from booking.dynamo.expressions import Members
from booking.errors import EventFull
from booking.models import Availability, Registration
from tests import conformance
from tests.helpers import hold_as_the_waiting_list

GUARDED = conformance.AT_ONCE
T = 1_000_000_000_000  # an epoch in milliseconds; holds never read the real clock here


def hold(strategy, event, email, *, until, now):
    """Take a hold the way the waiting list does: retry with the refusal's evidence."""
    return hold_as_the_waiting_list(strategy, event, email, one_seat_of(event),
                                    until=until, now=now)


def one_seat_of(event):
    """One seat of the event's only type: a plain event's order."""
    return event.order({"admission": 1})


def write(named):
    """Run named members (a strategy's accept or release) as one transaction."""
    return Members(named).operations


def registration(event_id, email):
    return Registration(event_id=event_id, email=email, name="Guest",
                        registered_at=timezone.now(), registration_id=email.split("@")[0] * 4)


@pytest.fixture(params=GUARDED)
def one_seat(request, service):
    event = service.create_event(name="One seat", capacity=1, strategy=request.param)
    return service.strategy(request.param), event


def test_hold__seat_taken_until_expiry__then_anyone_may_take_it_over(one_seat):
    strategy, event = one_seat
    event_id = event.id
    hold(strategy, event, "a@example.com", until=T + 100, now=T)

    with pytest.raises(EventFull):
        hold(strategy, event, "b@example.com", until=T + 300, now=T + 99)
    hold(strategy, event, "b@example.com", until=T + 300, now=T + 100)  # a's has lapsed

    assert strategy.holds(event_id) == {"b@example.com": T + 300}


def test_hold__own_lapsed_hold__renewed(one_seat):
    strategy, event = one_seat
    event_id = event.id
    hold(strategy, event, "a@example.com", until=T + 100, now=T)

    ref = hold(strategy, event, "a@example.com", until=T + 500, now=T + 200)

    assert strategy.holds(event_id) == {"a@example.com": T + 500}
    strategy.store.transact_write(write(strategy.accept_ops(
        event, registration(event_id, "a@example.com"), one_seat_of(event), now=T + 499, ref=ref)))
    assert strategy.holds(event_id) == {}
    assert strategy.find(event_id, "a@example.com") is not None


def test_accept__hold_lapsed__refused_and_nothing_booked(one_seat):
    strategy, event = one_seat
    event_id = event.id
    ref = hold(strategy, event, "a@example.com", until=T + 100, now=T)

    with pytest.raises(TransactionCancelled):
        strategy.store.transact_write(write(strategy.accept_ops(
            event, registration(event_id, "a@example.com"), one_seat_of(event), now=T + 100, ref=ref)))

    assert strategy.find(event_id, "a@example.com") is None


def test_release__frees_exactly_that_hold(one_seat):
    strategy, event = one_seat
    event_id = event.id
    ref = hold(strategy, event, "a@example.com", until=T + 100, now=T)

    with pytest.raises(TransactionCancelled):  # another offer's time: not this hold
        strategy.store.transact_write(write(strategy.release_ops(
            event, "a@example.com", one_seat_of(event), until=T + 99, ref=ref)))
    strategy.store.transact_write(write(strategy.release_ops(
        event, "a@example.com", one_seat_of(event), until=T + 100, ref=ref)))

    assert strategy.holds(event_id) == {}
    hold(strategy, event, "b@example.com", until=T + 300, now=T)  # the seat is free


def test_held_seats__a_lapsed_order_hold_stays_held_until_released__a_lapsed_seat_does_not():
    from booking.strategies.holds import availability_of, held_seats

    item = {"capacity": 10, "confirmed_count": 5, "quota_counts": {"workshop": 2},
            "holds": {"a@example.com": T - 1, "b@example.com": T - 1, "c@example.com": T + 1},
            "hold_seats": {"b@example.com": {"capacity": 2, "workshop": 2}}}

    assert held_seats(item) == {"capacity": 4, "workshop": 2}
    assert held_seats(item, T) == {"capacity": 3, "workshop": 2}  # a's single seat lapsed
    assert availability_of(item, T) == Availability(capacity=10, confirmed=1, held=3)
