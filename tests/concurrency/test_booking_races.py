"""Real races: several OS processes x many threads booking over HTTP against the embedded
server. Guarded strategies must keep every invariant; the unguarded control must be caught
overbooking by the very same checks, which proves those checks can fail."""
import multiprocessing
import time
from collections import Counter

import boto3
from botocore.config import Config
import pytest
from django.conf import settings

from booking.wiring import get_booking_service
from tests import conformance

pytestmark = pytest.mark.concurrency

PROCESSES = 3
THREADS = 16
CAPACITY = 50
PEOPLE = 200


def race(server, event_id, people, *, race_delay_ms=0.0):
    env = {
        "DYNAMODB_ENDPOINT_URL": server.url,
        "DYNAMODB_TABLE_PREFIX": get_booking_service().store.table_prefix,
    }
    from tests.concurrency.workers import book_people

    shares = [people[i::PROCESSES] for i in range(PROCESSES)]
    start_at = time.time() + 3.0  # every process is set up by then
    context = multiprocessing.get_context("spawn")
    with context.Pool(PROCESSES) as pool:
        runs = [pool.apply_async(book_people, (env, event_id, share, THREADS, start_at),
                                 {"race_delay_ms": race_delay_ms})
                for share in shares]
        return [outcome for run in runs for outcome in run.get(timeout=240)]


def stored_registrations(server, event):
    """Read the event's registrations straight from the tables, not through the service."""
    # Patient retries: the faulty-server races read through up to 30% lost responses.
    client = boto3.client("dynamodb", endpoint_url=server.url, region_name=settings.AWS_REGION,
                          aws_access_key_id="local", aws_secret_access_key="local",
                          config=Config(retries={"mode": "standard", "total_max_attempts": 12}))
    prefix = get_booking_service().store.table_prefix
    if event.strategy == "aggregate":
        item = client.get_item(TableName=f"{prefix}events", Key={"event_id": {"S": event.id}},
                               ConsistentRead=True)["Item"]
        return list(item["attendees"]["M"])
    emails, streams = [], event.strategy == "streams"
    for page in client.get_paginator("query").paginate(
        TableName=f"{prefix}{'stream_registrations' if streams else 'registrations'}",
        ConsistentRead=True,
        KeyConditionExpression="event_id = :e", ExpressionAttributeValues={":e": {"S": event.id}},
    ):
        emails += [item["email"]["S"] for item in page["Items"]
                   if not streams or item["status"]["S"] == "confirmed"]
    return emails


def violations(event, outcomes, stored, counter):
    """Every invariant the race can break, as readable strings (empty when all hold)."""
    found = []
    confirmed = [email for email, outcome in outcomes if outcome == "ok"]
    if len(stored) > event.capacity:
        found.append(f"overbooked: {len(stored)} stored for {event.capacity} seats")
    if len(confirmed) > event.capacity:
        found.append(f"overbooked: {len(confirmed)} confirmed for {event.capacity} seats")
    twice = [email for email, n in Counter(stored).items() if n > 1]
    if twice:
        found.append(f"registered twice: {twice}")
    if sorted(stored) != sorted(confirmed):
        found.append("stored registrations differ from the clients' confirmations")
    if counter != len(stored):
        found.append(f"counter says {counter}, {len(stored)} stored")
    return found


def run_distinct_race(server, strategy, race_delay_ms=0.0, people=PEOPLE):
    service = get_booking_service()
    event = service.create_event(name=f"Race {strategy}", capacity=CAPACITY, strategy=strategy)
    people = [(f"Person {n}", f"person{n}@example.com") for n in range(people)]
    outcomes = race(server, event.id, people, race_delay_ms=race_delay_ms)
    stored = stored_registrations(server, event)
    counter = service.availability(event.id).confirmed
    return event, outcomes, stored, counter


@pytest.mark.parametrize("strategy", conformance.AT_ONCE)
def test_race__distinct_people__exactly_capacity_confirmed(server_store, strategy):
    event, outcomes, stored, counter = run_distinct_race(server_store, strategy)

    tally = Counter(outcome for _, outcome in outcomes)
    assert len(outcomes) == PEOPLE
    assert tally == {"ok": CAPACITY, "full": PEOPLE - CAPACITY}
    assert violations(event, outcomes, stored, counter) == []


@pytest.mark.parametrize("strategy", conformance.AT_ONCE)
def test_race__same_person_everywhere__exactly_one_confirmed(server_store, strategy):
    service = get_booking_service()
    event = service.create_event(name="Same person", capacity=CAPACITY, strategy=strategy)
    attempts = [("Ada", "ada@example.com" if n % 2 else " ADA@example.com ")
                for n in range(PROCESSES * THREADS)]

    outcomes = race(server_store, event.id, attempts)

    tally = Counter(outcome for _, outcome in outcomes)
    assert tally == {"ok": 1, "already": len(attempts) - 1}
    assert stored_registrations(server_store, event) == ["ada@example.com"]
    assert service.availability(event.id).confirmed == 1


def test_race__unguarded_control__is_caught_overbooking(server_store):
    # A short sleep between its read and its write makes the write skew reliable.
    event, outcomes, stored, counter = run_distinct_race(
        server_store, "unguarded", race_delay_ms=20)

    found = violations(event, outcomes, stored, counter)

    assert any(v.startswith("overbooked") for v in found), found


def test_race__hasty_shards_control__is_caught_refusing_with_seats_free(server_store):
    # Shards that answer "full" when the one they picked is dry refuse people while other
    # shards still have seats. With barely more people than seats, some shard runs dry
    # while another is left with seats nobody is sent to: the race's tally catches it.
    # Each process takes the shards in turn, so they run dry nearly together and one race
    # in about seven shows no lie; up to three races are run, each on a new event.
    people = CAPACITY + 2
    tallies = []
    for _ in range(3):
        event, outcomes, stored, counter = run_distinct_race(server_store, "hasty_shards",
                                                             people=people)
        assert violations(event, outcomes, stored, counter) == []  # only the answers lie
        tally = Counter(outcome for _, outcome in outcomes)
        tallies.append(tally)
        if tally["ok"] < CAPACITY and tally["full"] > people - CAPACITY:
            return
    pytest.fail(f"the hasty control told no untrue 'full' in three races: {tallies}")
