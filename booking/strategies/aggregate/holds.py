"""Waiting-list holds in the aggregate strategy's event item (time-limited holds), and the
update every write of that item is. How they work: docs/strategies/aggregate.md."""
from booking.dynamo import items
from booking.dynamo.access import Table
from booking.dynamo.transaction import Op, Refusal
from booking.errors import AlreadyRegistered, EventFull, EventNotFound
from booking.models import Event, Order, Registration
from booking.strategies.base import CAPACITY_NAMES, expired_holder
from booking.strategies.contract import Holds
from booking.strategies.holds import HoldsMap, refused_order

EVENT = "event"  # the one seat member of every write: an update of the event item
# The SET clause every write of the item adds: the version a repair checks.
BUMP = "booking_version = if_not_exists(booking_version, :zero) + :one"
BUMP_VALUES = {":one": 1, ":zero": 0}
NOT_ATTENDEE = " AND attribute_not_exists(attendees.#email)"
HOLD = "SET holds.#email = :until, confirmed_count = confirmed_count + :one, " + BUMP
HOLD_CONDITION = ("attribute_exists(event_id) AND confirmed_count < #capacity" + NOT_ATTENDEE
                  + " AND attribute_not_exists(holds.#email)")
RENEW = "SET holds.#email = :until, " + BUMP  # the person's own lapsed hold, again
RENEW_CONDITION = "holds.#email <= :now" + NOT_ATTENDEE
BOOK_OVER = "REMOVE holds.#h SET attendees.#email = :attendee, " + BUMP  # #h's lapsed seat
BOOK_OVER_CONDITION = "holds.#h <= :now" + NOT_ATTENDEE
HOLD_OVER = "REMOVE holds.#h SET holds.#email = :until, " + BUMP
HOLD_OVER_CONDITION = BOOK_OVER_CONDITION + " AND attribute_not_exists(holds.#email)"
ACCEPT = "REMOVE holds.#email SET attendees.#email = :attendee, " + BUMP
ACCEPT_CONDITION = "holds.#email > :now" + NOT_ATTENDEE
ACCEPT_HELD = "REMOVE holds.#h SET attendees.#email = :attendee, " + BUMP  # #h's live seat
ACCEPT_HELD_CONDITION = "holds.#h > :now" + NOT_ATTENDEE
ACCEPT_ORDER = "attendees.#email = :attendee, "  # SET as an order's hold goes
ABSENT_CONDITION = "attribute_exists(event_id)" + NOT_ATTENDEE


def attendee_of(item: dict, email: str) -> dict | None:
    return (item.get("attendees") or {}).get(email)


def present(item: dict | None) -> dict:
    if item is None:
        raise EventNotFound()
    return item


class AggregateHolds(Holds):
    """Holds in the event item's map: one seat's a bare ``until``, an order's with its seats."""

    events: Table
    held: HoldsMap

    def update(self, event_id: str, expression: str, condition: str, names: dict,
               values: dict) -> Op:
        return ("Update", self.events.update_op({"event_id": event_id}, expression,
                                                condition=condition, names=names,
                                                values={**values, **BUMP_VALUES}))

    def hold_ops(self, event: Event, email: str, order: Order, *, until: float, now: float,
                 refused: Refusal | None = None) -> tuple[list[tuple[str, Op]], dict]:
        if refused is None:
            self.held.ensure_map(event.id, orders=not order.is_single_seat)
        elif refused.refused(EVENT):  # what the refused try found decides the next
            old = present(refused.old(EVENT))
            if attendee_of(old, email) is not None:
                raise AlreadyRegistered()
            if order.is_single_seat:  # a lapsed hold's seat (the person's own first)
                return [(EVENT, self.hold_over(event.id, email, old, until, now))], {}
            order = refused_order(order, [old], email)  # the capacities it showed, or full
        if not order.is_single_seat:
            return [(EVENT, self.held.order_hold_op(event.id, email, order, until=until,
                                                    also=NOT_ATTENDEE))], {}
        return [(EVENT, self.update(event.id, HOLD, HOLD_CONDITION,
                                    {"#email": email, **CAPACITY_NAMES}, {":until": until}))], {}

    def hold_over(self, event_id: str, email: str, old: dict, until: float, now: float) -> Op:
        holder, values = expired_holder(old, now, prefer=email), {":until": until, ":now": now}
        if holder is None:
            raise EventFull()
        if holder == email:
            return self.update(event_id, RENEW, RENEW_CONDITION, {"#email": email}, values)
        return self.update(event_id, HOLD_OVER, HOLD_OVER_CONDITION,
                           {"#email": email, "#h": holder}, values)

    def book_over(self, event_id: str, registration: Registration, holder: str, now: float) -> Op:
        return self.update(event_id, BOOK_OVER, BOOK_OVER_CONDITION,
                           {"#email": registration.email, "#h": holder},
                           {":attendee": items.attendee_value(registration), ":now": now})

    def accept_ops(self, event: Event, registration: Registration, order: Order, *,
                   now: float, ref: dict, holder: str | None = None) -> list[tuple[str, Op]]:
        attendee = {":attendee": items.attendee_value(registration)}
        if holder is not None:  # a seat held under another key, for this person
            return [(EVENT, self.update(event.id, ACCEPT_HELD, ACCEPT_HELD_CONDITION,
                                        {"#email": registration.email, "#h": holder},
                                        {**attendee, ":now": now}))]
        if not order.is_single_seat:  # the held seats stay counted: they become the attendee's
            return [(EVENT, self.held.order_unhold_op(
                event.id, registration.email, order.seats, now, also=NOT_ATTENDEE,
                then=ACCEPT_ORDER, values=attendee))]
        return [(EVENT, self.update(event.id, ACCEPT, ACCEPT_CONDITION,
                                    {"#email": registration.email}, {**attendee, ":now": now}))]

    def release_ops(self, event: Event, email: str, order: Order, *, until: float,
                    ref: dict) -> list[tuple[str, Op]]:
        return [(EVENT, self.held.release_op(event.id, email, until=until) if order.is_single_seat
                 else self.held.order_release_op(event.id, email, order.seats, until=until))]

    def release_expired(self, event: Event, *, now: float) -> int:
        return self.held.release_expired(event.id, now=now)

    def holds(self, event_id: str) -> dict[str, float]:
        return self.held.holds(event_id)

    def registration_absent_op(self, event_id: str, email: str) -> Op:
        return ("ConditionCheck", self.events.delete_op(
            {"event_id": event_id}, condition=ABSENT_CONDITION, names={"#email": email}))
