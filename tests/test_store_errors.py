"""The access layer turns botocore errors into domain errors (booking/dynamo/access.py)."""
import pytest
from botocore.exceptions import ClientError

from booking import errors
from booking.dynamo.access import translate


def client_error(code, status):
    return ClientError({"Error": {"Code": code, "Message": "x"},
                        "ResponseMetadata": {"HTTPStatusCode": status}}, "PutItem")


@pytest.mark.parametrize(("code", "status"), [
    ("InternalServerError", 500), ("ServiceUnavailable", 503), ("SomethingNew", 502)])
def test_translate__server_error_after_retries__store_unavailable(code, status):
    # Found by the torture run: a 500 on every attempt reached the caller as a raw
    # ClientError instead of "temporarily unavailable".
    assert isinstance(translate(client_error(code, status)), errors.StoreUnavailable)


def test_translate__throttled_after_retries__contention():
    translated = translate(client_error("ProvisionedThroughputExceededException", 400))

    assert isinstance(translated, errors.BookingContention)


def test_translate__unknown_client_error__kept_as_is():
    error = client_error("ValidationException", 400)

    assert translate(error) is error
