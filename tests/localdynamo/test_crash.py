"""kill -9 of DynamoDB Local in the middle of a write storm, then a restart.

``dynamodb_local`` execs the JVM, so killing the started process kills the store itself.
3 OS processes x 8 threads write against DynamoDB Local on disk; the kill lands at a
random point of the storm, measured in acknowledged writes.

- Single-item writes (conditional puts): every acknowledged write is there after the
  restart.
- Bookings through BookingService (each one TransactWriteItems of the registration, the
  counter, the request row and the outbox row): no booking is half-applied and nobody is
  booked twice. DynamoDB Local does *not* keep every acknowledged transaction across a
  kill -9: it has lost one acknowledged transaction, whole, in about one run of eight of a
  16-thread transaction storm (docs/local-dynamodb.md). The test records such losses
  (``lost_acknowledged`` in the JUnit properties) instead of failing on them: they are the
  store's, and real DynamoDB does not have them.
"""
import multiprocessing
import random
import time
import uuid

import pytest

from booking.dynamo.provision import ensure_tables
from booking.wiring import get_booking_service
from tests.concurrency.workers import book_people, put_keys

from .conftest import create_simple_table, raw_client
from .test_durability import use_server

pytestmark = pytest.mark.concurrency

PROCESSES = 3
THREADS = 8
WRITES = 30_000  # far more than can be written before the kill
PEOPLE = 3000
CAPACITY = 3000


def kill_when(servers, server, count_done, target, rng, timeout=120):
    """Wait until ``count_done()`` reaches ``target`` (plus a random moment); kill -9."""
    deadline = time.monotonic() + timeout
    while count_done() < target:
        assert time.monotonic() < deadline, f"fewer than {target} writes after {timeout} s"
        time.sleep(0.1)
    time.sleep(rng.uniform(0, 0.3))
    servers.kill(server)


def scan_keys(client, table):
    keys = set()
    for page in client.get_paginator("scan").paginate(TableName=table, ConsistentRead=True):
        keys |= {item["pk"]["S"] for item in page["Items"]}
    return keys


@pytest.mark.parametrize("seed", [1])
def test_kill_9_during_put_storm__acknowledged_single_item_writes_survive(servers, seed):
    rng = random.Random(seed)
    server = servers.start()
    client = raw_client(server, attempts=1)
    table = f"storm-{uuid.uuid4().hex[:8]}"
    create_simple_table(client, table)
    keys = [f"key-{n}" for n in range(WRITES)]
    start_at = time.time() + 3.0  # every process is set up by then
    with multiprocessing.get_context("spawn").Pool(PROCESSES) as pool:
        runs = [pool.apply_async(put_keys, (server.url, table, keys[i::PROCESSES], THREADS,
                                            start_at)) for i in range(PROCESSES)]
        kill_when(servers, server,
                  lambda: client.scan(TableName=table, Select="COUNT")["Count"],
                  rng.randrange(100, 600), rng)
        acknowledged = {key for run in runs for key in run.get(timeout=120)}

    stored = scan_keys(raw_client(servers.start()), table)

    assert acknowledged, "the kill came before any write was acknowledged"
    assert len(acknowledged) < WRITES, "the storm ended before the kill"
    assert acknowledged <= stored, f"acknowledged writes lost: {sorted(acknowledged - stored)}"
    assert len(stored - acknowledged) <= PROCESSES * THREADS  # only the in-flight ones


# One seed, as for the put storm: seed 2 only killed at another moment (after 34 stored
# bookings rather than 54) and ran the same checks again, for 20-30 s of the suite.
@pytest.mark.parametrize("seed", [1])
def test_kill_9_during_booking_storm__no_booking_half_applied_or_doubled(
        servers, settings, record_property, seed):
    prefix = f"k{uuid.uuid4().hex[:8]}-"
    server = servers.start()
    use_server(server, prefix)
    ensure_tables(get_booking_service().store)
    service = get_booking_service()
    event = service.create_event(name=f"Storm {seed}", capacity=CAPACITY, strategy="lock_table")
    env = {"DYNAMODB_ENDPOINT_URL": server.url, "DYNAMODB_TABLE_PREFIX": prefix,
           "DYNAMODB_MAX_ATTEMPTS": "1"}  # after the kill, fail fast instead of retrying
    people = [(f"Person {n}", f"person{n}@example.com") for n in range(PEOPLE)]
    start_at = time.time() + 3.0
    with multiprocessing.get_context("spawn").Pool(PROCESSES) as pool:
        runs = [pool.apply_async(book_people, (env, event.id, people[i::PROCESSES], THREADS,
                                               start_at), {"stop_when_unreachable": True})
                for i in range(PROCESSES)]
        kill_when(servers, server, lambda: service.availability(event.id).confirmed,
                  random.Random(seed).randrange(20, 200), random.Random(seed))
        outcomes = [outcome for run in runs for outcome in run.get(timeout=120)]
    use_server(servers.start(), prefix)

    service = get_booking_service()
    acknowledged = {email for email, outcome in outcomes if outcome == "ok"}
    stored = [registration.email for registration in service.registrations(event.id)]
    record_property("lost_acknowledged", sorted(acknowledged - set(stored)))
    assert acknowledged, "the kill came before any booking was acknowledged"
    assert len(acknowledged) < PEOPLE, "the storm ended before the kill"
    assert len(stored) == len(set(stored)), "someone booked twice"
    assert set(stored) <= {email for _, email in people}
    assert service.availability(event.id).confirmed == len(stored), "half-applied booking"
    assert len(set(stored) - acknowledged) <= PROCESSES * THREADS  # only in-flight ones
