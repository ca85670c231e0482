"""The booking race against a server that throttles, fails and loses responses.

botocore resends a write after a lost response or a 5xx, so a booking that did apply can
come back refused. Each person tries once, so an honest answer is easy to check: whoever
was told "already registered" or "full" must not hold a seat, and whoever was told "ok"
must. Every booking write is now a transaction whose ClientRequestToken botocore keeps
across its resends, so the "already mine" reading is a second line here; on moto, which
ignores tokens, tests/strategies/test_ambiguous_retries.py shows it off is caught.

The workers book through the strategies directly, with registrations that name no
request: the request row (booking/exactly_once/request_log.py) and the service's read-back would
otherwise hide a false refusal, and this file tests the strategies' handling on its own.
"""
import json
import multiprocessing
import time
import urllib.request
import uuid
from collections import Counter

import pytest

from booking.dynamo.provision import ensure_tables
from booking.wiring import get_booking_service, reset_services
from harness.controls import local_store
from tests.conftest import start_fault_proxy, use_test_service

from .test_booking_races import PROCESSES, THREADS, stored_registrations

pytestmark = pytest.mark.concurrency

CAPACITY = 30
PEOPLE = 120
FAULTS = "throttle=0.05,lost_response=0.05,error500=0.02,delay_ms=0-2,seed={seed}"
# Honest "we do not know" answers: the seat may or may not be held.
AMBIGUOUS = ("contention", "error:StoreUnavailable", "error:OutcomeUnknown")


@pytest.fixture
def faulty_server(request, local_server):
    server = start_fault_proxy(local_server, request.param)
    store = local_store(server.url, table_prefix=f"f{uuid.uuid4().hex[:8]}-")
    use_test_service(store)
    ensure_tables(store)  # control plane: never faulted
    yield server
    reset_services()
    server.stop()


def create_event(strategy):
    """Create the event, trying again if a fault leaves a creation in doubt."""
    for _ in range(5):
        try:
            return get_booking_service().create_event(
                name=f"Faulty {strategy}", capacity=CAPACITY, strategy=strategy)
        except Exception:  # noqa: BLE001 - any injected fault; a new event id next time
            continue
    raise AssertionError("could not create the event through the faults")


def fault_counts(server):
    with urllib.request.urlopen(f"{server.url}/_localdynamo/faults", timeout=30) as response:
        return json.loads(response.read())


def anomalies(outcomes, stored, counter):
    """Every untrue answer or broken invariant, as readable strings (empty when none)."""
    found = []
    answer = dict(outcomes)
    if len(outcomes) != len(answer):
        found.append("a person was answered twice")
    if len(stored) > CAPACITY:
        found.append(f"overbooked: {len(stored)} stored for {CAPACITY} seats")
    twice = [email for email, n in Counter(stored).items() if n > 1]
    if twice:
        found.append(f"registered twice: {twice}")
    lost = [email for email, outcome in outcomes if outcome == "ok" and email not in stored]
    if lost:
        found.append(f"acknowledged but not stored: {lost}")
    refused = [email for email in stored if answer.get(email) in ("already", "full")]
    if refused:
        found.append(f"refused but holds a seat: {refused}")
    if "full" in answer.values() and len(set(stored)) < CAPACITY:
        found.append(f"answered full with {len(set(stored))} of {CAPACITY} seats taken")
    if counter != len(stored):
        found.append(f"counter says {counter}, {len(stored)} stored")
    return found


def race(server, event_id, people, extra_env):
    from tests.concurrency.workers import book_people

    env = {"DYNAMODB_ENDPOINT_URL": server.url,
           "DYNAMODB_TABLE_PREFIX": get_booking_service().store.table_prefix,
           **(extra_env or {})}
    start_at = time.time() + 3.0  # every process is set up by then
    with multiprocessing.get_context("spawn").Pool(PROCESSES) as pool:
        runs = [pool.apply_async(book_people, (env, event_id, people[i::PROCESSES], THREADS,
                                               start_at, True)) for i in range(PROCESSES)]
        return [outcome for run in runs for outcome in run.get(timeout=240)]


def run_race(server, strategy, extra_env=None):
    event = create_event(strategy)
    people = [(f"Person {n}", f"person{n}@example.com") for n in range(PEOPLE)]
    outcomes = race(server, event.id, people, extra_env)
    stored = stored_registrations(server, event)
    counter = read_through_faults(lambda: get_booking_service().availability(event.id).confirmed)
    return outcomes, stored, counter


def read_through_faults(read):
    for _ in range(10):
        try:
            return read()
        except Exception:  # noqa: BLE001 - an injected fault outlasted botocore's retries
            continue
    raise AssertionError("no read got through the faults")


@pytest.mark.parametrize("faulty_server,strategy", [
    (FAULTS.format(seed=1), "aggregate"),
    (FAULTS.format(seed=2), "lock_table"),
    (FAULTS.format(seed=3), "slots"),
    (FAULTS.format(seed=4), "shards"),
], indirect=["faulty_server"])
def test_faulty_race__distinct_people__every_answer_true_and_capacity_kept(faulty_server,
                                                                           strategy):
    outcomes, stored, counter = run_race(faulty_server, strategy)

    tally = Counter(outcome for _, outcome in outcomes)
    assert anomalies(outcomes, stored, counter) == [], tally
    assert set(tally) <= {"ok", "full", *AMBIGUOUS}, tally
    assert len(outcomes) == PEOPLE
    assert len(stored) == CAPACITY
    counts = fault_counts(faulty_server)
    assert counts["lost_response"] > 0 and counts["throttle"] > 0 and counts["error500"] > 0
