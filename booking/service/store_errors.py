"""The store's failures as domain errors: the one place they are translated.

The access layer raises its own errors (``booking.dynamo.access.StoreError``: the store
could not answer; ``booking.dynamo.leases.LeaseTaken``). Everything the product shows a
person or a command prints is a ``booking.errors.BookingError``, so each entry point over
the store translates on the way out: ``BookingService`` and ``MailSender`` by
``translating`` every public method, other callers with ``translated()``. The store's
error stays the domain error's ``__cause__``.
"""
import functools
import inspect
from collections.abc import Iterator
from contextlib import contextmanager

from booking.dynamo.access import PastDeadline, StoreError, Throttled, Unavailable
from booking.dynamo.errors import TransactionCancelled
from booking.dynamo.leases import LeaseTaken
from booking.errors import (BookingContention, BookingError, LeaseHeld, StillDeciding,
                            StoreUnavailable)

# What a caller inside the service catches when a write's outcome may be unknown: the
# store's own failures (raised below the facade) and their domain forms (raised above it).
UNAVAILABLE = (Unavailable, StoreUnavailable)
BUSY = (Throttled, BookingContention)


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


def domain_error(error: StoreError) -> BookingError:
    """The domain error for a store failure, carrying what the failure knew."""
    translated: BookingError
    if isinstance(error, PastDeadline):  # out of time: pending, ask again
        translated = StillDeciding()
    elif isinstance(error, Throttled):
        contention = BookingContention(error.message)
        contention.maybe_applied = error.maybe_applied
        translated = contention
    elif isinstance(error, LeaseTaken):
        translated = LeaseHeld(error.message, holder=error.holder, expires_at=error.expires_at)
    else:
        unavailable = StoreUnavailable(getattr(error, "message", None))
        unavailable.unreachable = getattr(error, "unreachable", False)
        unavailable.missing_table = getattr(error, "missing_table", False)
        translated = unavailable
    translated.__cause__ = error
    return translated


@contextmanager
def translated():
    """Inside the block, a store failure leaves as its domain error."""
    try:
        yield
    except StoreError as error:
        raise domain_error(error) from error


def _translated_iterator(iterator):
    with translated():
        yield from iterator


def _translating_method(method):
    @functools.wraps(method)
    def wrapper(*args, **kwargs):
        with translated():
            result = method(*args, **kwargs)
        if isinstance(result, Iterator):  # generators too: their reads happen later
            return _translated_iterator(result)  # the reads happen as it is iterated
        return result
    return wrapper


def translating(cls):
    """Class decorator: every public method of ``cls`` translates store failures."""
    for name, member in list(vars(cls).items()):
        if not name.startswith("_") and inspect.isfunction(member):
            setattr(cls, name, _translating_method(member))
    return cls
