"""check_capacity: each kind of drift, injected straight into the tables, is found and repaired."""
import json
import threading
from io import StringIO

import pytest
from django.core.management import call_command
from django.core.management.base import CommandError

from booking.strategies import audit
from booking.wiring import leases as service_leases
from tests.helpers import table
from booking.dynamo.tables import EVENT_LOCKS, EVENTS, REGISTRATIONS, SLOTS
from harness.controls import ALL_STRATEGIES as STRATEGIES


def check(*args):
    """Run the command; return (exit status, stdout)."""
    out = StringIO()
    try:
        call_command("check_capacity", *args, stdout=out, stderr=StringIO())
    except CommandError as error:
        return error.returncode, out.getvalue() + str(error)
    return 0, out.getvalue()


def check_json(*args):
    out = StringIO()
    try:
        call_command("check_capacity", *args, "--json", stdout=out, stderr=StringIO())
        status = 0
    except CommandError as error:
        status = error.returncode
    return status, json.loads(out.getvalue())


def booked(service, strategy, capacity=3, people=2):
    event = service.create_event(name="Talk", capacity=capacity, strategy=strategy)
    for n in range(people):
        service.book(event.id, name=f"P{n}", email=f"p{n}@example.com")
    return event


def put_registration(event_id, email, **extra):
    table(REGISTRATIONS).put({"event_id": event_id, "email": email, "name": "Ghost",
                              "registered_at": "2030-01-01T00:00:00+00:00",
                              "registration_id": "f" * 32, **extra})


def invariants(payload):
    return sorted({v["invariant"] for v in payload["violations"]})


@pytest.mark.parametrize("strategy", tuple(STRATEGIES))
def test_check_capacity__consistent_events__exit_0(service, strategy):
    booked(service, strategy)

    status, output = check()

    assert status == 0
    assert "Checked 1 event(s): all invariants hold." in output


def test_check_capacity__unknown_event__exit_2_with_message(service):
    status, output = check("0" * 32)

    assert status == 2
    assert "Unknown event id '00000000000000000000000000000000'" in output


def test_check_capacity__aggregate_counter_drift__exit_1_named_then_repaired(service):
    event = booked(service, "aggregate")
    table(EVENTS).update({"event_id": event.id}, "SET confirmed_count = :n", values={":n": 7})

    status, payload = check_json(event.id)

    assert status == 1
    assert payload["violations"] == [{"event_id": event.id, "invariant": audit.COUNTER,
                                      "expected": 2, "found": 7,
                                      "detail": "confirmed_count vs attendees"}]
    assert check("--repair")[0] == 0
    assert table(EVENTS).get({"event_id": event.id})["confirmed_count"] == 2
    assert check()[0] == 0


def test_check_capacity__lock_counter_and_capacity_drift__repaired(service):
    event = booked(service, "lock_table")
    table(EVENT_LOCKS).update({"event_id": event.id}, "SET confirmed_count = :n, #c = :c",
                              names={"#c": "capacity"}, values={":n": 0, ":c": 9})

    status, payload = check_json()

    assert status == 1
    assert invariants(payload) == [audit.COUNTER, audit.LOCK_CAPACITY]
    status, payload = check_json("--repair")
    assert status == 0 and payload["repairs"][0]["fixed"]
    lock = table(EVENT_LOCKS).get({"event_id": event.id})
    assert (lock["confirmed_count"], lock["capacity"]) == (2, 3)


def test_check_capacity__lock_item_missing__recreated_from_registrations(service):
    event = booked(service, "lock_table")
    table(EVENT_LOCKS).delete({"event_id": event.id})

    assert invariants(check_json()[1]) == [audit.LOCK_PRESENT]
    assert check("--repair")[0] == 0
    service.book(event.id, name="C", email="c@example.com")
    assert service.availability(event.id).is_full


def test_check_capacity__registration_put_behind_the_lock__counter_fixed(service):
    event = booked(service, "lock_table")
    put_registration(event.id, "ghost@example.com")

    status, output = check(event.id)

    assert status == 1 and audit.COUNTER in output and event.id in output
    assert check("--repair")[0] == 0
    assert service.availability(event.id).confirmed == 3


@pytest.mark.parametrize("strategy", ["lock_table", "unguarded"])
def test_check_capacity__overbooked__reported_and_left_for_a_person(service, strategy):
    event = booked(service, strategy, capacity=2, people=2)
    put_registration(event.id, "extra@example.com")

    status, payload = check_json("--repair")

    assert status == 1
    assert audit.WITHIN_CAPACITY in invariants(payload)
    assert len(service.registrations(event.id)) == 3  # nothing deleted


@pytest.mark.parametrize("strategy", ["lock_table", "unguarded"])
def test_check_capacity__same_person_under_two_keys__named(service, strategy):
    event = booked(service, strategy, capacity=5, people=1)
    put_registration(event.id, " P0@Example.com")

    status, payload = check_json()

    assert status == 1
    assert {audit.EMAIL_NORMALIZED, audit.ONE_PER_PERSON} <= set(invariants(payload))


