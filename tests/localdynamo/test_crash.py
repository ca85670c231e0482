"""kill -9 in the middle of a booking storm: no acknowledged booking is lost, and no
booking is half-applied (each event's count agrees with its registrations).

3 OS processes x 8 threads book through BookingService against DynamoDB Local on disk;
``dynamodb_local`` execs the JVM, so killing the started process kills the store itself.

The storm uses ``aggregate`` (one conditional UpdateItem per booking, plus the request
history's puts): DynamoDB Local keeps every acknowledged single-item write across a crash.
It does not keep every acknowledged TransactWriteItems: killed mid-storm it has lost one
acknowledged transaction, whole, in about one run of eight (docs/local-dynamodb.md).
``BOOKING_CRASH_STRATEGY=lock_table`` runs the same storm with transactions to see it.
"""
import multiprocessing
import os
import random
import time
import uuid

import pytest

from booking.dynamo.provision import ensure_tables
from booking.wiring import get_booking_service
from tests.concurrency.workers import book_people

from .test_durability import use_server

pytestmark = pytest.mark.concurrency

PROCESSES = 3
THREADS = 8
PEOPLE = 3000  # far more than can be booked before the kill
STRATEGY = os.environ.get("BOOKING_CRASH_STRATEGY", "aggregate")
CAPACITY = 440  # within aggregate's 446-attendee limit; the kill comes long before


def storm_until_killed(servers, server, event_id, prefix, rng):
    """Book from several processes, kill -9 the server mid-storm; return the outcomes."""
    env = {"DYNAMODB_ENDPOINT_URL": server.url, "DYNAMODB_TABLE_PREFIX": prefix,
           "DYNAMODB_MAX_ATTEMPTS": "1"}  # after the kill, fail fast instead of retrying
    people = [(f"Person {n}", f"person{n}@example.com") for n in range(PEOPLE)]
    start_at = time.time() + 3.0  # every process is set up by then
    with multiprocessing.get_context("spawn").Pool(PROCESSES) as pool:
        runs = [pool.apply_async(book_people, (env, event_id, people[i::PROCESSES], THREADS,
                                               start_at)) for i in range(PROCESSES)]
        # Kill at a random point of the storm, measured in bookings so that a slow start
        # on a busy machine cannot make the kill come before the storm.
        wait_for_bookings(event_id, rng.randrange(20, 200))
        time.sleep(rng.uniform(0, 0.3))
        servers.kill(server)
        return [outcome for run in runs for outcome in run.get(timeout=120)]


def wait_for_bookings(event_id, count, timeout=60):
    service = get_booking_service()
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if service.availability(event_id).confirmed >= count:
            return
        time.sleep(0.02)
    pytest.fail(f"fewer than {count} bookings after {timeout} s")


@pytest.mark.parametrize("seed", [1, 2, 3])
def test_kill_9_during_booking_storm__acknowledged_bookings_survive(servers, settings, seed):
    prefix = f"k{uuid.uuid4().hex[:8]}-"
    server = servers.start()
    use_server(settings, server, prefix)
    ensure_tables()
    event = get_booking_service().create_event(name=f"Storm {seed}", capacity=CAPACITY,
                                               strategy=STRATEGY)

    outcomes = storm_until_killed(servers, server, event.id, prefix, random.Random(seed))
    use_server(settings, servers.start(), prefix)

    service = get_booking_service()
    acknowledged = {email for email, outcome in outcomes if outcome == "ok"}
    stored = [registration.email for registration in service.registrations(event.id)]
    assert acknowledged, "the kill came before any booking was acknowledged"
    assert len(acknowledged) < CAPACITY, "the storm ended before the kill"
    assert acknowledged <= set(stored), "an acknowledged booking was lost"
    assert len(stored) == len(set(stored))
    assert service.availability(event.id).confirmed == len(stored), "half-applied booking"
    assert len(stored) - len(acknowledged) <= PROCESSES * THREADS  # only in-flight ones
