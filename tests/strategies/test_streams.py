"""The streams strategy and its decider, against DynamoDB Local (its stream is real)."""
import pytest

from booking.strategies.streams.decider import Checkpoints, StreamDecider
from tests.helpers import table
from booking.dynamo.tables import OUTBOX, STREAM_CHECKPOINTS
from booking.errors import AlreadyRegistered, NotRegistered
from harness.controls import CarelessStreamsStrategy

pytestmark = pytest.mark.usefixtures("server_store")


@pytest.fixture
def service():
    from booking.wiring import get_booking_service

    return get_booking_service()


def decide_all(service, strategy=None):
    decider = StreamDecider(strategy or service.strategy("streams"))
    outcomes, caught_up = decider.run_pass()
    assert caught_up
    return outcomes


def statuses(service, event):
    return {r.email: r.status for r in service.registrations(event.id)}


def forget_checkpoints():
    checkpoints = table(STREAM_CHECKPOINTS)
    for row in list(checkpoints.scan()):
        checkpoints.delete({"shard_id": row["shard_id"]})


def test_book__pending_until_decided__then_confirmed_with_its_email_owed(service):
    event = service.create_event(name="Queue", capacity=2, strategy="streams")

    booked = service.book(event.id, name="Ann", email="Ann@Example.com")

    assert booked.status == "pending"
    assert service.find_registration(event.id, email="ann@example.com").status == "pending"
    assert service.availability(event.id).pending == 1
    assert decide_all(service) == {"confirmed": 1}
    found = service.find_registration(event.id, email="ann@example.com")
    assert found.status == "confirmed"
    assert service.availability(event.id).confirmed == 1
    assert table(OUTBOX).get({"message_id": f"confirmation-{booked.registration_id}"})


def test_decide__over_capacity__first_arrivals_confirmed_the_rest_rejected(service):
    event = service.create_event(name="Queue", capacity=2, strategy="streams")
    for n in range(5):
        service.book(event.id, name=f"P{n}", email=f"p{n}@example.com")

    assert decide_all(service) == {"confirmed": 2, "rejected": 3}
    assert statuses(service, event) == {
        "p0@example.com": "confirmed", "p1@example.com": "confirmed",
        "p2@example.com": "rejected", "p3@example.com": "rejected",
        "p4@example.com": "rejected"}
    rejected = service.find_registration(event.id, email="p3@example.com")
    assert table(OUTBOX).get({"message_id": f"rejection-{rejected.registration_id}"})


def test_decide__records_read_again_from_the_start__nothing_changes(service):
    event = service.create_event(name="Queue", capacity=1, strategy="streams")
    for n in range(3):
        service.book(event.id, name=f"P{n}", email=f"p{n}@example.com")
    decide_all(service)
    before = statuses(service, event)
    service.cancel(event.id, email="p0@example.com")

    forget_checkpoints()  # as a decider killed before its first checkpoint
    assert decide_all(service) == {"not_pending": 3}

    assert statuses(service, event) == {k: v for k, v in before.items() if k != "p0@example.com"}
    assert service.availability(event.id).confirmed == 0
    assert service.audit(event.id) == []


def test_control__decider_without_the_pending_condition__decides_twice(service):
    event = service.create_event(name="Queue", capacity=2, strategy="streams")
    for n in range(3):
        service.book(event.id, name=f"P{n}", email=f"p{n}@example.com")
    careless = CarelessStreamsStrategy(store=service.store)
    decide_all(service, careless)

    forget_checkpoints()
    decide_all(service, careless)

    assert [v.invariant for v in service.audit(event.id)] == ["counter_matches_registrations"]


def test_book__second_request_while_pending__already_registered(service):
    event = service.create_event(name="Queue", capacity=1, strategy="streams")
    service.book(event.id, name="Ann", email="ann@example.com")

    with pytest.raises(AlreadyRegistered):
        service.book(event.id, name="Ann", email=" ANN@example.com")


