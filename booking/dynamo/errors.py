"""The access layer's own errors, and the mapping of botocore's errors to them.

A refusal carries its evidence (``ConditionFailed.old_item``, each
``TransactionCancelled`` reason's item); a ``StoreError`` says the store could not answer,
and is its domain error where it is raised (``Unavailable`` a ``StoreUnavailable``,
``Throttled`` a ``BookingContention``, ``PastDeadline`` a ``StillDeciding``; the lease's
``LeaseTaken`` a ``LeaseHeld``): nothing above translates, and the botocore error it came
from stays its ``__cause__``.
"""
from dataclasses import dataclass
from typing import Any, cast

from botocore.exceptions import BotoCoreError, ClientError, ConnectionError as BotoConnectionError

from booking.dynamo.codec import deserialize
from booking.errors import BookingContention, BookingError, StillDeciding, StoreUnavailable

THROTTLING_CODES = {
    "ProvisionedThroughputExceededException",
    "ThrottlingException",
    "RequestLimitExceeded",
    "LimitExceededException",
}
# Server-side failures that botocore retried until its attempts were spent.
UNAVAILABLE_CODES = {"InternalServerError", "ServiceUnavailable", "InternalFailure"}
# A transaction's ClientRequestToken is held by an attempt of the same write still running,
# or by one that applied with other values (a write rebuilt from a re-read after its first
# attempt's answer was lost): either way that attempt's outcome is what to find out.
TOKEN_IN_USE_CODES = {"TransactionInProgressException", "IdempotentParameterMismatchException"}


class ConditionFailed(Exception):
    """A conditional write was refused; ``old_item`` is the item as it stood (or None)."""

    def __init__(self, old_item: dict | None) -> None:
        self.old_item = old_item
        super().__init__("conditional check failed")


@dataclass(frozen=True)
class CancellationReason:
    code: str  # "None", "ConditionalCheckFailed", "TransactionConflict", ...
    old_item: dict | None


CONDITION_FAILED = "ConditionalCheckFailed"  # a cancellation reason's code


class TransactionCancelled(Exception):
    """A TransactWriteItems was cancelled; ``reasons`` lines up with the request's items."""

    def __init__(self, reasons: list[CancellationReason]):
        self.reasons = reasons
        super().__init__("transaction cancelled: " + ", ".join(r.code for r in reasons))

    def code(self, index: int) -> str:
        return self.reasons[index].code if index < len(self.reasons) else "None"

    @property
    def conflict(self) -> bool:
        """Nothing was applied and trying again may succeed: another transaction held an
        item, or a partition was over its capacity (``ThrottlingError``)."""
        return any(r.code in ("TransactionConflict", "ThrottlingError") for r in self.reasons)


class TransactionConflict(Exception):
    """A single-item write collided with a running transaction: safe to retry."""


class StoreError(BookingError):
    """The store failed to answer (nothing refused the request). Each kind below is also
    the domain error a person is shown (``booking/errors.py``)."""


class Unavailable(StoreError, StoreUnavailable):
    """The store answered with a server error, or could not be reached (``unreachable``)."""

    def __init__(self, message: str | None = None, *, unreachable: bool = False,
                 missing_table: bool = False):
        StoreUnavailable.__init__(self, message)
        self.unreachable = unreachable  # no connection could be made at all
        self.missing_table = missing_table  # the store answered: no such table


class Throttled(StoreError, BookingContention):
    """The store kept refusing for throughput until the retries were spent.
    ``maybe_applied``: an earlier attempt's answer may have been lost (botocore resent it)."""

    def __init__(self, message: str | None = None, *, maybe_applied: bool = False):
        BookingContention.__init__(self, message)
        self.maybe_applied = maybe_applied


class PastDeadline(StoreError, StillDeciding):
    """The request's deadline passed before this attempt could start: it was never sent
    (``booking.dynamo.access.deadline``); pending, and the same request asked again
    answers what happened."""

    def __init__(self, message: str | None = None):
        StillDeciding.__init__(self, message)


def caused_by_throttle(error: BaseException | None) -> bool:
    """Whether a throttle the store kept up (botocore's retries spent, or a transaction
    cancelled for ``ThrottlingError``) is behind ``error``, through its causes."""
    seen = set()
    while error is not None and id(error) not in seen:
        seen.add(id(error))
        if isinstance(error, Throttled) or (isinstance(error, TransactionCancelled) and any(
                reason.code == "ThrottlingError" for reason in error.reasons)):
            return True
        error = error.__cause__ or error.__context__
    return False


def translate(exc: Exception) -> Exception:
    """Map a botocore error to an access-layer error (the caller keeps the cause)."""
    if isinstance(exc, ClientError):
        error = exc.response.get("Error", {})
        code = error.get("Code", "")
        if code == "ConditionalCheckFailedException":
            old: Any = exc.response.get("Item")  # botocore's stubs type it as an object
            return ConditionFailed(deserialize(old))
        if code == "TransactionCanceledException":
            reasons = [
                CancellationReason(r.get("Code", "None"), deserialize(cast(Any, r.get("Item"))))
                for r in exc.response.get("CancellationReasons", [])
            ]
            return TransactionCancelled(reasons)
        if code == "TransactionConflictException":
            return TransactionConflict(error.get("Message", code))
        if code in THROTTLING_CODES:
            return Throttled(maybe_applied=True)  # an earlier attempt's answer may be lost
        status = exc.response.get("ResponseMetadata", {}).get("HTTPStatusCode") or 0
        if code in UNAVAILABLE_CODES or status >= 500:
            return Unavailable()
        if code in TOKEN_IN_USE_CODES:
            return Unavailable()
        if code == "ResourceNotFoundException":
            return Unavailable(
                "The booking tables do not exist yet. Run `python manage.py create_tables`.",
                missing_table=True)
        return exc
    if isinstance(exc, BotoConnectionError):  # no connection could be made at all
        return Unavailable(unreachable=True)
    if isinstance(exc, BotoCoreError):
        return Unavailable()
    return exc
