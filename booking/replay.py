"""Replay of failed requests (seed 000's archive replay): re-run only what ended ``failed``.

Each candidate is a ``failed`` history row in the window that is still its request's newest
live row. Re-running goes through ``BookingService`` with the same request id, so the
request history's atomic counter still lets at most one runner execute it; the lease only
keeps two replays from racing each other.
"""
import time
from collections.abc import Iterator
from dataclasses import asdict, dataclass

from django.conf import settings

from . import requests
from .dynamo import history, leases
from .errors import BookingError

LEASE_ID = "replay_failed"


@dataclass(frozen=True)
class Replayed:
    request_id: str
    operation: str
    event_id: str
    email: str
    failed_reason: str
    outcome: str  # "succeeded", an error code, or "dry_run"

    def as_dict(self) -> dict:
        return asdict(self)


def replay_failed(service, *, since: float = 0.0, until: float | None = None,
                  dry_run: bool = False, page_size: int = 100) -> list[Replayed]:
    """Re-run each request whose newest row is ``failed`` (created in [since, until]).

    Raises ``LeaseHeld`` while another (non-dry) replay runs.
    """
    until = time.time() if until is None else until
    if dry_run:
        return [_entry(row, "dry_run") for row in _candidates(since, until, page_size)]
    lease = leases.acquire(LEASE_ID, seconds=settings.BOOKING_REPLAY_LEASE_SECONDS)
    try:
        return [_entry(row, _rerun(service, row)) for row in _candidates(since, until, page_size)]
    finally:
        leases.release(lease)


def _candidates(since: float, until: float, page_size: int) -> Iterator[dict]:
    seen: set[str] = set()  # a re-run that fails again writes a newer failed row
    start_key = None
    while True:
        rows, start_key = history.failed_page(since=since, until=until, start_key=start_key,
                                              limit=page_size)
        for row in rows:
            newest = requests.newest_live_row(row["request_id"])
            if row["request_id"] in seen or newest is None or newest["seq"] != row["seq"]:
                continue
            seen.add(row["request_id"])
            yield row
        if start_key is None:
            return


def _rerun(service, row: dict) -> str:
    try:
        if row["operation"] == "cancel":
            service.cancel(row["event_id"], email=row["email"],
                           registration_id=row.get("registration_id"),
                           request_id=row["request_id"])
        else:
            service.book(row["event_id"], name=row["name"], email=row["email"],
                         request_id=row["request_id"])
    except BookingError as error:
        return error.code
    return "succeeded"


def _entry(row: dict, outcome: str) -> Replayed:
    return Replayed(row["request_id"], row["operation"], row["event_id"], row["email"],
                    row.get("reason_code", ""), outcome)