def test_check_capacity__slots_orphan_claim_and_lost_free_slot__repaired(service):
    event = booked(service, "slots", capacity=4, people=2)
    slots = table(SLOTS)
    free = sorted(s["slot"] for s in slots.query(key_condition="event_id = :e",
                                                 values={":e": event.id}) if "free_in" in s)
    slots.update({"event_id": event.id, "slot": free[0]}, "SET holder = :h REMOVE free_in",
                 values={":h": "nobody@example.com"})
    slots.update({"event_id": event.id, "slot": free[1]}, "REMOVE free_in")

    status, payload = check_json()

    assert status == 1
    assert invariants(payload) == [audit.CLAIM_HAS_REGISTRATION, audit.SLOT_STATE]
    assert check("--repair")[0] == 0
    service.book(event.id, name="C", email="c@example.com")
    service.book(event.id, name="D", email="d@example.com")
    assert service.availability(event.id).is_full


def test_check_capacity__slots_registration_without_claim_and_missing_slot__repaired(service):
    event = booked(service, "slots", capacity=3, people=1)
    slots = table(SLOTS)
    mine = service.strategy("slots").registrations_table.get(
        {"event_id": event.id, "email": "p0@example.com"})["slot"]
    slots.update({"event_id": event.id, "slot": mine}, "SET free_in = :e REMOVE holder",
                 values={":e": event.id})
    spare = next(n for n in range(3) if n != mine)
    slots.delete({"event_id": event.id, "slot": spare})

    status, payload = check_json()

    assert status == 1
    assert invariants(payload) == [audit.REGISTRATION_HOLDS_SLOT, audit.SLOT_COUNT]
    assert check("--repair")[0] == 0
    assert slots.get({"event_id": event.id, "slot": mine})["holder"] == "p0@example.com"


def test_check_capacity__version_missing__named_and_repaired(service):
    event = booked(service, "lock_table")
    table(EVENTS).update({"event_id": event.id}, "REMOVE version")

    assert invariants(check_json()[1]) == [audit.VERSION_NUMERIC]
    assert check("--repair")[0] == 0
    assert table(EVENTS).get({"event_id": event.id})["version"] == 1


def test_check_capacity__repair_while_lease_held__exit_3_with_message(service):
    event = booked(service, "aggregate")
    table(EVENTS).update({"event_id": event.id}, "SET confirmed_count = :n", values={":n": 0})
    service_leases().acquire(f"repair:{event.id}", seconds=60)

    status, output = check("--repair")

    assert status == 3
    assert "holds the lease" in output
    assert table(EVENTS).get({"event_id": event.id})["confirmed_count"] == 0


def test_repair__booking_lands_mid_repair__count_stays_right(service):
    event = booked(service, "lock_table", capacity=5)
    table(EVENT_LOCKS).update({"event_id": event.id}, "SET confirmed_count = :n", values={":n": 0})
    strategy = service.strategy("lock_table")
    real = strategy.registrations_table.query
    landed = []

    def query_then_book(**kwargs):
        yield from real(**kwargs)
        if not landed:  # a booking commits after the count, before the counter write
            landed.append(service.book(event.id, name="Late", email="late@example.com"))

    strategy.registrations_table.query = query_then_book
    try:
        service.repair(event.id)
    finally:
        del strategy.registrations_table.query

    assert table(EVENT_LOCKS).get({"event_id": event.id})["confirmed_count"] == 3
    assert service.audit(event.id) == []


def test_repair__aggregate_booking_lands_mid_repair__count_stays_right(service):
    event = booked(service, "aggregate", capacity=5)
    events = table(EVENTS)
    events.update({"event_id": event.id}, "SET confirmed_count = :n", values={":n": 0})
    strategy = service.strategy("aggregate")
    real_get, landed = strategy.events.get, []

    def get_then_book(*args, **kwargs):
        item = real_get(*args, **kwargs)
        if not landed:
            landed.append(service.book(event.id, name="Late", email="late@example.com"))
        return item

    strategy.events.get = get_then_book
    try:
        service.repair(event.id)
    finally:
        del strategy.events.get

    assert events.get({"event_id": event.id})["confirmed_count"] == 3


def test_repair__two_concurrent_repairs__second_refused_by_lease(service):
    event = booked(service, "aggregate")
    table(EVENTS).update({"event_id": event.id}, "SET confirmed_count = :n", values={":n": 0})
    strategy = service.strategy("aggregate")
    inside, release = threading.Event(), threading.Event()
    real = strategy.repair

    def slow_repair(evt):
        inside.set()
        release.wait(10)
        return real(evt)

    strategy.repair = slow_repair
    first = threading.Thread(target=lambda: results.append(check("--repair")))
    results = []
    try:
        first.start()
        assert inside.wait(10)
        second = check("--repair")
        release.set()
        first.join(10)
    finally:
        release.set()
        del strategy.repair

    assert second[0] == 3 and "holds the lease" in second[1]
    assert results == [(0, results[0][1])]
    assert service_leases().current(f"repair:{event.id}") is None
