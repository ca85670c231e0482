"""Audit and repair for the aggregate strategy: the event item's count must match its map.

Repair recomputes ``confirmed_count`` from the same item read it writes back to, and
writes only if ``booking_version`` (bumped by every booking and cancellation) is unchanged
(version-checked), so a booking that lands mid-repair makes the write fail and the repair re-reads
instead of overwriting the new count. Edits never write the count, so they need no check.
"""
from booking.strategies import audit
from booking.dynamo.access import ConditionFailed
from booking.strategies.aggregate.holds import BUMP
from booking.strategies.holds import held_seats

FIX_COUNT = f"SET confirmed_count = :count, {BUMP}"


def audit_event(strategy, event) -> list[audit.Violation]:
    item = strategy.events.get({"event_id": event.id})
    if item is None:
        return []
    attendees = item.get("attendees") or {}
    seats = _seats(event, attendees) + held_seats(item)  # waiting-list holds take seats
    taken = seats["capacity"]
    found = audit.capacity_violation(event.id, int(item["capacity"]), taken)
    if item.get("confirmed_count") != taken:
        found.append(audit.Violation(event.id, audit.COUNTER, taken, item.get("confirmed_count"),
                                     "confirmed_count vs attendees"))
    found += audit.quota_violations(event, seats, item.get("quota_counts") or {})
    return found + audit.person_violations(event.id, attendees)


def _seats(event, attendees):
    """Seats per quota of the attendees' orders (one each on a plain event)."""
    return audit.seats_taken(event, (value.get("tickets") for value in attendees.values()))


def repair_event(strategy, event) -> list[str]:
    key = {"event_id": event.id}
    for _ in strategy.retry.attempts():
        item = strategy.events.get(key)
        if item is None:
            return []
        seats = _seats(event, item.get("attendees") or {}) + held_seats(item)
        actual = seats["capacity"]
        stored = item.get("confirmed_count")
        quotas = {quota: seats[quota] for quota in event.quotas}
        if stored == actual and (item.get("quota_counts") or {}) == quotas:
            return []
        read = item.get("booking_version")
        condition, values = (("attribute_not_exists(booking_version)", {}) if read is None
                             else ("booking_version = :read", {":read": read}))
        try:
            strategy.events.update(key, FIX_COUNT + (", quota_counts = :quotas" if quotas else ""),
                                   condition=condition,
                                   values={":count": actual, ":one": 1, ":zero": 0, **values,
                                           **({":quotas": quotas} if quotas else {})})
        except ConditionFailed:
            continue  # a booking or edit landed since the read: recount from a fresh read
        return [f"confirmed_count {stored} -> {actual}"
                + (f", quota counts {item.get('quota_counts')} -> {quotas}" if quotas else "")]
