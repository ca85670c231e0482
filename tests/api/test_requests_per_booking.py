"""The API's booking costs what the form's does: counted on the wire (botocore's
before-send hook) against DynamoDB Local."""
import json

from booking.dynamo.metrics import RequestMeter
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
