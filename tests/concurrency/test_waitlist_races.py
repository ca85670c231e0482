"""Waiting-list races: 3 OS processes x 16 threads joining, cancelling, booking, leaving,
accepting (twice each, as a double click does) and running the worker's pass at once,
against the session's DynamoDB Local, while offers expire, on one event per guarded
strategy in the same run (for ``streams``, stream deciders run among them and a booking
is a request that they decide). People also ask to join (the double opt-in), confirm from
the link, leave, and use the link again, among the offers. Every guarded strategy keeps
the invariants; the careless-accept and careless opt-in controls
(``harness/waitlist_controls.py``) are caught by the very same checks.

The orders race does the same with multi-seat entries on an event whose ticket types share
a workshop quota (one event per strategy that holds orders): offers, accepts, bookings and
whole and partial cancellations never put any quota over its capacity, and every stored
order is exactly what its owner asked for; the control whose offers hold the capacity
quota only is caught overbooking the workshop."""
import multiprocessing
import time
from collections import Counter

import pytest

from booking import wiring
from booking.waitlist import engine as waitlist_engine
from booking.strategies.streams.decider import StreamDecider
from harness.waitlist_controls import waitlist_control_service
from tests.concurrency.test_booking_races import stored_registrations

pytestmark = pytest.mark.concurrency

PROCESSES = 3
THREADS = 16
CAPACITY = 8
START_DELAY = 5.0  # the offers are made and every process is set up by then
PHASE_GAP = 2.0
BOOKED = [f"b{n}@example.com" for n in range(CAPACITY)]
WAITING = [f"w{n}@example.com" for n in range(12)]
STRANGERS = [f"s{n}@example.com" for n in range(4)]
JOINERS = [f"j{n}@example.com" for n in range(12)]
ASKERS = [f"a{n}@example.com" for n in range(4)]  # ask to join, never confirm
CONFIRMERS = [f"c{n}@example.com" for n in range(6)]  # ask and confirm; the first 3 leave,
RELINKERS = CONFIRMERS[:3]  # then use their confirmation link again (twice)


def opting_in(e):
    """Asks and confirmations (phase 1), leaving (2), a used link again (3)."""
    return ([(e, "ask", x) for x in ASKERS + CONFIRMERS] + [(e, "confirm", x) for x in CONFIRMERS],
            [(e, "leave", x) for x in RELINKERS], [(e, "confirm", x) for x in RELINKERS] * 2)


def race(server, phases, start_at, waitlist_control=None, gap=PHASE_GAP, tickets=None):
    from booking.wiring import get_booking_service

    env = {"DYNAMODB_ENDPOINT_URL": server.url,
           "DYNAMODB_TABLE_PREFIX": get_booking_service().store.table_prefix,
           "BOOKING_WAITLIST_OFFER_SECONDS": "60"}
    from tests.concurrency.waitlist_workers import run_tasks

    shares = [[phase[i::PROCESSES] for phase in phases] for i in range(PROCESSES)]
    context = multiprocessing.get_context("spawn")
    with context.Pool(PROCESSES) as pool:
        runs = [pool.apply_async(run_tasks, (env, share, THREADS, start_at, gap,
                                             waitlist_control, tickets)) for share in shares]
        return [outcome for run in runs for outcome in run.get(timeout=240)]


def prepare(service, strategy):
    """A full event: 8 booked, 12 people waiting."""
    event = service.create_event(name=f"Waiting {strategy}", capacity=CAPACITY,
                                 strategy=strategy)
    for email in BOOKED:
        service.book(event.id, name="Booked", email=email)
    decide_everything(service)
    for email in WAITING:
        service.join_waiting_list(event.id, name="Waiting", email=email)
    return event


