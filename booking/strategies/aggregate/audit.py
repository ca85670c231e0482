"""Audit and repair for the aggregate strategy: the event item's counts must match its
attendees and holds. How a repair stays right beside bookings: docs/strategies/aggregate.md.
"""
from booking.dynamo.access import ConditionFailed
from booking.models import Event
from booking.strategies import audit
from booking.strategies.aggregate.holds import BUMP, BUMP_VALUES
from booking.strategies.holds import held_seats

FIX_COUNT = "SET confirmed_count = :count, " + BUMP
FIX_COUNTS = FIX_COUNT + ", quota_counts = :quotas"  # an event with further quotas
UNBUMPED = "attribute_not_exists(booking_version)"  # an item no booking has written yet
AS_READ = "booking_version = :read"


def audit_event(strategy, event: Event) -> list[audit.Violation]:
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


def _seats(event: Event, attendees: dict):
    """Seats per quota of the attendees' orders (one each on a plain event)."""
    return audit.seats_taken(event, (value.get("tickets") for value in attendees.values()))


def repair_event(strategy, event: Event) -> list[str]:
    """Recount from one read and write it back only if ``booking_version`` is unchanged
    (a booking landing meanwhile makes the write fail: recount)."""
    key = {"event_id": event.id}
    for _ in strategy.retry.attempts():
        item = strategy.events.get(key)
        if item is None:
            return []
        seats = _seats(event, item.get("attendees") or {}) + held_seats(item)
        actual, stored = seats["capacity"], item.get("confirmed_count")
        quotas = {quota: seats[quota] for quota in event.quotas}
        if stored == actual and (item.get("quota_counts") or {}) == quotas:
            return []
        read = item.get("booking_version")
        values = {":count": actual, **BUMP_VALUES, **({":quotas": quotas} if quotas else {})}
        try:
            strategy.events.update(key, FIX_COUNTS if quotas else FIX_COUNT,
                                   condition=UNBUMPED if read is None else AS_READ,
                                   values=values if read is None else {**values, ":read": read})
        except ConditionFailed:
            continue  # a booking or edit landed since the read: recount from a fresh read
        return [f"confirmed_count {stored} -> {actual}"
                + (f", quota counts {item.get('quota_counts')} -> {quotas}" if quotas else "")]
    return []
