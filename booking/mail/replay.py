"""Replay of failed e-mail sends (the history's replay): re-run only what ended ``failed``.

Only technical failures of work delivered at least once are replayed: an e-mail whose
send failed (its newest history row is ``failed``) and whose outbox row is still there.
Booking decisions are never re-run: a refused booking wrote nothing and stays refused
unless the person asks again. Each candidate is sent through ``MailSender`` with
``retry_failed``, so the atomic counter still lets at most one sender send it; the lease
only keeps two replays from racing each other.
"""
import time
from collections.abc import Iterator
from dataclasses import asdict, dataclass

from booking.mail import sender as mail
from booking.dynamo.leases import Leases
from booking.errors import BookingError

LEASE_ID = "replay_failed"


@dataclass(frozen=True)
class Replayed:
    message_id: str
    kind: str  # an outbox kind (booking/models.py)
    event_id: str
    email: str
    failed_reason: str
    outcome: str  # "sent", "already_sent", "in_progress", "failed", an error code, "dry_run"

    def as_dict(self) -> dict:
        return asdict(self)


def replay_failed(sender: mail.MailSender, leases: Leases, *, since: float = 0.0,
                  until: float | None = None, dry_run: bool = False, page_size: int = 100,
                  lease_seconds: float = 300.0) -> list[Replayed]:
    """Send again each e-mail whose newest row is ``failed`` (failed in [since, until]).

    Raises ``LeaseHeld`` while another (non-dry) replay runs.
    """
    until = time.time() if until is None else until
    if dry_run:
        return [_entry(row, "dry_run") for row, _ in _candidates(sender, since, until,
                                                                  page_size)]
    lease = leases.acquire(LEASE_ID, seconds=lease_seconds)
    try:
        return [_entry(row, _resend(sender, message))
                for row, message in _candidates(sender, since, until, page_size)]
    finally:
        leases.release(lease)


def _candidates(sender, since: float, until: float, page_size: int) -> Iterator[tuple]:
    seen: set[str] = set()  # a re-send that fails again writes a newer failed row
    start_key = None
    while True:
        rows, start_key = sender.history.failed_page(since=since, until=until,
                                                     start_key=start_key, limit=page_size)
        for row in rows:
            key = row["request_id"]
            newest = mail.newest_live_row(sender.history, key)
            if key in seen or newest is None or newest["seq"] != row["seq"]:
                continue
            message = sender.outbox.get(key)
            if message is None:
                continue  # no longer owed
            seen.add(key)
            yield row, message
        if start_key is None:
            return


def _resend(sender, message: dict) -> str:
    try:
        return sender.send(message, retry_failed=True)
    except BookingError as error:
        return error.code


def _entry(row: dict, outcome: str) -> Replayed:
    return Replayed(row["request_id"], row.get("operation", ""), row.get("event_id", ""),
                    row.get("email", ""), row.get("reason_code", ""), outcome)
