"""The aggregate strategy's event item: its size, the booking's and the cancellation's
updates, its seats read back, its audit and repair (docs/strategies/aggregate.md)."""
from booking.dynamo import items
from booking.dynamo.access import ConditionFailed
from booking.models import CAPACITY_QUOTA, Event, Order, Registration
from booking.strategies import audit
from booking.strategies.holds import held_seats
from booking.strategies.quota_counts import count_changes, quota_paths

# Worst cases of each part of the item: docs/strategies/aggregate.md, "The item's size".
ITEM_SIZE_LIMIT = 400 * 1024
EVENT_ATTRIBUTES_RESERVE = 12 * 1024
ATTENDEE_MAX_BYTES = 900
ORDER_DEFINITION_RESERVE = 11 * 1024
TICKET_ENTRY_MAX_BYTES = 60
MAX_CAPACITY = (ITEM_SIZE_LIMIT - EVENT_ATTRIBUTES_RESERVE) // ATTENDEE_MAX_BYTES
ORDER_MAX_CAPACITY = ((ITEM_SIZE_LIMIT - EVENT_ATTRIBUTES_RESERVE - ORDER_DEFINITION_RESERVE)
                      // (ATTENDEE_MAX_BYTES + TICKET_ENTRY_MAX_BYTES))

# The SET clause every write of the item adds: the version a repair checks.
BUMP = "booking_version = if_not_exists(booking_version, :zero) + :one"
BUMP_VALUES = {":one": 1, ":zero": 0}
NEW_EVENT = "attribute_not_exists(event_id)"
AVAILABILITY = ("event_id, #capacity, confirmed_count, holds, hold_seats, quota_capacities, "
                "quota_counts")
FIRST_READ = AVAILABILITY + ", attendees.#email"  # the counts and the person's attendee
ATTENDEE = "event_id, attendees.#email"
ATTENDEES = "event_id, attendees"
BOOK = "SET attendees.#email = :attendee, {counts}, " + BUMP
BOOK_CONDITION = "attribute_exists(event_id) AND attribute_not_exists(attendees.#email) AND {room}"
# One seat needs no guess of the capacity; more check the guess (a condition cannot add).
ONE_SEAT_ROOM = "{count} < {capacity}"
SEATS_ROOM = "{capacity} >= :cap{i} AND {count} <= :room{i}"
CANCEL = "REMOVE attendees.#email SET {counts}, " + BUMP
CANCEL_PART = "SET attendees.#email.tickets = :keep, {counts}, " + BUMP
CANCEL_CONDITION = "attendees.#email.registration_id = :rid AND {tickets}"
TICKETS_AS_READ = "attendees.#email.tickets = :tickets"
NO_TICKETS = "attribute_not_exists(attendees.#email.tickets)"  # one seat, stored as ever
FIX_COUNT = "SET confirmed_count = :count, " + BUMP
FIX_COUNTS = FIX_COUNT + ", quota_counts = :quotas"  # an event with further quotas
AS_READ = "attribute_not_exists(booking_version) OR booking_version = :read"  # -1: unwritten


def room(order: Order) -> tuple[str, dict, dict]:
    """The condition that every quota ``order`` draws on has room for its seats."""
    paths, names = quota_paths(order.seats)
    conditions, values = [], {}
    for i, (quota, (count, capacity)) in enumerate(paths.items()):
        seats, guess = order.seats[quota], order.capacities[quota]
        template = ONE_SEAT_ROOM if seats == 1 else SEATS_ROOM
        conditions.append(template.format(count=count, capacity=capacity, i=i))
        values.update({f":cap{i}": guess, f":room{i}": guess - seats} if seats > 1 else {})
    return " AND ".join(conditions), names, values


def book_update(registration: Registration, order: Order) -> tuple[str, str, dict, dict]:
    """Add the attendee and its seats to each quota's count if new and all have room."""
    change, names, values = count_changes(order.seats, "+")
    fits, room_names, room_values = room(order)
    return (BOOK.format(counts=", ".join(change)), BOOK_CONDITION.format(room=fits),
            {"#email": registration.email, **names, **room_names},
            {":attendee": items.attendee_value(registration), **values, **room_values})


def cancel_update(stored: Registration, seats: dict[str, int],
                  keep: dict[str, int]) -> tuple[str, str, dict, dict]:
    """Give back ``seats``, removing the attendee (or leaving it ``keep``) if still as read."""
    change, names, values = count_changes(seats, "-")
    read = {} if stored.ticket_counts is None else {":tickets": stored.tickets}
    values.update({":rid": stored.registration_id, **read, **({":keep": keep} if keep else {})})
    return ((CANCEL_PART if keep else CANCEL).format(counts=", ".join(change)),
            CANCEL_CONDITION.format(tickets=TICKETS_AS_READ if read else NO_TICKETS),
            {"#email": stored.email, **names}, values)


def taken(event: Event, item: dict):  # per quota: attendees' seats (1 without tickets), holds'
    tickets = (value.get("tickets") for value in (item.get("attendees") or {}).values())
    return audit.seats_taken(event, tickets) + held_seats(item)


def audit_event(strategy, event: Event) -> list[audit.Violation]:
    item = strategy.events.get({"event_id": event.id})
    if item is None:
        return []
    counted = {**(item.get("quota_counts") or {}), CAPACITY_QUOTA: item.get("confirmed_count")}
    found = audit.seat_violations(event, taken(event, item), counted,
                                  "confirmed_count vs attendees", capacity=int(item["capacity"]))
    return found + audit.person_violations(event.id, item.get("attendees") or {})


def repair_event(strategy, event: Event) -> list[str]:
    """Recount from one read; write it back only if ``booking_version`` is unchanged."""
    for _ in strategy.retry.attempts():
        item = strategy.events.get(key := {"event_id": event.id})
        if item is None:
            return []
        seats, stored = taken(event, item), item.get("confirmed_count")
        quotas = {quota: seats[quota] for quota in event.quotas}
        if stored == seats["capacity"] and (item.get("quota_counts") or {}) == quotas:
            return []
        values = {":count": seats["capacity"], ":read": item.get("booking_version", -1),
                  **BUMP_VALUES, **({":quotas": quotas} if quotas else {})}
        try:
            strategy.events.update(key, FIX_COUNTS if quotas else FIX_COUNT, condition=AS_READ,
                                   values=values)
        except ConditionFailed:
            continue  # a booking or edit landed since the read: recount from a fresh read
        further = f", quota counts {item.get('quota_counts')} -> {quotas}" if quotas else ""
        return [f"confirmed_count {stored} -> {seats['capacity']}{further}"]
    return []
