"""Audit and repair of the streams strategy: the event item's counts against the confirmed
orders and the holds, no request left pending long while a decider runs, and a recount
written only if ``count_changes`` did not move (docs/streams.md#audit-and-repair).
"""
from __future__ import annotations

import time
from collections import Counter
from datetime import datetime

from booking.dynamo.access import ConditionFailed
from booking.dynamo.expressions import Actions, Condition, attr, projection
from booking.models import CAPACITY_QUOTA, CONFIRMED, PENDING, Event
from booking.strategies import audit
from booking.strategies.holds import held_seats
from booking.strategies.streams.holds import CHANGES
from booking.strategies.parts import StreamsParts

PENDING_DECIDED = "pending_decided_in_time"
COUNTS = projection("confirmed_count", "count_changes", "holds", "hold_seats", "quota_counts")
STORED = projection("email", "status", "registered_at", "tickets")


def in_event(event_id: str) -> Condition:
    """The key condition of an event's registrations."""
    return attr("event_id").eq(event_id)


def counted(strategy: StreamsParts, event: Event, counter: dict) -> tuple[Counter, list[dict]]:
    """Seats per quota of the confirmed orders and the holds, and the registrations read."""
    stored = list(strategy.registrations_table.query(key_condition=in_event(event.id),
                                                     projection=STORED))
    confirmed = (item.get("tickets") for item in stored if item.get("status") == CONFIRMED)
    return audit.seats_taken(event, confirmed) + held_seats(counter), stored


def audit_event(strategy: StreamsParts, event: Event) -> list[audit.Violation]:
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


def _stale_pending(strategy: StreamsParts, event_id: str, pending: list[float],
                   now: float) -> list[audit.Violation]:
    """Pending registrations older than the threshold, reported only while a decider
    runs (without one, waiting is expected: start ``booking_worker``)."""
    limit = strategy.stale_pending_seconds
    old = [at for at in pending if at < now - limit]
    if not old or not strategy.decider_running(now):
        return []
    return [audit.Violation(event_id, PENDING_DECIDED, f"none pending over {limit:g}s",
                            len(old), f"oldest waited {now - min(old):.0f}s while a decider "
                                      "ran: its stream records may have been trimmed")]


def repair_event(strategy: StreamsParts, event: Event) -> list[str]:
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
        recount = Actions().set("confirmed_count", taken)
        if quotas:
            recount = recount.set("quota_counts", quotas)
        unchanged = CHANGES.not_exists() if changes is None else CHANGES.eq(changes)
        try:
            strategy.events.update(key, recount.add(CHANGES, 1),
                                   condition=attr("event_id").exists() & unchanged)
        except ConditionFailed:
            continue  # a decision, cancellation or hold landed while counting: count again
        return [f"confirmed_count {item.get('confirmed_count')} -> {taken}"]
    return []