def offer(service, event, start_at, expiries):
    """Cancel the first booked, so that the first in line are offered seats that lapse
    ``expiries[i]`` seconds after the race starts."""
    for email, expires_after_start in zip(BOOKED, expiries):
        service.waitlist.engine.offer_seconds = start_at + expires_after_start - time.time()
        service.cancel(event.id, email=email)
        waitlist_engine.flush()  # the offer made right after (its own time)
    offered = [e.email for e in service.waiting_list(event.id) if e.status == "offered"]
    assert offered == WAITING[:len(expiries)]
    service.waitlist.engine.offer_seconds = 60


def decide_everything(service):
    """Decide every pending streams request, as the worker's stream decider does."""
    decider = StreamDecider(service.strategy("streams"))
    while not decider.run_pass()[1]:
        pass


def interleave(*task_lists):
    """Tasks of several events alternating, so the events race at the same moments."""
    longest = max(len(tasks) for tasks in task_lists)
    return [tasks[i] for i in range(longest) for tasks in task_lists if i < len(tasks)]


def violations(server, service, event, outcomes):
    """Every invariant the race can break for ``event``, as strings (empty when all hold)."""
    outcomes = [o[1:] for o in outcomes if o[0] == event.id]
    decide_everything(service)  # what the worker does next; it must leave all in order
    service.waiting_list_pass()
    found = [f"{v.invariant}: {v.detail or v.found}" for v in service.audit(event.id)]
    stored = stored_registrations(server, event)
    availability = service.availability(event.id)
    if len(stored) > event.capacity:
        found.append(f"overbooked: {len(stored)} stored for {event.capacity} seats")
    if availability.confirmed + availability.held > event.capacity:
        found.append(f"overbooked: {availability}")
    if [e for e, n in Counter(stored).items() if n > 1]:
        found.append("registered twice")
    answered, cancelled = {}, set()
    for kind, email, outcome, rid in outcomes:
        if (kind, outcome) == ("book", "ok") and event.strategy == "streams":
            decided = service.find_registration(event.id, email=email)  # told by e-mail
            if decided and decided.status == "confirmed":
                answered.setdefault(email, set()).add(decided.registration_id)
        elif kind in ("accept", "book") and outcome == "ok":
            answered.setdefault(email, set()).add(rid)
        if (kind, outcome) == ("cancel", "ok"):
            cancelled.add(email)
    for email, rids in answered.items():
        if email in cancelled:  # booked, then cancelled in the second phase
            continue
        stored_one = service.find_registration(event.id, email=email)
        if len(rids) > 1 or stored_one is None or stored_one.registration_id not in rids:
            found.append(f"told {email} 'booked' ({rids}) but stored {stored_one}")
    for email in set(stored) - set(answered) - set(BOOKED):
        found.append(f"{email} registered without being told so")
    return found + opt_in_violations(service, event, outcomes)


def opt_in_violations(service, event, outcomes):
    """Nobody stands in line without confirming; a used link never joins again."""
    confirmed = {email for kind, email, outcome, _ in outcomes if kind in ("confirm", "join")}
    left = {email for kind, email, outcome, _ in outcomes if (kind, outcome) == ("leave", "ok")}
    found = [f"unconfirmed {entry.email} in line ({entry.status})"
             for entry in service.waiting_list(event.id)
             if entry.email not in confirmed | set(WAITING)]
    for email in left & set(RELINKERS):
        entry = service.waiting_entry(event.id, email=email)
        if entry is not None and entry.is_active:
            found.append(f"used link joined {email} again after leaving ({entry.status})")
    return found


