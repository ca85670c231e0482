"""Audit and repair for the streams strategy: the event's counter must count the confirmed
seats and the seats held for waiting-list offers, and nothing may wait for a decision long
while a decider runs.

Repair recounts the confirmed registrations, adds the holds of the event item it read, and
writes the count only if the item's ``count_changes`` (bumped by every decision,
cancellation and hold that moves the count) is unchanged since it was read: a change that
landed while counting sends it round again.
"""
import time
from datetime import datetime

from booking.strategies import audit
from booking.dynamo.access import ConditionFailed
from booking.strategies.holds import held_seats
from booking.models import CONFIRMED, PENDING

PENDING_DECIDED = "pending_decided_in_time"


def audit_event(strategy, event, *, now: float | None = None) -> list[audit.Violation]:
    now = time.time() if now is None else now
    counter = strategy.events.get({"event_id": event.id},
                                  projection="confirmed_count, holds, hold_seats, quota_counts")
    confirmed, pending, emails = [], [], []
    for item in strategy.registrations_table.query(
            key_condition="event_id = :e", values={":e": event.id},
            projection="email, #status, registered_at, tickets", names={"#status": "status"}):
        emails.append(item["email"])
        if item.get("status") == CONFIRMED:
            confirmed.append(item.get("tickets"))
        if item.get("status") == PENDING:
            pending.append(datetime.fromisoformat(item["registered_at"]).timestamp())
    seats = audit.seats_taken(event, confirmed) + held_seats(counter)  # held seats are taken
    taken = seats["capacity"]
    found = audit.capacity_violation(event.id, event.capacity, taken)
    stored = (counter or {}).get("confirmed_count")
    if stored != taken:
        found.append(audit.Violation(event.id, audit.COUNTER, taken, stored,
                                     "event item confirmed_count vs confirmed registrations "
                                     "and holds"))
    found += audit.quota_violations(event, seats, (counter or {}).get("quota_counts") or {})
    found += _stale_pending(strategy, event.id, pending, now)
    return found + audit.person_violations(event.id, emails)


def _stale_pending(strategy, event_id, pending, now) -> list[audit.Violation]:
    """Pending registrations older than the threshold, reported only while a decider
    runs (without one, waiting is expected: start ``booking_worker``)."""
    limit = strategy.stale_pending_seconds
    if not pending or not strategy.decider_running(now):
        return []
    old = [at for at in pending if at < now - limit]
    if not old:
        return []
    return [audit.Violation(event_id, PENDING_DECIDED, f"none pending over {limit:g}s",
                            len(old), f"oldest waited {now - min(old):.0f}s while a decider "
                                      "ran: its stream records may have been trimmed")]


def repair_event(strategy, event) -> list[str]:
    key = {"event_id": event.id}
    for _ in strategy.retry.attempts():
        item = strategy.events.get(key, projection="confirmed_count, count_changes, holds, "
                                                   "hold_seats, quota_counts")
        if item is None:
            return []
        changes = item.get("count_changes")
        unchanged = ("count_changes = :changes" if changes is not None
                     else "attribute_not_exists(count_changes)")
        seats = audit.seats_taken(event, (i.get("tickets") for i in strategy.registrations_table.query(
            key_condition="event_id = :e", projection="tickets, #status",
            names={"#status": "status"}, values={":e": event.id}) if i.get("status") == CONFIRMED))
        seats += held_seats(item)  # seats held for offers
        taken = seats["capacity"]
        quotas = {quota: seats[quota] for quota in event.quotas}
        if item.get("confirmed_count") == taken and (item.get("quota_counts") or {}) == quotas:
            return []
        try:
            strategy.events.update(
                key, "SET confirmed_count = :count" + (", quota_counts = :quotas" if quotas else "")
                + " ADD count_changes :one",
                condition=f"attribute_exists(event_id) AND {unchanged}",
                values={":count": taken, ":one": 1, **({":quotas": quotas} if quotas else {}),
                        **({":changes": changes} if changes is not None else {})})
        except ConditionFailed:
            continue  # a decision, cancellation or hold landed while counting: count again
        return [f"confirmed_count {item.get('confirmed_count')} -> {taken}"]
