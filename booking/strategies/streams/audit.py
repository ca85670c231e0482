"""Audit and repair of the streams strategy: the event item's counts against the confirmed
registrations and the holds, and no request left pending long while a decider runs.
Repair recounts, written only if ``count_changes`` did not move meanwhile (docs/streams.md).
"""
import time
from datetime import datetime

from booking.dynamo.access import ConditionFailed
from booking.models import CONFIRMED, PENDING
from booking.strategies import audit
from booking.strategies.holds import held_seats

PENDING_DECIDED = "pending_decided_in_time"
STATUS_NAMES = {"#status": "status"}
IN_EVENT = "event_id = :e"
COUNTS = "confirmed_count, count_changes, holds, hold_seats, quota_counts"
RECOUNT = "SET confirmed_count = :count ADD count_changes :one"
RECOUNT_QUOTAS = "SET confirmed_count = :count, quota_counts = :quotas ADD count_changes :one"
UNCHANGED = "attribute_exists(event_id) AND count_changes = :changes"
NEVER_CHANGED = "attribute_exists(event_id) AND attribute_not_exists(count_changes)"


def audit_event(strategy, event, *, now: float | None = None) -> list[audit.Violation]:
    now = time.time() if now is None else now
    counter = strategy.events.get({"event_id": event.id}, projection=COUNTS) or {}
    confirmed, pending, emails = [], [], []
    for item in strategy.registrations_table.query(
            key_condition=IN_EVENT, values={":e": event.id},
            projection="email, #status, registered_at, tickets", names=STATUS_NAMES):
        emails.append(item["email"])
        if item.get("status") == CONFIRMED:
            confirmed.append(item.get("tickets"))
        if item.get("status") == PENDING:
            pending.append(datetime.fromisoformat(item["registered_at"]).timestamp())
    seats = audit.seats_taken(event, confirmed) + held_seats(counter)  # held seats are taken
    taken = seats["capacity"]
    found = audit.capacity_violation(event.id, event.capacity, taken)
    if counter.get("confirmed_count") != taken:
        found.append(audit.Violation(event.id, audit.COUNTER, taken, counter.get("confirmed_count"),
                                     "event item confirmed_count vs confirmed registrations "
                                     "and holds"))
    found += audit.quota_violations(event, seats, counter.get("quota_counts") or {})
    found += _stale_pending(strategy, event.id, pending, now)
    return found + audit.person_violations(event.id, emails)


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
        confirmed = (i.get("tickets") for i in strategy.registrations_table.query(
            key_condition=IN_EVENT, projection="tickets, #status", names=STATUS_NAMES,
            values={":e": event.id}) if i.get("status") == CONFIRMED)
        seats = audit.seats_taken(event, confirmed) + held_seats(item)  # held for offers
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