def test_race__join_cancel_book_accept_at_once__invariants_hold(server_store):
    service = waitlist_control_service()
    wiring.install(service)
    events = [prepare(service, strategy)
              for strategy in ("aggregate", "lock_table", "slots", "streams", "shards")]
    start_at = time.time() + START_DELAY
    for event in events:
        # Two of the four offers lapse 20 and 100 ms into the race (their accepts book or
        # refuse, never both; bookings may take their seats after), two last.
        offer(service, event, start_at, (0.02, 0.1, 30, 30))

    def everything(e):
        return [(e, k, m) for k, m in
                [("join", x) for x in JOINERS[:6]] + [("accept", x) for x in WAITING[:4]] * 2
                + [("book", x) for x in STRANGERS] + [("cancel", x) for x in BOOKED[4:]]
                + [("accept", x) for x in WAITING[4:8]] + [("leave", x) for x in WAITING[8:10]]
                + [("pass", "")] + [("decide", "")] * 3]

    def again(e):  # people who booked cancel, others join, accept (again), the worker runs
        return [(e, k, m) for k, m in
                [("cancel", x) for x in STRANGERS[:2]] + [("join", x) for x in JOINERS[6:]]
                + [("accept", x) for x in WAITING[:8]] + [("pass", "")] + [("decide", "")] * 2]

    def first(e):
        return everything(e) + opting_in(e)[0]

    def second(e):
        return again(e) + opting_in(e)[1]

    outcomes = race(server_store, [interleave(*(first(e.id) for e in events)),
                                   interleave(*(second(e.id) for e in events)),
                                   interleave(*(opting_in(e.id)[2] for e in events))], start_at)

    assert len(outcomes) == sum(len(first(e.id)) + len(second(e.id)) + len(opting_in(e.id)[2])
                                for e in events)
    for event in events:
        mine = [o[1:] for o in outcomes if o[0] == event.id]
        joins = Counter(outcome for kind, _, outcome, _ in mine if kind == "join")
        assert joins["ok"] + joins["SeatsAvailable"] == len(JOINERS), (event.strategy, joins)
        assert [o for k, e, o, _ in mine if k == "cancel" and e in BOOKED] == ["ok"] * 4
        asks = Counter(o for k, _, o, _ in mine if k == "ask")
        assert asks["ok"] + asks["SeatsAvailable"] == 10, (event.strategy, asks)
        assert violations(server_store, service, event, outcomes) == [], event.strategy


@pytest.mark.parametrize("control", ["careless_accept", "careless_streams_accept"])
def test_race__careless_accept_control__is_caught_overbooking(server_store, control):
    # Offers lapsed before the race: bookings (lock_table) and the next offers after the
    # cancellations take their seats over, then the careless accepts (no "hold unexpired"
    # condition) book seats that no longer exist.
    service = waitlist_control_service()
    wiring.install(service)
    event = prepare(service, control)
    start_at = time.time() + START_DELAY
    offer(service, event, start_at, (-1.0,) * 4)
    first = [(event.id, k, m) for k, m in [("book", x) for x in STRANGERS]
             + [("cancel", x) for x in BOOKED[4:]] + [("join", x) for x in JOINERS]]
    offers = [(event.id, "offer", "")] * 3  # lapsed holds taken over by the next in line
    then = [(event.id, "accept", x) for x in WAITING[:4]] * 2

    outcomes = race(server_store, [first, offers, then], start_at)

    found = violations(server_store, service, event, outcomes)
    assert any("overbooked" in v or "within_capacity" in v for v in found), found


def test_race__careless_opt_in_control__is_caught(server_store):
    # Requests to join put in line at once (the askers stand in line unconfirmed), and
    # links that join again after their owner left: each check of the race above fires.
    service = waitlist_control_service()
    wiring.install(service)
    event = service.create_event(name="Full", capacity=1, strategy="lock_table")
    service.book(event.id, name="Booked", email=BOOKED[0])
    asks, leaves, again = opting_in(event.id)

    outcomes = race(server_store, [asks, leaves, again], time.time() + 2.0,
                    waitlist_control="careless_opt_in", gap=1.0)

    found = violations(server_store, service, event, outcomes)
    assert any(v.startswith("unconfirmed a") for v in found), found
    assert any(v.startswith("used link joined") for v in found), found