def test_book__after_a_rejection__asks_again_as_a_new_pending_request(service):
    event = service.create_event(name="Queue", capacity=1, strategy="streams")
    service.book(event.id, name="Ann", email="ann@example.com")
    service.book(event.id, name="Bob", email="bob@example.com")
    decide_all(service)
    service.cancel(event.id, email="ann@example.com")

    again = service.book(event.id, name="Bob", email="bob@example.com")

    assert again.status == "pending"
    assert decide_all(service) == {"confirmed": 1}
    assert service.find_registration(event.id, email="bob@example.com").status == "confirmed"


def test_cancel__confirmed_seat__goes_to_the_next_pending_in_order(service):
    event = service.create_event(name="Queue", capacity=1, strategy="streams")
    service.book(event.id, name="Ann", email="ann@example.com")
    decide_all(service)
    service.book(event.id, name="Bob", email="bob@example.com")
    service.book(event.id, name="Cid", email="cid@example.com")

    service.cancel(event.id, email="ann@example.com")
    decide_all(service)

    assert statuses(service, event) == {"bob@example.com": "confirmed",
                                        "cid@example.com": "rejected"}


def rejection_first_after_a_cancellation(service, strategy):
    """Capacity 1: Ann confirmed, Bo rejected (the decider now tries rejections first),
    then Cy asks, and Ann cancels before Cy's turn; return Cy's decision."""
    decider = StreamDecider(strategy)
    event = service.create_event(name="Queue", capacity=1, strategy="streams")
    for name in ("Ann", "Bo"):
        service.book(event.id, name=name, email=f"{name.lower()}@example.com")
    assert decider.run_pass() == ({"confirmed": 1, "rejected": 1}, True)
    service.book(event.id, name="Cy", email="cy@example.com")
    service.cancel(event.id, email="ann@example.com")
    decider.run_pass()
    return service.find_registration(event.id, email="cy@example.com").status


def test_decide__seat_freed_after_the_event_was_found_full__confirmed_not_rejected(service):
    assert rejection_first_after_a_cancellation(service, service.strategy("streams")) == "confirmed"


def test_control__rejection_without_the_still_full_check__refuses_a_free_seat(service):
    from harness.controls import HastyRejectionStreamsStrategy

    hasty = HastyRejectionStreamsStrategy(store=service.store)

    assert rejection_first_after_a_cancellation(service, hasty) == "rejected"


def test_cancel__pending__withdrawn_and_never_decided(service):
    event = service.create_event(name="Queue", capacity=1, strategy="streams")
    service.book(event.id, name="Ann", email="ann@example.com")

    withdrawn = service.cancel(event.id, email="ann@example.com")

    assert withdrawn.status == "pending"
    assert decide_all(service) == {}
    assert service.find_registration(event.id, email="ann@example.com") is None


def test_cancel__rejected__not_registered(service):
    event = service.create_event(name="Queue", capacity=0 + 1, strategy="streams")
    service.book(event.id, name="Ann", email="ann@example.com")
    service.book(event.id, name="Bob", email="bob@example.com")
    decide_all(service)

    with pytest.raises(NotRegistered):
        service.cancel(event.id, email="bob@example.com")


def test_book__repeat_of_the_same_request__same_registration_one_pending(service):
    event = service.create_event(name="Queue", capacity=1, strategy="streams")
    first = service.book(event.id, name="Ann", email="ann@example.com", request_id="r" * 32)

    again = service.book(event.id, name="Ann", email="ann@example.com", request_id="r" * 32)

    assert again.registration_id == first.registration_id
    assert decide_all(service) == {"confirmed": 1}


def test_place_in_line__counts_pending_arrivals_ahead(service):
    event = service.create_event(name="Queue", capacity=1, strategy="streams")
    people = [service.book(event.id, name=f"P{n}", email=f"p{n}@example.com")
              for n in range(3)]

    strategy = service.strategy("streams")
    assert [strategy.place_in_line(p) for p in people] == [1, 2, 3]


def test_checkpoints__advance_only_forward(service):
    checkpoints = Checkpoints(service.store)
    checkpoints.advance("shard-a", "200")
    checkpoints.advance("shard-a", "1000")
    checkpoints.advance("shard-a", "300")

    assert checkpoints.get("shard-a")["sequence_number"] == "1000"


