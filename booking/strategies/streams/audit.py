"""Audit and repair of the streams strategy: the event item's counts against the confirmed
orders and the holds, no request left pending long while a decider runs, and a recount
written only if ``count_changes`` did not move (docs/streams.md#audit-and-repair).
"""
import time
from collections import Counter
from datetime import datetime

from booking.dynamo.access import ConditionFailed
from booking.models import CAPACITY_QUOTA, CONFIRMED, PENDING
from booking.strategies import audit
from booking.strategies.holds import held_seats
from booking.strategies.streams.holds import STATUS_NAMES

PENDING_DECIDED = "pending_decided_in_time"
IN_EVENT = "event_id = :e"
COUNTS = "confirmed_count, count_changes, holds, hold_seats, quota_counts"
RECOUNT = "SET confirmed_count = :count ADD count_changes :one"
RECOUNT_QUOTAS = "SET confirmed_count = :count, quota_counts = :quotas ADD count_changes :one"
UNCHANGED = "attribute_exists(event_id) AND count_changes = :changes"
NEVER_CHANGED = "attribute_exists(event_id) AND attribute_not_exists(count_changes)"


def counted(strategy, event, counter: dict) -> tuple[Counter, list[dict]]:
    """Seats per quota of the confirmed orders and the holds, and the registrations read."""
    stored = list(strategy.registrations_table.query(
        key_condition=IN_EVENT, values={":e": event.id},
        projection="email, #status, registered_at, tickets", names=STATUS_NAMES))
    confirmed = (item.get("tickets") for item in stored if item.get("status") == CONFIRMED)
    return audit.seats_taken(event, confirmed) + held_seats(counter), stored


def audit_event(strategy, event) -> list[audit.Violation]:
    now = time.time()
    counter = strategy.events.get({"event_id": event.id}, projection=COUNTS) or {}
    seats, stored = counted(strategy, event, counter)
    counts = {**(counter.get("quota_counts") or {}),
              CAPACITY_QUOTA: counter.get("confirmed_count")}
    found = audit.seat_violations(event, seats, counts, "event item confirmed_count vs "
                                  "confirmed registrations and holds")
    pending = [datetime.fromisoformat(item["registered_at"]).timestamp()
               for item in stored if item.get("status") == PENDING]
    found += _stale_pending(strategy, event.id, pending, now)
    return found + audit.person_violations(event.id, [item["email"] for item in stored])


def _stale_pending(strategy, event_id, pending, now) -> list[audit.Violation]:
    """Pending registrations older than the threshold, reported only while a decider
    runs (without one, waiting is expected: start ``booking_worker``)."""
    limit = strategy.stale_pending_seconds
    old = [at for at in pending if at < now - limit]
    if not old or not strategy.decider_running(now):
        return []
    return [audit.Violation(event_id, PENDING_DECIDED, f"none pending over {limit:g}s",
                            len(old), f"oldest waited {now - min(old):.0f}s while a decider "
                                      "ran: its stream records may have been trimmed")]


def repair_event(strategy, event) -> list[str]:
    key = {"event_id": event.id}
    for _ in strategy.retry.attempts():
        item = strategy.events.get(key, projection=COUNTS)
        if item is None:
            return []
        seats, _ = counted(strategy, event, item)
        taken, quotas = seats["capacity"], {quota: seats[quota] for quota in event.quotas}
        if item.get("confirmed_count") == taken and (item.get("quota_counts") or {}) == quotas:
            return []
        changes = item.get("count_changes")
        try:
            strategy.events.update(
                key, RECOUNT_QUOTAS if quotas else RECOUNT,
                condition=NEVER_CHANGED if changes is None else UNCHANGED,
                values={":count": taken, ":one": 1, **({":quotas": quotas} if quotas else {}),
                        **({":changes": changes} if changes is not None else {})})
        except ConditionFailed:
            continue  # a decision, cancellation or hold landed while counting: count again
        return [f"confirmed_count {item.get('confirmed_count')} -> {taken}"]
    return []