# --- orders (docs/orders.md): multi-seat entries over a shared workshop quota ------------
ORDER_STRATEGIES = ("aggregate", "lock_table", "slots", "streams", "shards")
WORKSHOP = 4
ORDER_BOOKED = {"b0@example.com": {"workshop": 2}, "b1@example.com": {"workshop": 2},
                "b2@example.com": {"conference": 2}, "b3@example.com": {"conference": 2}}
ORDER_WAITING = {"w0@example.com": {"workshop": 1, "conference": 1},
                 "w1@example.com": {"workshop": 2}, "w2@example.com": {"conference": 2},
                 "w3@example.com": {"workshop": 1},
                 "w4@example.com": {"conference": 1, "workshop": 1},
                 "w5@example.com": {"conference": 3}, "w6@example.com": {"workshop": 1},
                 "w7@example.com": {"conference": 1}}
# The strangers take at most 2 workshop and 4 capacity seats of the 4 and 6 the race frees:
# w1's order (2 workshop seats) fits whoever wins, so the line is offered something to
# accept (with a third workshop seat they could leave it nothing, on a busy machine).
ORDER_STRANGERS = {"s0@example.com": {"workshop": 1}, "s1@example.com": {"workshop": 1},
                   "s2@example.com": {"conference": 1}, "s3@example.com": {"conference": 1}}
PARTS = {"b2@example.com": {"conference": 1}, "b3@example.com": {"conference": 1}}


def prepare_orders(service, strategy, waiting=ORDER_WAITING):
    """Capacity 8 and a workshop quota of 4, both full; multi-seat entries waiting."""
    event = service.create_event(
        name=f"Orders {strategy}", capacity=CAPACITY, strategy=strategy,
        quotas={"workshop": WORKSHOP}, ticket_types={"conference": [], "workshop": ["workshop"]},
        max_per_order=3)
    for email, tickets in ORDER_BOOKED.items():
        service.book(event.id, name="Booked", email=email, tickets=tickets)
    decide_everything(service)
    for email, tickets in waiting.items():
        service.join_waiting_list(event.id, name="Waiting", email=email, tickets=tickets)
    return event


def offer_order(service, event, start_at, lapses_after):
    """Cancel b0's two workshop seats: w0 is offered (its hold lapses ``lapses_after``
    seconds into the race); w1 (two workshop seats) must wait."""
    service.waitlist.engine.offer_seconds = start_at + lapses_after - time.time()
    service.cancel(event.id, email="b0@example.com")
    waitlist_engine.flush()
    service.waitlist.engine.offer_seconds = 60
    assert [(e.email, e.status) for e in service.waiting_list(event.id)][:2] == [
        ("w0@example.com", "offered"), ("w1@example.com", "waiting")][:len(
            service.waiting_list(event.id))]


def order_tickets():
    return {**{f"book:{e}": t for e, t in ORDER_STRANGERS.items()},
            **{f"cancel:{e}": t for e, t in PARTS.items()}}


def order_violations(server, service, event, outcomes):
    """Every invariant the orders race can break for ``event`` (empty when all hold)."""
    from tests.concurrency.test_order_races import seats_per_quota, stored_orders

    outcomes = [o[1:] for o in outcomes if o[0] == event.id]
    decide_everything(service)
    service.waiting_list_pass()
    found = [f"{v.invariant}: {v.detail or v.found}" for v in service.audit(event.id)]
    stored = stored_orders(server, event)
    capacities = event.quota_capacities()
    for quota, seats in seats_per_quota(event, stored.values()).items():
        if seats > capacities[quota]:
            found.append(f"overbooked quota {quota}: {seats} seats for {capacities[quota]}")
    for quota, seats in service.availability(event.id).quotas.items():
        if seats.confirmed + seats.held > seats.capacity:
            found.append(f"overbooked quota {quota}: {seats}")
    cancelled = {e for kind, e, o, _ in outcomes if (kind, o) == ("cancel", "ok")}
    # A cancellation answered "outcome unknown" (its deadline passed on a loaded machine)
    # told the person to ask again: either state is true of it.
    unknown = {e: o for kind, e, o, _ in outcomes
               if kind == "cancel" and o in ("OutcomeUnknown", "StillDeciding")}
    asked = {**ORDER_BOOKED, **ORDER_WAITING, **ORDER_STRANGERS}
    for email, tickets in stored.items():
        want = asked.get(email)
        part = {t: n - PARTS[email].get(t, 0) for t, n in want.items()} \
            if email in PARTS else want
        if email in cancelled:
            want = part
        if tickets != want and not (email in unknown and tickets == part):
            told = [o for k, e, o, _ in outcomes if e == email]
            found.append(f"{email} stored {tickets}, asked for {want} (answers: {told})")
    for kind, email, outcome, _ in outcomes:
        told = outcome == "ok" and (kind == "accept"
                                    or kind == "book" and event.strategy != "streams")
        if told and email not in cancelled and email not in stored:
            found.append(f"told {email} 'booked' ({kind}) but nothing stored")
    return found


