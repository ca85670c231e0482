"""The access layer turns botocore errors into its own store errors
(booking/dynamo/access.py), each of them its domain error where it is raised
(booking/dynamo/errors.py), keeping botocore's error as the cause."""
from types import SimpleNamespace

import pytest
from botocore.exceptions import (ClientError, ConnectTimeoutError, EndpointConnectionError,
                                 ReadTimeoutError)

from booking import errors
from booking.dynamo.access import (PastDeadline, StoreError, Throttled, Unavailable,
                                   _note_lost_attempt, lost_attempts, translate)
from booking.dynamo.leases import LeaseTaken


def client_error(code, status):
    return ClientError({"Error": {"Code": code, "Message": "x"},
                        "ResponseMetadata": {"HTTPStatusCode": status}}, "PutItem")


@pytest.mark.parametrize(("code", "status"), [
    ("InternalServerError", 500), ("ServiceUnavailable", 503), ("SomethingNew", 502)])
def test_translate__server_error_after_retries__unavailable(code, status):
    # Found by the torture run: a 500 on every attempt reached the caller as a raw
    # ClientError instead of "temporarily unavailable".
    assert isinstance(translate(client_error(code, status)), Unavailable)


def test_translate__throttled_after_retries__throttled_maybe_applied():
    translated_error = translate(client_error("ProvisionedThroughputExceededException", 400))

    assert isinstance(translated_error, Throttled) and translated_error.maybe_applied


def test_translate__no_connection__unavailable_unreachable():
    error = translate(EndpointConnectionError(endpoint_url="http://127.0.0.1:1"))

    assert isinstance(error, Unavailable) and error.unreachable


@pytest.mark.parametrize("code", ["TransactionInProgressException",
                                  "IdempotentParameterMismatchException"])
def test_translate__token_held_by_another_attempt__unavailable_outcome_to_read_back(code):
    # Found by the torture run: a cancellation rebuilt from a re-read after its first
    # attempt applied reused that attempt's token with other members.
    assert isinstance(translate(client_error(code, 400)), Unavailable)


@pytest.mark.parametrize(("operation", "response", "caught", "lost"), [
    ("TransactWriteItems", None, ReadTimeoutError(endpoint_url="x"), True),
    ("PutItem", (SimpleNamespace(status_code=500), {}), None, True),
    ("UpdateItem", (SimpleNamespace(status_code=400), {}), None, False),  # a throttle
    ("TransactWriteItems", None, ConnectTimeoutError(endpoint_url="x"), False),  # never sent
    ("GetItem", None, ReadTimeoutError(endpoint_url="x"), False),  # a read changes nothing
])
def test_lost_attempts__counts_writes_whose_attempt_may_still_apply(operation, response, caught,
                                                                    lost):
    before = lost_attempts()
    _note_lost_attempt(response=response, caught_exception=caught,
                       operation=SimpleNamespace(name=operation))
    assert lost_attempts() - before == (1 if lost else 0)


def test_translate__unknown_client_error__kept_as_is():
    error = client_error("ValidationException", 400)

    assert translate(error) is error


@pytest.mark.parametrize(("store_error", "domain", "attribute", "value"), [
    (Unavailable(), errors.StoreUnavailable, "unreachable", False),
    (Unavailable(unreachable=True), errors.StoreUnavailable, "unreachable", True),
    (Unavailable(missing_table=True), errors.StoreUnavailable, "missing_table", True),
    (Throttled(maybe_applied=True), errors.BookingContention, "maybe_applied", True),
    (Throttled("The store is too busy."), errors.BookingContention, "message",
     "The store is too busy."),
    (PastDeadline(), errors.StillDeciding, "code", "still_deciding"),
    (LeaseTaken("held by x", holder="x", expires_at=5.0), errors.LeaseHeld, "holder", "x"),
])
def test_store_error__each_failure__is_its_domain_error(store_error, domain, attribute, value):
    # Nothing above the access layer translates: what it raises is what a person is shown.
    assert isinstance(store_error, domain) and isinstance(store_error, StoreError)
    assert getattr(store_error, attribute) == value


@pytest.mark.parametrize(("store_error", "not_this"), [
    (Throttled(), errors.StoreUnavailable), (Unavailable(), errors.BookingContention),
    (PastDeadline(), errors.StoreUnavailable), (PastDeadline(), errors.BookingContention)])
def test_store_error__one_domain_meaning_each(store_error, not_this):
    # "Busy, nothing happened", "unavailable" and "still deciding" are told apart by type.
    assert not isinstance(store_error, not_this)


def test_store_error__default_message_is_the_persons():
    assert Unavailable().message == errors.StoreUnavailable.default_message
    assert Throttled().message == errors.BookingContention.default_message


def test_translate__transaction_throttled__cancelled_and_worth_retrying():
    # A partition over its capacity cancels a transaction with a ThrottlingError reason
    # (the capacity proxy answers so, as DynamoDB does): nothing applied, so the
    # strategies' loop retries it like a conflict instead of raising it.
    exc = ClientError({"Error": {"Code": "TransactionCanceledException", "Message": "x"},
                       "CancellationReasons": [{"Code": "None"}, {"Code": "ThrottlingError"}],
                       "ResponseMetadata": {"HTTPStatusCode": 400}}, "TransactWriteItems")
    cancelled = translate(exc)

    assert cancelled.code(1) == "ThrottlingError" and cancelled.conflict


@pytest.mark.parametrize("store_error,tally", [
    (Throttled(), "contention"), (Unavailable(), "error:StoreUnavailable"),
    (PastDeadline(), "error:StillDeciding"), (errors.EventFull(), "full")])
def test_race_tally__a_store_error_counts_as_its_domain_error(store_error, tally):
    # The race tests' tally (tests/concurrency/workers.py) names what a person was told, so
    # a throttle spent at the store is "contention" there, as at every entry point.
    from tests.concurrency.workers import outcome_of

    assert outcome_of(store_error) == tally