def test_booked_page__pending__number_in_line_and_refreshes_until_decided(service, client):
    from django.urls import reverse

    from booking import links as page_tokens

    event = service.create_event(name="Queue", capacity=1, strategy="streams")
    service.book(event.id, name="Ann", email="ann@example.com")
    bob = service.book(event.id, name="Bob", email="bob@example.com")
    url = reverse("booking:booked", args=[
        event.id, page_tokens.registration_token(bob, salt=page_tokens.CONFIRMATION_SALT)])

    waiting = client.get(url)
    decide_all(service)
    decided = client.get(url)

    assert waiting.status_code == 200 and waiting["Refresh"] == "3"
    assert "number 2" in waiting.content.decode()
    assert decided.status_code == 200 and not decided.has_header("Refresh")
    assert "No seat this time" in decided.content.decode()


@pytest.mark.django_db
def test_admin_registrations__status_of_each_and_the_deciders_lag(service, admin_client):
    from django.urls import reverse

    event = service.create_event(name="Queue", capacity=1, strategy="streams")
    service.book(event.id, name="Ann", email="ann@example.com")
    service.book(event.id, name="Bob", email="bob@example.com")
    url = reverse("admin:booking_dynamoevent_registrations", args=[event.id])
    before = admin_client.get(url).content.decode()
    decide_all(service)
    service.book(event.id, name="Cid", email="cid@example.com")

    after = admin_client.get(url).content.decode()

    assert "has not run yet" in before and "2 requests waiting for a decision" in before
    assert "1 running, last caught up" in after and "1 request waiting" in after
    assert [s for s in ("confirmed", "rejected", "pending") if f'field-status">{s}<' in after] \
        == ["confirmed", "rejected", "pending"]


def test_audit__pending_too_long_while_a_decider_runs__reported(service):
    import time

    from booking.dynamo.tables import STREAM_REGISTRATIONS

    event = service.create_event(name="Queue", capacity=1, strategy="streams")
    table(STREAM_REGISTRATIONS).put({
        "event_id": event.id, "email": "old@example.com", "name": "Old", "status": "pending",
        "registered_at": "2020-01-01T00:00:00+00:00", "registration_id": "e" * 32})
    quiet = service.audit(event.id)

    Checkpoints(service.store).beat("test", caught_up=True, decided=0, now=time.time())

    assert quiet == []  # no decider runs: waiting is expected
    assert [v.invariant for v in service.audit(event.id)] == ["pending_decided_in_time"]


def test_lineage_order__children_after_parents_trimmed_parents_count_as_read():
    from booking.dynamo.streams import Shard, lineage_order

    shards = [Shard("c2", "b", False), Shard("b", "a", True), Shard("a", "gone", True),
              Shard("c1", "b", False), Shard("x", None, False)]

    order = [s.shard_id for s in lineage_order(shards)]

    assert order.index("a") < order.index("b") < order.index("c1")
    assert order.index("b") < order.index("c2") and set(order) == {"a", "b", "c1", "c2", "x"}


def test_lambda_handler__a_batch_of_stream_records__decided_in_order(service):
    import boto3

    from booking import lambda_handler

    event = service.create_event(name="Queue", capacity=1, strategy="streams")
    for n in range(2):
        service.book(event.id, name=f"P{n}", email=f"p{n}@example.com")
    store = service.store
    options = {"endpoint_url": store.client.meta.endpoint_url, "region_name": "us-east-1",
               "aws_access_key_id": "local", "aws_secret_access_key": "local"}
    arn = boto3.client("dynamodb", **options).describe_table(
        TableName=f"{store.table_prefix}stream_registrations")["Table"]["LatestStreamArn"]
    streams = boto3.client("dynamodbstreams", **options)
    shard = streams.describe_stream(StreamArn=arn)["StreamDescription"]["Shards"][0]
    position = streams.get_shard_iterator(StreamArn=arn, ShardId=shard["ShardId"],
                                          ShardIteratorType="TRIM_HORIZON")["ShardIterator"]
    records = streams.get_records(ShardIterator=position)["Records"]
    lambda_handler._lambda_decider = None

    answer = lambda_handler.handler({"Records": records}, None)
    again = lambda_handler.handler({"Records": records}, None)  # a retried batch

    assert answer == again == {"batchItemFailures": []}
    assert statuses(service, event) == {"p0@example.com": "confirmed",
                                        "p1@example.com": "rejected"}


