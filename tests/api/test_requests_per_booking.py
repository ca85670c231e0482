"""The API's booking costs what the form's does: counted on the wire (botocore's
before-send hook) against DynamoDB Local."""
import json

import pytest

from booking.api import idempotency
from booking.dynamo.metrics import RequestMeter
from booking.entry import limits
from booking.wiring import get_booking_service
from tests.mail.helpers import deliver_owed


def test_api_booking__lock_table__one_transaction_plus_the_limiters_one(client, server_store):
    service = get_booking_service()
    event = service.create_event(name="Count", capacity=5, strategy="lock_table")
    meter = RequestMeter().install(service.store)
    try:
        with meter.track() as post:
            response = client.post(f"/api/v1/events/{event.id}/registrations/",
                                   json.dumps({"name": "Ada", "email": "ada@example.com"}),
                                   content_type="application/json",
                                   HTTP_IDEMPOTENCY_KEY="count-0001")
    finally:
        meter.uninstall()
    deliver_owed()

    assert response.status_code == 201
    # One read of the abuse limits' item (was this key asked before? a repeat then writes
    # nothing), their one write (per address and per e-mail, in one item), then the
    # booking's one transaction (seat, registration, request row with the key, outbox row).
    assert post.operations == ["BatchGetItem", "UpdateItem", "TransactWriteItems"], (
        post.operations)


def test_api_booking_with_a_code__one_transaction_plus_the_code_limiters_two(client,
                                                                           server_store):
    # A code's use rides in the booking's transaction; guessing codes is limited by an
    # attempt reserved before the booking and given back after a right code.
    service = get_booking_service()
    event = service.create_event(name="Count", capacity=5, strategy="lock_table")
    service.create_access_codes(event.id, codes=["COUNT-CODE"])
    meter = RequestMeter().install(service.store)
    try:
        with meter.track() as post:
            response = client.post(f"/api/v1/events/{event.id}/registrations/",
                                   json.dumps({"name": "Ada", "email": "ada@example.com",
                                               "access_code": "count-code"}),
                                   content_type="application/json",
                                   HTTP_IDEMPOTENCY_KEY="count-0002")
    finally:
        meter.uninstall()
    deliver_owed()

    assert response.status_code == 201
    assert sorted(post.operations) == sorted(
        ["BatchGetItem", "UpdateItem", "UpdateItem", "UpdateItem", "TransactWriteItems"]), (
        post.operations)


def refusals_counted(client, event, keys, *, body=None):
    """Each key's POST for a new person (or ``body``), from an address of its own (the
    same key: the same address), with its DynamoDB operations."""
    service = get_booking_service()
    meter = RequestMeter().install(service.store)
    answers = []
    try:
        for index, key in enumerate(keys):
            with meter.track() as post:
                response = client.post(
                    f"/api/v1/events/{event.id}/registrations/",
                    json.dumps(body or {"name": "Bea", "email": f"bea{index}@example.com"}),
                    content_type="application/json", HTTP_IDEMPOTENCY_KEY=key,
                    REMOTE_ADDR=f"127.0.0.{10 + keys.index(key)}")
            answers.append((response.status_code, post.operations))
    finally:
        meter.uninstall()
    return answers


@pytest.fixture(params=["mid-window", "first-minute"])
def window(request, monkeypatch):
    """Where in the limits' window the askings fall: a count in a window's first minute is
    not proven a first asking by its one write alone (``limits.FIRST_MARGIN_SECONDS``);
    "first-minute" puts every count there, "mid-window" none."""
    monkeypatch.setattr(limits, "FIRST_MARGIN_SECONDS",
                        10 ** 9 if request.param == "first-minute" else 0)
    return request.param


@pytest.mark.parametrize("strategy", ["shards", "lock_table", "slots", "aggregate"])
def test_api_refusal__after_a_sell_out__the_limits_ride_in_the_one_read(client, server_store,
                                                                        strategy, window):
    # Once this process saw the event sold out, the limits' item (was this key asked
    # before?) is read in the strategy's own first read: a refusal is that read and the
    # limits' one write, where it was their read, their write and the strategy's read.
    # In a window's first minute too: the batch read the window before, so no fence.
    service = get_booking_service()
    event = service.create_event(name="Sold out", capacity=1, strategy=strategy)
    service.book(event.id, name="Ada", email="ada@example.com")
    first, *later = refusals_counted(client, event, [f"refuse-{n:04}" for n in range(4)])
    assert first[0] == 409
    for status, operations in later:
        assert status == 409
        assert operations == ["BatchGetItem", "UpdateItem"], operations


def test_api_refusal__the_same_key_again_after_a_sell_out__fenced_before_full(client,
                                                                            server_store,
                                                                            window):
    # A key the limits counted before is a re-ask: its "full" waits for the fence of its
    # earlier askings (docs/exactly-once.md), read from the one batch, never counted again.
    service = get_booking_service()
    event = service.create_event(name="Sold out", capacity=1, strategy="shards")
    service.book(event.id, name="Ada", email="ada@example.com")
    body = {"name": "Bea", "email": "bea@example.com"}
    (first, _), (_, warm), (again, operations) = refusals_counted(
        client, event, ["warm-0001", "bea-0001", "bea-0001"], body=body)
    assert (first, again) == (409, 409)
    assert warm == ["BatchGetItem", "UpdateItem"]
    # The batch (the limits' items, the marker, the person, the request row), the request
    # row once more (an earlier asking may still be in flight), the fence: no count.
    assert operations == ["BatchGetItem", "GetItem", "PutItem"], operations
    stored = service.requests.read(api_request_id(event, "bea-0001", "bea@example.com"))
    assert stored is not None and "fenced" in stored  # the earlier askings' fence


def api_request_id(event, key, email):
    """The request id the API makes of a tokenless caller's key (``idempotency``)."""
    return idempotency.request_id(key, json.dumps([idempotency.PUBLIC_SCOPE, event.id, email]))
