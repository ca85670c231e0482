"""The aggregate strategy's event item: its size, the booking's and the cancellation's
updates, its seats read back, its audit and repair (docs/strategies/aggregate.md)."""
from __future__ import annotations

from collections import Counter

from booking.dynamo import items
from booking.dynamo.access import ConditionFailed
from booking.dynamo.expressions import (Actions, Condition, Path, Projection, all_of, attr,
                                        projection)
from booking.models import CAPACITY_QUOTA, Event, Order, Registration
from booking.strategies import audit
from booking.strategies.holds import held_seats
from booking.strategies.quota_counts import count_changes, quota_paths
from booking.strategies.parts import Retries

# Worst cases of each part of the item: docs/strategies/aggregate.md, "The item's size".
ITEM_SIZE_LIMIT = 400 * 1024
EVENT_ATTRIBUTES_RESERVE = 12 * 1024
ATTENDEE_MAX_BYTES = 900
ORDER_DEFINITION_RESERVE = 11 * 1024
TICKET_ENTRY_MAX_BYTES = 60
MAX_CAPACITY = (ITEM_SIZE_LIMIT - EVENT_ATTRIBUTES_RESERVE) // ATTENDEE_MAX_BYTES
ORDER_MAX_CAPACITY = ((ITEM_SIZE_LIMIT - EVENT_ATTRIBUTES_RESERVE - ORDER_DEFINITION_RESERVE)
                      // (ATTENDEE_MAX_BYTES + TICKET_ENTRY_MAX_BYTES))

# What every write of the item adds: the version a repair checks (-1 read: unwritten).
VERSION = attr("booking_version")
BUMP = Actions().set(VERSION, VERSION.if_not_exists(0).plus(1))
NEW_EVENT = attr("event_id").not_exists()
COUNTS = ("event_id", "capacity", "confirmed_count", "holds", "hold_seats", "quota_capacities",
          "quota_counts")
AVAILABILITY = projection(*COUNTS)
ATTENDEES = projection("event_id", "attendees")


def attendee(email: str) -> Path:
    """The person's entry in the item's ``attendees`` map."""
    return attr("attendees", email)


def first_read(email: str) -> Projection:
    """The counts and the person's attendee."""
    return projection(*COUNTS, attendee(email))


def attendee_read(email: str) -> Projection:
    return projection("event_id", attendee(email))


def room(order: Order) -> Condition:
    """The condition that every quota ``order`` draws on has room for its seats: one seat
    needs no guess of the capacity; more check the guess (a condition cannot add)."""
    conditions = []
    for quota, (count, capacity) in quota_paths(order.seats).items():
        seats, guess = order.seats[quota], order.capacities[quota]
        conditions.append(count.lt(capacity) if seats == 1
                          else capacity.ge(guess) & count.le(guess - seats))
    return all_of(conditions)


def book_update(registration: Registration, order: Order) -> tuple[Actions, Condition]:
    """Add the attendee and its seats to each quota's count if new and all have room."""
    person = attendee(registration.email)
    return (Actions().set(person, items.attendee_value(registration))
            + count_changes(order.seats, "+") + BUMP,
            attr("event_id").exists() & person.not_exists() & room(order))


def cancel_update(stored: Registration, seats: dict[str, int],
                  keep: dict[str, int]) -> tuple[Actions, Condition]:
    """Give back ``seats``, removing the attendee (or leaving it ``keep``) if still as read."""
    person = attendee(stored.email)
    tickets = person / "tickets"
    change = Actions().set(tickets, keep) if keep else Actions().remove(person)
    as_read = tickets.not_exists() if stored.ticket_counts is None else tickets.eq(stored.tickets)
    return (change + count_changes(seats, "-") + BUMP,
            (person / "registration_id").eq(stored.registration_id) & as_read)


# per quota: attendees' seats (1 without tickets), holds'
def taken(event: Event, item: dict) -> Counter:
    tickets = (value.get("tickets") for value in (item.get("attendees") or {}).values())
    return audit.seats_taken(event, tickets) + held_seats(item)


def audit_event(strategy: Retries, event: Event) -> list[audit.Violation]:
    item = strategy.events.get({"event_id": event.id})
    if item is None:
        return []
    counted = {**(item.get("quota_counts") or {}), CAPACITY_QUOTA: item.get("confirmed_count")}
    found = audit.seat_violations(event, taken(event, item), counted,
                                  "confirmed_count vs attendees", capacity=int(item["capacity"]))
    return found + audit.person_violations(event.id, item.get("attendees") or {})


def repair_event(strategy: Retries, event: Event) -> list[str]:
    """Recount from one read; write it back only if ``booking_version`` is unchanged."""
    for _ in strategy.retry.attempts():
        item = strategy.events.get(key := {"event_id": event.id})
        if item is None:
            return []
        seats, stored = taken(event, item), item.get("confirmed_count")
        quotas = {quota: seats[quota] for quota in event.quotas}
        if stored == seats["capacity"] and (item.get("quota_counts") or {}) == quotas:
            return []
        fix = Actions().set("confirmed_count", seats["capacity"]) + BUMP
        if quotas:  # an event with further quotas
            fix = fix.set("quota_counts", quotas)
        as_read = VERSION.not_exists() | VERSION.eq(item.get("booking_version", -1))
        try:
            strategy.events.update(key, fix, condition=as_read)
        except ConditionFailed:
            continue  # a booking or edit landed since the read: recount from a fresh read
        further = f", quota counts {item.get('quota_counts')} -> {quotas}" if quotas else ""
        return [f"confirmed_count {stored} -> {seats['capacity']}{further}"]
    return []
