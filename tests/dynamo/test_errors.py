"""The access layer turns botocore errors into its own store errors
(booking/dynamo/access.py), and the service layer turns those into domain errors
(booking/service/store_errors.py), keeping each cause."""
from types import SimpleNamespace

import pytest
from botocore.exceptions import (ClientError, ConnectTimeoutError, EndpointConnectionError,
                                 ReadTimeoutError)

from booking import errors
from booking.dynamo.access import (StoreError, Throttled, Unavailable, _note_lost_attempt,
                                   lost_attempts, translate)
from booking.dynamo.leases import LeaseTaken
from booking.service.store_errors import domain_error, translated, translating


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
    (Throttled(maybe_applied=True), errors.BookingContention, "maybe_applied", True),
    (Throttled("The store is too busy."), errors.BookingContention, "message",
     "The store is too busy."),
    (LeaseTaken("held by x", holder="x", expires_at=5.0), errors.LeaseHeld, "holder", "x"),
])
def test_domain_error__each_store_failure__its_domain_error_with_the_cause(
        store_error, domain, attribute, value):
    error = domain_error(store_error)

    assert isinstance(error, domain) and getattr(error, attribute) == value
    assert error.__cause__ is store_error


def test_translated__store_failure_inside__leaves_as_domain_error():
    with pytest.raises(errors.StoreUnavailable) as raised:
        with translated():
            raise Unavailable()

    assert isinstance(raised.value.__cause__, StoreError)


def test_translating__public_methods_and_their_iterators__translate():
    @translating
    class Reader:
        def read(self):
            raise Throttled()

        def pages(self):
            yield 1
            raise Unavailable()

        def _inner(self):
            raise Unavailable()

    reader = Reader()
    with pytest.raises(errors.BookingContention):
        reader.read()
    with pytest.raises(errors.StoreUnavailable):
        list(reader.pages())
    with pytest.raises(Unavailable):  # private methods run inside a public one
        reader._inner()


def test_translate__transaction_throttled__cancelled_and_worth_retrying():
    # A partition over its capacity cancels a transaction with a ThrottlingError reason
    # (the capacity proxy answers so, as DynamoDB does): nothing applied, so the
    # strategies' loop retries it like a conflict instead of raising it.
    exc = ClientError({"Error": {"Code": "TransactionCanceledException", "Message": "x"},
                       "CancellationReasons": [{"Code": "None"}, {"Code": "ThrottlingError"}],
                       "ResponseMetadata": {"HTTPStatusCode": 400}}, "TransactWriteItems")
    cancelled = translate(exc)

    assert cancelled.code(1) == "ThrottlingError" and cancelled.conflict
