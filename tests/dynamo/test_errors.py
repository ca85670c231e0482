"""The access layer turns botocore errors into its own store errors
(booking/dynamo/access.py), and the service layer turns those into domain errors
(booking/service/store_errors.py), keeping each cause."""
import pytest
from botocore.exceptions import ClientError, EndpointConnectionError

from booking import errors
from booking.dynamo.access import StoreError, Throttled, Unavailable, translate
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
