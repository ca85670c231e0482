"""Exactly-once booking requests over the request history (seed 000; docs/exactly-once.md).

``run(request, execute)`` decides whether this runner may execute the request:

1. Add 1 to the counter of the first start row (generation 0). A counter of 1 means the
   request is new: execute. (The common case costs no extra read.) So does a row whose
   ``runner`` is this call's own: botocore resent our update after losing its answer, so
   the counter counts us twice, but no other runner started.
2. Otherwise read the request's rows newest first and look at the newest live one (rows
   past retention count as absent): different content is refused; ``succeeded`` answers
   with the recorded result; a fresh ``started`` is still running; ``failed`` or a stale
   ``started`` (its runner crashed) may run again in the next generation, whose start row
   is claimed by the same atomic counter.

The winner records ``succeeded`` (with the registration) or ``failed`` (with the reason)
and returns or re-raises.
"""
import hashlib
import json
import logging
import time
import uuid
from collections.abc import Callable
from dataclasses import dataclass

from django.conf import settings

from .dynamo import history, items
from .errors import (BookingContention, BookingError, InvalidBooking, RequestInProgress,
                     StoreUnavailable)
from .models import Registration

logger = logging.getLogger(__name__)
MISMATCH = "This form was already used for a different booking."
RECORD_ATTEMPTS = 3  # each is botocore's full set of attempts
RECORD_RETRY_DELAY = 0.05


@dataclass(frozen=True)
class Request:
    request_id: str
    operation: str  # "book" or "cancel"
    content: dict  # normalized: event_id, email, and name or registration_id

    @property
    def fingerprint(self) -> str:
        payload = json.dumps([self.operation, self.content], sort_keys=True)
        return hashlib.sha256(payload.encode()).hexdigest()

    def fields(self) -> dict:
        """What every row stores: enough to recognise and to re-run the request."""
        return {"fingerprint": self.fingerprint, "operation": self.operation, **self.content}


def run(request: Request, execute: Callable[[], Registration]) -> Registration:
    """Execute ``request`` at most once at a time, or answer from its history.

    Raises ``InvalidBooking`` (the id was used for different content), ``RequestInProgress``
    (another runner holds it), or whatever ``execute`` raised (recorded as ``failed``).
    With ``BOOKING_DISABLE_REQUEST_HISTORY`` (a test-only control) it just executes.
    """
    if settings.BOOKING_DISABLE_REQUEST_HISTORY:
        return execute()
    now, runner = time.time(), uuid.uuid4().hex
    fields = {**request.fields(), "runner": runner}
    row = history.start(request.request_id, 0, fields, now=now, ttl=_ttl(now))
    if not _won(row, runner):
        decided = _resolve(request, now)
        if isinstance(decided, Registration):
            return decided
        row = history.start(request.request_id, decided, fields, now=now, ttl=_ttl(now))
        if not _won(row, runner):  # another runner claimed this generation first
            _refuse_if_different(request, row)
            raise RequestInProgress()
    return _execute(request, history.generation_of(row["seq"]), execute)


def _won(row: dict, runner: str) -> bool:
    """First starter of the row, or the same starter seen twice (a resent update)."""
    return row["atomic_counter"] == 1 or row.get("runner") == runner


def _resolve(request: Request, now: float) -> int | Registration:
    """The recorded result, or the generation this runner should try to start."""
    newest_seq = None
    for row in history.newest_first(request.request_id):
        newest_seq = row["seq"] if newest_seq is None else newest_seq
        if row["ttl"] <= now:
            continue  # past retention: absent, whether or not TTL has deleted it yet
        _refuse_if_different(request, row)
        if row["exec_status"] == history.SUCCEEDED:
            return items.registration_from_item(row["result"])
        if row["exec_status"] == history.STARTED and row["created_at"] > now - _stale_seconds():
            raise RequestInProgress()
        break  # failed, or started by a runner that crashed: run again
    return 0 if newest_seq is None else history.generation_of(newest_seq) + 1


def newest_live_row(request_id: str, *, now: float | None = None) -> dict | None:
    """The request's newest row within retention, or None."""
    now = time.time() if now is None else now
    return next((r for r in history.newest_first(request_id) if r["ttl"] > now), None)


def _refuse_if_different(request: Request, row: dict) -> None:
    if row.get("fingerprint") != request.fingerprint:
        raise InvalidBooking(MISMATCH, field="request_id")


def _execute(request: Request, generation: int, execute) -> Registration:
    outcome_seq = history.start_seq(generation) + 1
    try:
        result = execute()
    except BookingError as error:
        _record(request, outcome_seq, history.FAILED,
                {"reason_code": error.code, "reason": error.message})
        raise
    except Exception as error:
        _record(request, outcome_seq, history.FAILED,
                {"reason_code": "error", "reason": type(error).__name__})
        raise
    _record(request, outcome_seq, history.SUCCEEDED, {"result": items.registration_item(result)})
    return result


def _record(request: Request, seq: int, status: str, outcome: dict) -> None:
    """Write the outcome row, retrying a store that is briefly unavailable.

    Best effort in the end: if it cannot be written, the start row goes stale and a retry
    re-runs the request. Retrying is safe: the row is written only if absent.
    """
    now = time.time()
    fields = {**request.fields(), **outcome}
    for attempt in range(RECORD_ATTEMPTS):
        try:
            written = history.record(request.request_id, seq, status, fields, now=now,
                                     ttl=_ttl(now))
        except (StoreUnavailable, BookingContention) as error:  # botocore's attempts spent
            failure = error
            if attempt + 1 < RECORD_ATTEMPTS:
                time.sleep(RECORD_RETRY_DELAY * 2**attempt)
                continue
        except Exception as error:  # noqa: BLE001 - not worth retrying; logged below
            failure = error
        else:
            if not written:
                logger.info("Request %s: outcome row %s already present (a resent write)",
                            request.request_id, seq)
            return
        # The booking's own outcome matters more than its history row.
        logger.error("Could not record %s for request %s", status, request.request_id,
                     exc_info=failure)
        return


def _ttl(now: float) -> int:
    return int(now + settings.BOOKING_REQUEST_HISTORY_DAYS * 86400)


def _stale_seconds() -> float:
    return settings.BOOKING_REQUEST_STALE_SECONDS
