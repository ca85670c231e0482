"""The aggregate strategy's event item: how large it may grow, the booking's and the
cancellation's updates, its seats read back, its audit and repair (docs/strategies/aggregate.md).
"""
import dataclasses

from booking.dynamo import items
from booking.dynamo.access import ConditionFailed
from booking.models import Availability, Event, Order, Registration
from booking.strategies import audit
from booking.strategies.aggregate.holds import BUMP, BUMP_VALUES
from booking.strategies.holds import availability_of, held_seats, quota_availability_of
from booking.strategies.quota_counts import count_changes, quota_paths

# Worst cases (docs/strategies/aggregate.md, "The item's size"): the event's own
# attributes, one attendee, an event's ticket types and quotas, one entry of a tickets map.
ITEM_SIZE_LIMIT = 400 * 1024
EVENT_ATTRIBUTES_RESERVE = 12 * 1024
ATTENDEE_MAX_BYTES = 900
ORDER_DEFINITION_RESERVE = 11 * 1024
TICKET_ENTRY_MAX_BYTES = 60
MAX_CAPACITY = (ITEM_SIZE_LIMIT - EVENT_ATTRIBUTES_RESERVE) // ATTENDEE_MAX_BYTES
ORDER_MAX_CAPACITY = ((ITEM_SIZE_LIMIT - EVENT_ATTRIBUTES_RESERVE - ORDER_DEFINITION_RESERVE)
                      // (ATTENDEE_MAX_BYTES + TICKET_ENTRY_MAX_BYTES))

NEW_EVENT = "attribute_not_exists(event_id)"
AVAILABILITY = "event_id, #capacity, confirmed_count, holds, hold_seats, quota_capacities, quota_counts"
FIRST_READ = AVAILABILITY + ", attendees.#email"  # the counts and the person's attendee
ATTENDEE = "event_id, attendees.#email"
ATTENDEES = "event_id, attendees"
BOOK = "SET attendees.#email = :attendee, {counts}, " + BUMP
BOOK_CONDITION = "attribute_exists(event_id) AND attribute_not_exists(attendees.#email) AND {room}"
# A quota the order takes one seat of needs no guess; for more, the capacity as last read
# (a condition cannot add): it must still be that much, and the count that less the seats.
ONE_SEAT_ROOM = "{count} < {capacity}"
SEATS_ROOM = "{capacity} >= :cap{i} AND {count} <= :room{i}"
CANCEL = "REMOVE attendees.#email SET {counts}, " + BUMP
CANCEL_PART = "SET attendees.#email.tickets = :keep, {counts}, " + BUMP
CANCEL_CONDITION = "attendees.#email.registration_id = :rid AND {tickets}"
TICKETS_AS_READ = "attendees.#email.tickets = :tickets"
NO_TICKETS = "attribute_not_exists(attendees.#email.tickets)"  # one seat, stored as ever
FIX_COUNT = "SET confirmed_count = :count, " + BUMP
FIX_COUNTS = FIX_COUNT + ", quota_counts = :quotas"  # an event with further quotas
UNBUMPED = "attribute_not_exists(booking_version)"  # an item no booking has written yet
AS_READ = "booking_version = :read"

Update = tuple[str, str, dict, dict]  # expression, condition, names, values


def room(order: Order) -> tuple[str, dict, dict]:
    """The condition that every quota ``order`` draws on has room for its seats."""
    paths, names = quota_paths(order.seats)
    conditions, values = [], {}
    for i, (quota, (count, capacity)) in enumerate(paths.items()):
        if order.seats[quota] == 1:
            conditions.append(ONE_SEAT_ROOM.format(count=count, capacity=capacity))
            continue
        conditions.append(SEATS_ROOM.format(count=count, capacity=capacity, i=i))
        values[f":cap{i}"] = order.capacities[quota]
        values[f":room{i}"] = order.capacities[quota] - order.seats[quota]
    return " AND ".join(conditions), names, values


def book_update(registration: Registration, order: Order) -> Update:
    """Add the attendee and its seats to every quota's count, only if the event exists, the
    person is not an attendee and every quota has room."""
    change, names, values = count_changes(order.seats, "+")
    fits, room_names, room_values = room(order)
    return (BOOK.format(counts=", ".join(change)), BOOK_CONDITION.format(room=fits),
            {"#email": registration.email, **names, **room_names},
            {":attendee": items.attendee_value(registration), **values, **room_values})


def cancel_update(stored: Registration, seats: dict[str, int], keep: dict[str, int]) -> Update:
    """Give back ``seats`` and remove the attendee (with ``keep``: leave it those tickets),
    only if it is still ``stored``, with the tickets read."""
    change, names, values = count_changes(seats, "-")
    values.update({":rid": stored.registration_id, **({":keep": keep} if keep else {})})
    if stored.ticket_counts is not None:
        values[":tickets"] = stored.tickets
    tickets = NO_TICKETS if stored.ticket_counts is None else TICKETS_AS_READ
    return ((CANCEL_PART if keep else CANCEL).format(counts=", ".join(change)),
            CANCEL_CONDITION.format(tickets=tickets), {"#email": stored.email, **names}, values)


def seats_of(item: dict, now: float) -> Availability:
    """Seats of the event item, its further quotas' apart."""
    further = quota_availability_of(item, now) if item.get("quota_capacities") else {}
    return dataclasses.replace(availability_of(item, now), further=further)


def taken(event: Event, item: dict):
    """Seats per quota of the item's attendees (one each without tickets) and holds."""
    attendees = (item.get("attendees") or {}).values()
    return audit.seats_taken(event, (value.get("tickets") for value in attendees)) + held_seats(item)


def audit_event(strategy, event: Event) -> list[audit.Violation]:
    item = strategy.events.get({"event_id": event.id})
    if item is None:
        return []
    seats = taken(event, item)
    found = audit.capacity_violation(event.id, int(item["capacity"]), seats["capacity"])
    if item.get("confirmed_count") != seats["capacity"]:
        found.append(audit.Violation(event.id, audit.COUNTER, seats["capacity"],
                                     item.get("confirmed_count"), "confirmed_count vs attendees"))
    found += audit.quota_violations(event, seats, item.get("quota_counts") or {})
    return found + audit.person_violations(event.id, item.get("attendees") or {})


def repair_event(strategy, event: Event) -> list[str]:
    """Recount from one read; write it back only if ``booking_version`` is unchanged."""
    for _ in strategy.retry.attempts():
        item = strategy.events.get(key := {"event_id": event.id})
        if item is None:
            return []
        seats, stored, read = taken(event, item), item.get("confirmed_count"), item.get("booking_version")
        quotas = {quota: seats[quota] for quota in event.quotas}
        if stored == seats["capacity"] and (item.get("quota_counts") or {}) == quotas:
            return []
        values = {":count": seats["capacity"], **BUMP_VALUES, **({":quotas": quotas} if quotas else {})}
        try:
            strategy.events.update(key, FIX_COUNTS if quotas else FIX_COUNT,
                                   condition=UNBUMPED if read is None else AS_READ,
                                   values=values if read is None else {**values, ":read": read})
        except ConditionFailed:
            continue  # a booking or edit landed since the read: recount from a fresh read
        return [f"confirmed_count {stored} -> {seats['capacity']}"
                + (f", quota counts {item.get('quota_counts')} -> {quotas}" if quotas else "")]
    return []