def test_repair__counter_drift__recounted_from_the_confirmed(service):
    from booking.dynamo.tables import EVENTS

    event = service.create_event(name="Queue", capacity=2, strategy="streams")
    for n in range(3):
        service.book(event.id, name=f"P{n}", email=f"p{n}@example.com")
    decide_all(service)
    table(EVENTS).update({"event_id": event.id}, "SET confirmed_count = :n", values={":n": 0})

    report = service.repair(event.id)

    assert report.fixed == ["confirmed_count 0 -> 2"] and report.remaining == []


def test_booking_worker__sigterm__stops_cleanly_after_deciding(service, settings, tmp_path):
    import os
    import signal
    import subprocess
    import sys
    import time

    event = service.create_event(name="Queue", capacity=1, strategy="streams")
    service.book(event.id, name="Ann", email="ann@example.com")
    env = {**os.environ, "DEBUG": "true",
           "DYNAMODB_ENDPOINT_URL": service.store.client.meta.endpoint_url,
           "DYNAMODB_TABLE_PREFIX": service.store.table_prefix,
           "DATABASE_URL": f"sqlite:///{tmp_path / 'db.sqlite3'}",
           "EMAIL_URL": "dummymail://"}
    worker = subprocess.Popen([sys.executable, "manage.py", "booking_worker"], env=env,
                              stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        deadline = time.monotonic() + 30
        while service.find_registration(event.id, email="ann@example.com").status == "pending":
            assert time.monotonic() < deadline and worker.poll() is None, worker.stderr.read()
            time.sleep(0.1)
        worker.send_signal(signal.SIGTERM)
        out, err = worker.communicate(timeout=20)
    finally:
        worker.kill()

    assert worker.returncode == 0, err
    assert "Decided 1 (1 confirmed, 0 rejected" in out


def test_decision_and_withdrawal_emails__say_what_happened(service):
    from django.core import mail

    from booking.mail.sender import send_owed
    from booking.wiring import mail_sender

    event = service.create_event(name="Queue", capacity=1, strategy="streams")
    for name in ("Ann", "Bob", "Cid"):
        service.book(event.id, name=name, email=f"{name.lower()}@example.com")
    decide_all(service)
    service.book(event.id, name="Dee", email="dee@example.com")
    service.cancel(event.id, email="dee@example.com")

    send_owed(mail_sender())

    assert sorted((m.to[0], m.subject) for m in mail.outbox) == [
        ("ann@example.com", "Booked: Queue"), ("bob@example.com", "No seat: Queue"),
        ("cid@example.com", "No seat: Queue"), ("dee@example.com", "Withdrawn: Queue")]
    assert "/cancel/" in next(m.body for m in mail.outbox if m.to == ["ann@example.com"])


def test_cancel_link__pending_withdrawn__rejected_says_no_seat(service, client):
    from django.urls import reverse

    from booking import links as page_tokens

    event = service.create_event(name="Queue", capacity=1, strategy="streams")
    ann = service.book(event.id, name="Ann", email="ann@example.com")
    bob = service.book(event.id, name="Bob", email="bob@example.com")
    ann_url = reverse("booking:cancel", args=[page_tokens.registration_token(ann, salt=page_tokens.CANCEL_SALT)])
    bob_url = reverse("booking:cancel", args=[page_tokens.registration_token(bob, salt=page_tokens.CANCEL_SALT)])

    asked = client.get(ann_url).content.decode()
    withdrawn = client.post(ann_url, follow=True).content.decode()
    decide_all(service)  # Bob is now first in line: confirmed
    service.book(event.id, name="Cid", email="cid@example.com")
    decide_all(service)
    cid = service.find_registration(event.id, email="cid@example.com")
    cid_url = reverse("booking:cancel", args=[page_tokens.registration_token(cid, salt=page_tokens.CANCEL_SALT)])

    assert "Withdraw your request?" in asked and "Your request is withdrawn" in withdrawn
    assert "Cancel your booking?" in client.get(bob_url).content.decode()
    assert "No seat this time" in client.get(cid_url).content.decode()
    assert "No seat this time" in client.post(cid_url, follow=True).content.decode()


def test_signup__second_request_while_pending__told_already_in_line(service, client):
    from django.urls import reverse

    from booking.entry import forms as page_tokens

    event = service.create_event(name="Queue", capacity=1, strategy="streams")
    service.book(event.id, name="Ann", email="ann@example.com")
    url = reverse("booking:event_detail", args=[event.id])

    answer = client.post(url, {"name": "Ann", "email": "ANN@example.com",
                               "token": page_tokens.new_form_token(event.id)})

    assert answer.status_code == 409
    assert "You're already in line" in answer.content.decode()


def test_event_page__full__waiting_list_offered(service, client):
    from django.urls import reverse

    event = service.create_event(name="Queue", capacity=1, strategy="streams")
    service.book(event.id, name="Ann", email="ann@example.com")
    decide_all(service)

    page = client.get(reverse("booking:event_detail", args=[event.id])).content.decode()

    assert "This event is full" in page and "Join the waiting list" in page


def test_decide__request_written_as_its_event_was_deleted__removed_not_decided(service):
    from booking.dynamo.tables import STREAM_REGISTRATIONS

    gone = "a" * 32  # a booking that raced the event's delete
    table(STREAM_REGISTRATIONS).put({
        "event_id": gone, "email": "ann@example.com", "name": "Ann", "status": "pending",
        "registered_at": "2030-01-01T00:00:00+00:00", "registration_id": "e" * 32})

    assert decide_all(service) == {"event_gone": 1}
    assert table(STREAM_REGISTRATIONS).get({"event_id": gone, "email": "ann@example.com"}) is None


def test_requests__booking_one_write__a_decision_one_write_once_the_event_is_known(service):
    from booking.dynamo.metrics import RequestMeter

    event = service.create_event(name="Queue", capacity=1, strategy="streams")
    strategy = service.strategy("streams")
    meter = RequestMeter().install(service.store)
    try:
        with meter.track() as booked:
            ann = service.book(event.id, name="Ann", email="ann@example.com")
        bob = service.book(event.id, name="Bob", email="bob@example.com")
        cy = service.book(event.id, name="Cy", email="cy@example.com")
        with meter.track() as first:  # the decider meets the event: one read, one write
            assert strategy.decide(ann) == "confirmed"
        with meter.track() as refused:  # its confirmation refused shows the item full;
            # then a read settles the rejection, with nothing written on the event item
            assert strategy.decide(bob) == "rejected"
        with meter.track() as page:  # a page: one read for its rejections
            assert [o for _, o in strategy.decide_all([cy])] == ["rejected"]
    finally:
        meter.uninstall()

    assert booked.operations == ["TransactWriteItems"]  # the pending item and the riders
    assert first.operations == ["GetItem", "TransactWriteItems"]
    assert refused.operations == ["TransactWriteItems", "GetItem", "TransactWriteItems"]
    assert page.operations == ["GetItem", "TransactWriteItems"]


@pytest.mark.parametrize("tickets", [None, {"ghost": 1}], ids=["decision", "unknown-type"])
def test_decide__write_meets_a_conflict__decided_again_never_left_pending(service, tickets):
    """A conflict on a decision's write is tried again, on the path that rejects a type the
    event never stored too (it once answered the conflict itself, leaving the request
    pending after its stream record had been read)."""
    from dataclasses import replace
    from unittest import mock

    from booking.dynamo.errors import CancellationReason, TransactionCancelled

    event = service.create_event(name="Queue", capacity=2, strategy="streams")
    booked = service.book(event.id, name="Ann", email="ann@example.com")
    if tickets is not None:
        booked = replace(booked, ticket_counts=tickets)
    strategy = service.strategy("streams")
    store, real, calls = strategy.store, strategy.store.transact_write, []

    def flaky(operations, **kwargs):
        calls.append(1)
        if len(calls) == 1:
            raise TransactionCancelled([CancellationReason("TransactionConflict", None)]
                                       * len(operations))
        return real(operations, **kwargs)

    with mock.patch.object(store, "transact_write", flaky):
        [(_, outcome)] = list(strategy.decide_all([booked]))

    expected = "confirmed" if tickets is None else "rejected"
    assert (outcome, len(calls)) == (expected, 2)
    assert statuses(service, event) == {"ann@example.com": expected}