def order_race_tasks(e):
    """Phase 1: cancellations (b1 whole, b2 and b3 in part), strangers booking, accepts
    (twice), leaving, the worker; phase 2: accepts again and the worker; phase 3: accepts
    once more (an offer that phase 2's worker made after phase 2's accepts had run)."""
    first = ([(e, "cancel", x) for x in ("b1@example.com", *PARTS)]
             + [(e, "book", x) for x in ORDER_STRANGERS]
             + [(e, "accept", x) for x in ORDER_WAITING] * 2
             + [(e, "leave", "w7@example.com"), (e, "pass", ""), (e, "offer", "")]
             + [(e, "decide", "")] * 3)
    second = ([(e, "accept", x) for x in ORDER_WAITING] + [(e, "pass", ""), (e, "offer", "")]
              + [(e, "decide", "")] * 2)
    return first, second, [(e, "accept", x) for x in ORDER_WAITING]


def test_race__orders__offers_accepts_cancels_never_exceed_any_quota(server_store):
    service = waitlist_control_service()
    wiring.install(service)
    events = [prepare_orders(service, strategy) for strategy in ORDER_STRATEGIES]
    start_at = time.time() + START_DELAY + 2.0 * len(events)  # each offer is made by then
    for event in events:
        offer_order(service, event, start_at, 0.05)  # w0's offer lapses as the race starts

    phases = [order_race_tasks(e.id) for e in events]
    outcomes = race(server_store, [interleave(*(p[n] for p in phases)) for n in range(3)],
                    start_at, tickets=order_tickets())

    assert len(outcomes) == sum(len(phase) for p in phases for phase in p)
    # The race offered and accepted multi-seat orders (on a loaded machine one strategy's
    # offers can all lapse before their accepts run: the others' still count).
    assert any((k, o) == ("accept", "ok") for _, k, _, o, _ in outcomes)
    for event in events:
        assert order_violations(server_store, service, event, outcomes) == [], event.strategy


def test_race__order_hold_of_the_capacity_only_control__is_caught_overbooking(server_store):
    # The control's offer to w0 (one workshop and one conference seat) holds capacity
    # seats only: with b2's two seats free too, the strangers book the workshop seats it
    # should have kept, then w0's accept puts its order over them.
    service = waitlist_control_service()
    wiring.install(service)
    event = prepare_orders(service, "careless_order_hold",
                           waiting={"w0@example.com": ORDER_WAITING["w0@example.com"]})
    start_at = time.time() + START_DELAY
    offer_order(service, event, start_at, 60)
    service.cancel(event.id, email="b2@example.com")
    books = [(event.id, "book", x) for x in ("s0@example.com", "s1@example.com")]
    accepts = [(event.id, "accept", "w0@example.com")] * 2

    outcomes = race(server_store, [books, accepts], start_at, tickets=order_tickets())

    found = order_violations(server_store, service, event, outcomes)
    assert any(v.startswith("overbooked quota workshop") for v in found), found
