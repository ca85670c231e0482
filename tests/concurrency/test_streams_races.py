"""The streams strategy under real concurrency: 3 OS processes x 8 threads book while two
deciders (OS processes) read the stream at once, and one of them is killed (SIGKILL) and
restarted mid-run with the checkpoints gone (so every record is read again). Every request is accepted at once; the first ``capacity`` arrivals in
stream order are confirmed, the rest rejected, each decided exactly once. The control
(a decider without the pending condition) is caught by the very same checks."""
import multiprocessing
import time
from collections import Counter

import boto3
import pytest
from django.conf import settings

from tests.helpers import table
from booking.dynamo.tables import OUTBOX, STREAM_CHECKPOINTS
from booking.strategies.streams.checkpoints import Checkpoints
from booking.wiring import get_booking_service

pytestmark = pytest.mark.concurrency

PROCESSES, THREADS, CAPACITY, PEOPLE = 3, 8, 20, 72


def stream_order(server, event_id):
    """E-mail keys of the event's pending registrations in stream (arrival) order."""
    options = {"endpoint_url": server.url, "region_name": settings.AWS_REGION,
               "aws_access_key_id": "local", "aws_secret_access_key": "local"}
    table = f"{get_booking_service().store.table_prefix}stream_registrations"
    arn = boto3.client("dynamodb", **options).describe_table(TableName=table)["Table"][
        "LatestStreamArn"]
    streams = boto3.client("dynamodbstreams", **options)
    order = []
    for shard in streams.describe_stream(StreamArn=arn)["StreamDescription"]["Shards"]:
        position = streams.get_shard_iterator(StreamArn=arn, ShardId=shard["ShardId"],
                                              ShardIteratorType="TRIM_HORIZON")["ShardIterator"]
        while position:
            page = streams.get_records(ShardIterator=position)
            for record in page["Records"]:
                image = record["dynamodb"].get("NewImage", {})
                if image.get("status", {}).get("S") == "pending" and (
                        image["event_id"]["S"] == event_id):
                    order.append(image["email"]["S"])
            position = page.get("NextShardIterator") if page["Records"] else None
    return order


def forget_checkpoints():
    checkpoints = table(STREAM_CHECKPOINTS)
    for row in list(checkpoints.scan()):
        checkpoints.delete({"shard_id": row["shard_id"]})


def wait_for(condition, timeout=60.0):
    deadline = time.monotonic() + timeout
    while not condition():
        assert time.monotonic() < deadline, "timed out"
        time.sleep(0.1)


def run_race(server, careless):
    from tests.concurrency.workers import book_people, run_decider

    service = get_booking_service()
    event = service.create_event(name="Queue race", capacity=CAPACITY, strategy="streams")
    env = {"DYNAMODB_ENDPOINT_URL": server.url,
           "DYNAMODB_TABLE_PREFIX": get_booking_service().store.table_prefix}
    context = multiprocessing.get_context("spawn")
    deciders = [context.Process(target=run_decider, args=(env, careless)) for _ in range(2)]
    for decider in deciders:
        decider.start()
    people = [(f"Person {n}", f"person{n}@example.com") for n in range(PEOPLE)]
    start_at = time.time() + 3.0
    outcomes = []
    with context.Pool(PROCESSES) as pool:
        runs = [pool.apply_async(book_people, (env, event.id, people[i::PROCESSES], THREADS,
                                               start_at)) for i in range(PROCESSES)]
        # Kill one decider once decisions flow, and start another in its place as after a
        # crash before any checkpoint: it reads every record again from the start.
        wait_for(lambda: service.availability(event.id).confirmed >= 5)
        deciders[0].kill()
        deciders[0].join()
        forget_checkpoints()
        deciders[0] = context.Process(target=run_decider, args=(env, careless))
        restarted_at = time.time()
        deciders[0].start()
        for run in runs:
            outcomes += run.get(timeout=120)
    wait_for(lambda: service.availability(event.id).pending == 0)
    # Both deciders (the restarted one too: it has read every record again) caught up.
    heartbeats = Checkpoints(service.store).heartbeats
    wait_for(lambda: sum((row.get("caught_up_at") or 0) > restarted_at
                         for row in heartbeats()) >= 2)
    for decider in deciders:
        decider.terminate()  # SIGTERM: a clean stop
        decider.join(timeout=30)
    return service, event, outcomes


def violations(server, service, event):
    found = []
    statuses = {r.email: r.status for r in service.registrations(event.id)}
    confirmed = sorted(e for e, s in statuses.items() if s == "confirmed")
    if len(confirmed) > CAPACITY:
        found.append(f"overbooked: {len(confirmed)} for {CAPACITY}")
    counter = service.availability(event.id).confirmed
    if counter != len(confirmed):
        found.append(f"counter says {counter}, {len(confirmed)} confirmed")
    if confirmed != sorted(stream_order(server, event.id)[:CAPACITY]):
        found.append("the confirmed are not the first arrivals in stream order")
    decisions = Counter(row["registration_id"] for row in table(OUTBOX).scan()
                        if row["event_id"] == event.id)
    twice = [rid for rid, n in decisions.items() if n > 1]
    if twice or len(decisions) != len(statuses):
        found.append(f"decided twice: {len(twice)}; decisions {len(decisions)} for "
                     f"{len(statuses)} registrations")
    return found


def test_race__two_deciders_one_killed__first_arrivals_confirmed_each_once(server_store):
    service, event, outcomes = run_race(server_store, careless=False)

    assert Counter(outcome for _, outcome in outcomes) == {"ok": PEOPLE}
    assert violations(server_store, service, event) == []
    assert service.audit(event.id) == []


def test_race__control_decider_without_pending_condition__caught(server_store):
    service, event, _ = run_race(server_store, careless=True)

    assert violations(server_store, service, event) != []
