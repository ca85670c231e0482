"""A request asked again while it is pending or in flight is answered from reads: no write,
202 with Retry-After until it is decided, then the decision. Counted on the wire
(botocore's before-send, per thread) against DynamoDB Local, with the default abuse limits.

The control is the API as it was: every asking of a key writes (the limits' conditional
update, refused for a key counted before, then the booking's transaction, refused by the
request row or conflicting with the first asking's).
"""
import json
import threading

import pytest
from django.test import Client

from booking.api import views
from booking.dynamo.metrics import RequestMeter
from booking.mail import sender as booking_mail
from booking.strategies.streams.decider import StreamDecider
from booking.wiring import get_booking_service

pytestmark = pytest.mark.usefixtures("server_store")
BODY = {"name": "Ann", "email": "ann@example.com"}


def post(client, event, key):
    return client.post(f"/api/v1/events/{event.id}/registrations/", json.dumps(BODY),
                       content_type="application/json", HTTP_IDEMPOTENCY_KEY=key)


def asked(meter, client, event, key):
    """One asking on this thread: (response, its DynamoDB operations)."""
    with meter.track() as tally:
        response = post(client, event, key)
    return response, tally.operations


def writes(operations):
    return [op for op in operations if op in {"PutItem", "UpdateItem", "DeleteItem",
                                              "TransactWriteItems", "BatchWriteItem"}]


@pytest.fixture
def meter():
    meter = RequestMeter().install(get_booking_service().store)
    yield meter
    meter.uninstall()
    booking_mail.flush()


class WritingRepeats:
    """The control: every asking counts its key with the limits' write and books (what a
    repeat cost before): ``keyed_input`` without the read first."""

    def __enter__(self):
        self.keyed_input = views.keyed_input
        views.keyed_input = lambda request, payload, event_id, admitted=False: (
            *self.keyed_input(request, payload, event_id), None)
        return self

    def __exit__(self, *exc):
        views.keyed_input = self.keyed_input


def pending_streams_reasked(meter):
    """Ann's streams booking waits for the decider; she asks again twice, the decider
    decides, she asks again: (first, the re-asks while pending, the one after)."""
    service, client = get_booking_service(), Client()
    event = service.create_event(name="Streams", capacity=1, strategy="streams")
    first = post(client, event, "ann-key-0001")
    pending = [asked(meter, client, event, "ann-key-0001") for _ in range(2)]
    StreamDecider(service.strategy("streams")).run_pass()
    decided = asked(meter, client, event, "ann-key-0001")
    return first, pending, decided


def assert_pending_from_reads(first, pending, decided):
    assert first.status_code == 202
    for response, operations in pending:
        assert response.status_code == 202, response.content
        assert 1 <= int(response["Retry-After"]) <= 3
        assert response["Location"] == first["Location"]
        assert writes(operations) == [], operations
    response, operations = decided
    assert response.status_code == 201 and response.json()["status"] == "confirmed"
    assert writes(operations) == [], operations


def test_streams_pending__reasked__202_from_reads_then_the_decision(meter):
    first, pending, decided = pending_streams_reasked(meter)

    assert_pending_from_reads(first, pending, decided)
    # The limits' item, then the request row, then the registration (the decision).
    assert pending[0][1] == ["BatchGetItem", "GetItem", "GetItem"], pending[0][1]


def test_streams_pending__control_writing_repeats__caught(meter):
    with WritingRepeats():
        first, pending, decided = pending_streams_reasked(meter)

    with pytest.raises(AssertionError):
        assert_pending_from_reads(first, pending, decided)


def in_flight_reasked(meter):
    """Ann's first asking is held in flight (its transaction waits on its way out); she asks
    again twice meanwhile; it is released and answers; she asks again:
    (first, the re-asks while in flight, the one after)."""
    service, client = get_booking_service(), Client()
    event = service.create_event(name="Held", capacity=5, strategy="lock_table")
    sending, release, answers = threading.Event(), threading.Event(), []

    def hold(request, **_):
        if b"ann@example.com" in request.body and not sending.is_set():
            sending.set()
            release.wait(10)

    events = service.store.client.meta.events
    events.register("before-send.dynamodb.TransactWriteItems", hold, unique_id="held-ann")
    first = threading.Thread(target=lambda: answers.append(post(Client(), event,
                                                                "ann-key-0002")))
    first.start()
    try:
        assert sending.wait(10)
        during = [asked(meter, client, event, "ann-key-0002") for _ in range(2)]
    finally:
        release.set()
        first.join(10)
        events.unregister("before-send.dynamodb.TransactWriteItems", unique_id="held-ann")
    after = asked(meter, client, event, "ann-key-0002")
    return answers[0], during, after


def assert_in_flight_from_reads(first, during, after):
    assert first.status_code == 201, first.content
    for response, operations in during:
        assert response.status_code == 202, response.content
        assert response.json()["status"] == "pending"
        assert 1 <= int(response["Retry-After"]) <= 3
        assert writes(operations) == [], operations
    response, operations = after
    assert response.status_code == 201 and response.json() == first.json()
    assert writes(operations) == [], operations


def test_in_flight__reasked__202_from_reads_then_the_first_answer(meter):
    first, during, after = in_flight_reasked(meter)

    assert_in_flight_from_reads(first, during, after)
    # The limits' item (asked a moment ago), then the request row (absent: in flight).
    assert during[0][1] == ["BatchGetItem", "GetItem"], during[0][1]


def test_in_flight__control_writing_repeats__caught(meter):
    with WritingRepeats():
        first, during, after = in_flight_reasked(meter)

    with pytest.raises(AssertionError):
        assert_in_flight_from_reads(first, during, after)
