"""Webhook deliveries survive a worker killed mid-send and a receiver failing for a while.

A receiver on 127.0.0.1 and DynamoDB Local; the sender runs in OS processes of its own:
one is killed (SIGKILL) after claiming an attempt and before sending it, one while the
receiver holds its request unanswered, then one runs while the receiver answers 500 for
0.6 s. The receiver must see every delivery with a valid signature, and any duplicate
only as the same ``webhook-id`` with the same body. The control (a sender that records
a delivery done before sending it) loses the first one, and the same check catches it.
"""
import multiprocessing
import time

import pytest
from booking.dynamo.webhooks import WebhookDeliveries
from booking.mail.sender import send_owed
from booking.webhooks.registry import EVENT_TYPES
from booking.wiring import get_booking_service, mail_sender, webhook_registry
from tests.webhooks.receiver import LoopbackHttp, Receiver, anomalies

pytestmark = pytest.mark.concurrency
BOOKINGS = 4


def wait_for(condition, seconds=30.0):
    deadline = time.monotonic() + seconds
    while not condition():
        assert time.monotonic() < deadline, "timed out"
        time.sleep(0.05)


def owed_deliveries(service) -> dict:
    rows = WebhookDeliveries(service.store).table.scan()
    return {r["delivery_id"]: r for r in rows}


def run_crashes(url, receiver, tmp_path, careless: bool):
    from tests.webhooks.workers import run_sender

    service = get_booking_service()
    registry = webhook_registry(url_policy=LoopbackHttp())
    for path in ("all", "bookings"):
        events = list(EVENT_TYPES) if path == "all" else ["registration.created"]
        receiver.secrets[path] = registry.register(url=receiver.url(path), events=events).secret
    event = service.create_event(name="Hooks", capacity=BOOKINGS, strategy="lock_table")
    for n in range(BOOKINGS):
        service.book(event.id, name=f"Person {n}", email=f"p{n}@example.com")
    send_owed(mail_sender(), min_age=0)  # what the web's send right after the booking does
    owed = {i: r["body"].encode() for i, r in owed_deliveries(service).items()}

    # Forked, not spawned: a new interpreter's imports would cost seconds per sender.
    context = multiprocessing.get_context("fork")

    started = []

    def start(**options):
        process = context.Process(target=run_sender, args=(url, service.store.table_prefix),
                                  kwargs={"careless": careless, **options}, daemon=True)
        process.start()
        started.append(process)
        return process

    def nothing_owed():
        return all(r["status"] != "pending" for r in owed_deliveries(service).values())

    try:
        # 1. Killed after claiming an attempt, before sending a byte of it (the pass's
        # other threads may send the rest meanwhile).
        pause = tmp_path / "sending"
        first = start(pause_file=str(pause))
        wait_for(pause.exists)
        first.kill()
        first.join()
        # 2. Killed while the receiver holds its requests (they arrived; no answer came
        # back). The careless control may owe nothing any more: it recorded the killed
        # attempt done, and the other threads delivered the rest.
        receiver.hold.set()
        second = start()
        wait_for(lambda: receiver.holding.is_set() or nothing_owed())
        second.kill()
        second.join()
        receiver.hold.clear()
        receiver.release.set()
        # 3. The receiver answers 500 to the first two requests that reach it (however
        # long the sender takes to start), then 204; a sender runs until nothing is owed.
        receiver.fail_next = 2
        third = start()
        wait_for(nothing_owed)
        third.terminate()
    finally:  # a failed step leaves no sender behind (a worker waits for its children)
        for process in started:
            if process.is_alive():
                process.kill()
            process.join(timeout=30)
    return owed


def test_sender_killed_mid_send__every_delivery_received_duplicates_same_id(
        server_store, tmp_path):
    with Receiver() as receiver:
        owed = run_crashes(server_store.url, receiver, tmp_path, careless=False)

    assert len(owed) == 2 * BOOKINGS + 1  # both endpoints' bookings, and event.full once
    assert anomalies(owed, receiver.received) == []
    ids = [r.webhook_id for r in receiver.received]
    assert len(ids) > len(set(ids)), "no redelivery: the kills happened nowhere"
    assert any(r.status == 500 for r in receiver.received)


def test_control__careless_sender_killed_mid_send__loses_a_delivery(
        server_store, tmp_path):
    with Receiver() as receiver:
        owed = run_crashes(server_store.url, receiver, tmp_path, careless=True)

    assert [a for a in anomalies(owed, receiver.received) if a.startswith("never received")]
