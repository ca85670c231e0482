"""Waiting-list races: 3 OS processes x 16 threads joining, cancelling, booking, leaving,
accepting (twice each, as a double click does) and running the worker's pass at once,
against the session's DynamoDB Local, while offers expire. Every guarded strategy keeps
the invariants; the careless-accept control (``harness/waitlist_controls.py``) is caught
by the very same checks."""
import multiprocessing
import time
from collections import Counter

import pytest
from django.conf import settings

from booking import waiting_list, wiring
from harness.waitlist_controls import waitlist_control_service
from tests.concurrency.test_booking_races import stored_registrations

pytestmark = pytest.mark.concurrency

PROCESSES = 3
THREADS = 16
CAPACITY = 8
START_DELAY = 5.0  # every process is set up by then (a busy machine may be later)
PHASE_GAP = 2.0
BOOKED = [f"b{n}@example.com" for n in range(CAPACITY)]
WAITING = [f"w{n}@example.com" for n in range(12)]
STRANGERS = [f"s{n}@example.com" for n in range(4)]
JOINERS = [f"j{n}@example.com" for n in range(12)]


def race(server, event_id, phases, start_at):
    env = {"DYNAMODB_ENDPOINT_URL": server.url,
           "DYNAMODB_TABLE_PREFIX": settings.DYNAMODB_TABLE_PREFIX,
           "BOOKING_WAITLIST_OFFER_SECONDS": "60"}
    from tests.concurrency.waitlist_workers import run_tasks

    shares = [[phase[i::PROCESSES] for phase in phases] for i in range(PROCESSES)]
    context = multiprocessing.get_context("spawn")
    with context.Pool(PROCESSES) as pool:
        runs = [pool.apply_async(run_tasks, (env, event_id, share, THREADS, start_at,
                                             PHASE_GAP)) for share in shares]
        return [outcome for run in runs for outcome in run.get(timeout=240)]


def prepare(strategy, *, expiries):
    """A full event (8 booked), 12 people waiting, the first 4 offered seats (the first
    booked cancelled) that lapse ``expiries[i]`` seconds after the race starts; return
    (service, event, start)."""
    service = waitlist_control_service()
    wiring.install(service)
    event = service.create_event(name=f"Waiting {strategy}", capacity=CAPACITY,
                                 strategy=strategy)
    for email in BOOKED:
        service.book(event.id, name="Booked", email=email)
    for email in WAITING:
        service.join_waiting_list(event.id, name="Waiting", email=email)
    start_at = time.time() + START_DELAY
    for email, expires_after_start in zip(BOOKED, expiries):
        service.waitlist.offer_seconds = start_at + expires_after_start - time.time()
        service.cancel(event.id, email=email)
        waiting_list.flush()  # the offer made right after (its own time)
    offered = [e.email for e in service.waiting_list(event.id) if e.status == "offered"]
    assert offered == WAITING[:len(expiries)]
    service.waitlist.offer_seconds = 60
    return service, event, start_at


def violations(server, service, event, outcomes):
    """Every invariant the race can break, as readable strings (empty when all hold)."""
    service.waiting_list_pass()  # what the worker does next; it must leave all in order
    found = [f"{v.invariant}: {v.detail or v.found}" for v in service.audit(event.id)]
    stored = stored_registrations(server, event)
    availability = service.availability(event.id)
    if len(stored) > event.capacity:
        found.append(f"overbooked: {len(stored)} stored for {event.capacity} seats")
    if availability.confirmed + availability.held > event.capacity:
        found.append(f"overbooked: {availability} ")
    if [e for e, n in Counter(stored).items() if n > 1]:
        found.append("registered twice")
    answered = {}
    for kind, email, outcome, rid in outcomes:
        if kind in ("accept", "book") and outcome == "ok":
            answered.setdefault(email, set()).add(rid)
    cancelled = {email for kind, email, outcome, _ in outcomes if (kind, outcome) == ("cancel", "ok")}
    for email, rids in answered.items():
        if email in cancelled:  # booked, then cancelled in the second phase
            continue
        stored_one = service.find_registration(event.id, email=email)
        if len(rids) > 1 or stored_one is None or stored_one.registration_id not in rids:
            found.append(f"told {email} 'booked' ({rids}) but stored {stored_one}")
    for email in set(stored) - set(answered) - set(BOOKED):
        found.append(f"{email} registered without being told so")
    return found


@pytest.mark.parametrize("strategy", ["aggregate", "lock_table", "slots"])
def test_race__join_cancel_book_accept_at_once__invariants_hold(server_store, strategy):
    # Two of the four offers lapse 20 and 100 ms into the race (their accepts book or
    # refuse, never both; bookings may take their seats after), two last.
    service, event, start_at = prepare(strategy, expiries=(0.02, 0.1, 30, 30))
    everything = ([("join", e) for e in JOINERS[:6]] + [("accept", e) for e in WAITING[:4]] * 2
                  + [("book", e) for e in STRANGERS] + [("cancel", e) for e in BOOKED[4:]]
                  + [("accept", e) for e in WAITING[4:8]] + [("leave", e) for e in WAITING[8:10]]
                  + [("pass", "")] * PROCESSES)
    # Then: people who booked cancel, while others join, accept (again) and the worker runs.
    again = ([("cancel", e) for e in STRANGERS[:2]] + [("join", e) for e in JOINERS[6:]]
             + [("accept", e) for e in WAITING[:8]] + [("pass", "")] * PROCESSES)

    outcomes = race(server_store, event.id, [everything, again], start_at)

    assert len(outcomes) == len(everything) + len(again)
    tally = Counter((kind, outcome) for kind, _, outcome, _ in outcomes)
    assert tally[("join", "ok")] + tally[("join", "SeatsAvailable")] == len(JOINERS), tally
    assert [o for k, e, o, _ in outcomes if k == "cancel" and e in BOOKED] == ["ok"] * 4
    assert violations(server_store, service, event, outcomes) == []


def test_race__careless_accept_control__is_caught_overbooking(server_store):
    # Offers lapsed before the race: bookings take their seats, then the careless accepts
    # (no "hold unexpired" condition) book seats that no longer exist.
    service, event, start_at = prepare("careless_accept", expiries=(-1.0,) * 4)
    first = ([("book", e) for e in STRANGERS] + [("cancel", e) for e in BOOKED[4:]]
             + [("join", e) for e in JOINERS])
    then = [("accept", e) for e in WAITING[:4]] * 2

    outcomes = race(server_store, event.id, [first, then], start_at)

    found = violations(server_store, service, event, outcomes)
    assert any("overbooked" in v or "within_capacity" in v for v in found), found
