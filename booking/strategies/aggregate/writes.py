"""The aggregate strategy's updates of the event item (a booking, a cancellation) and what
it reads back; docs/strategies/aggregate.md explains their conditions.
"""
import dataclasses

from booking.dynamo import items
from booking.dynamo.access import Table
from booking.dynamo.transaction import Op
from booking.models import Availability, Order, Registration
from booking.strategies.aggregate.holds import BUMP, BUMP_VALUES
from booking.strategies.holds import availability_of, quota_availability_of
from booking.strategies.quota_counts import count_changes, quota_paths

COUNTS = "#capacity, confirmed_count, holds, hold_seats, quota_capacities, quota_counts"
AVAILABILITY = "event_id, " + COUNTS
FIRST_READ = AVAILABILITY + ", attendees.#email"  # the counts and the person's attendee
ATTENDEE = "event_id, attendees.#email"
ATTENDEES = "event_id, attendees"

BOOK = "SET attendees.#email = :attendee, {counts}, " + BUMP
BOOK_CONDITION = "attribute_exists(event_id) AND attribute_not_exists(attendees.#email) AND {room}"
# A quota the order takes one seat of needs no guess; for more, the capacity as last read
# (a condition cannot add): it must still be at least that, and the count that less n.
ONE_SEAT_ROOM = "{count} < {capacity}"
SEATS_ROOM = "{capacity} >= :cap{i} AND {count} <= :room{i}"
CANCEL = "REMOVE attendees.#email SET {counts}, " + BUMP
CANCEL_PART = "SET attendees.#email.tickets = :keep, {counts}, " + BUMP
CANCEL_CONDITION = "attendees.#email.registration_id = :rid AND {tickets}"
TICKETS_AS_READ = "attendees.#email.tickets = :tickets"
NO_TICKETS = "attribute_not_exists(attendees.#email.tickets)"  # one seat, stored as ever


def counts(seats: dict[str, int], sign: str) -> tuple[str, dict, dict]:
    """The SET clauses adding (``+``) or removing (``-``) ``seats`` per quota."""
    clauses, names, values = count_changes(seats, sign)
    return ", ".join(clauses), names, values


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


def book_update(events: Table, event_id: str, registration: Registration, order: Order) -> Op:
    """Add the attendee and its seats to every quota's count, only if the event exists, the
    person is not an attendee and every quota has room."""
    change, names, values = counts(order.seats, "+")
    fits, room_names, room_values = room(order)
    expression, condition = BOOK.format(counts=change), BOOK_CONDITION.format(room=fits)
    return ("Update", events.update_op(
        {"event_id": event_id}, expression, condition=condition,
        names={"#email": registration.email, **names, **room_names},
        values={":attendee": items.attendee_value(registration), **values, **room_values,
                **BUMP_VALUES}))


def cancel_update(events: Table, event_id: str, stored: Registration, seats: dict[str, int],
                  keep: dict[str, int]) -> Op:
    """Give back ``seats`` and remove the attendee (or, with ``keep``, leave it holding those
    tickets), only if it is still ``stored`` with the tickets read."""
    change, names, values = counts(seats, "-")
    expression = (CANCEL_PART if keep else CANCEL).format(counts=change)
    if stored.ticket_counts is None:
        condition = CANCEL_CONDITION.format(tickets=NO_TICKETS)
    else:
        condition = CANCEL_CONDITION.format(tickets=TICKETS_AS_READ)
        values[":tickets"] = stored.tickets
    if keep:
        values[":keep"] = keep
    return ("Update", events.update_op(
        {"event_id": event_id}, expression, condition=condition,
        names={"#email": stored.email, **names},
        values={":rid": stored.registration_id, **values, **BUMP_VALUES}))


def item_availability(item: dict, now: float) -> Availability:
    """Seats of the event item, its further quotas' apart."""
    seats = availability_of(item, now)
    if not item.get("quota_capacities"):
        return seats
    return dataclasses.replace(seats, further=quota_availability_of(item, now))
