"""Waiting-list holds in the aggregate strategy's event item (time-limited holds), with the
expressions every write of that item shares. How they work: docs/strategies/aggregate.md.
"""
from booking.dynamo import items
from booking.dynamo.access import Table
from booking.dynamo.transaction import Op, Refusal
from booking.errors import AlreadyRegistered, EventFull, EventNotFound
from booking.models import Event, Order, Registration
from booking.strategies.base import CAPACITY_NAMES, expired_holder
from booking.strategies.contract import Holds
from booking.strategies.holds import HoldsMap, refused_order

# Every write of this strategy is one member: an update of the event item.
EVENT = "event"
# The SET clause every write of the item adds: the version a repair checks.
BUMP = "booking_version = if_not_exists(booking_version, :zero) + :one"
BUMP_VALUES = {":one": 1, ":zero": 0}
NOT_ATTENDEE = " AND attribute_not_exists(attendees.#email)"

HOLD = "SET holds.#email = :until, confirmed_count = confirmed_count + :one, " + BUMP
HOLD_CONDITION = ("attribute_exists(event_id) AND confirmed_count < #capacity" + NOT_ATTENDEE
                  + " AND attribute_not_exists(holds.#email)")
RENEW = "SET holds.#email = :until, " + BUMP  # the person's own lapsed hold, again
RENEW_CONDITION = "holds.#email <= :now" + NOT_ATTENDEE
HOLD_OVER = "REMOVE holds.#h SET holds.#email = :until, " + BUMP  # #h's lapsed hold's seat
HOLD_OVER_CONDITION = ("holds.#h <= :now" + NOT_ATTENDEE
                       + " AND attribute_not_exists(holds.#email)")
BOOK_OVER = "REMOVE holds.#h SET attendees.#email = :attendee, " + BUMP
BOOK_OVER_CONDITION = "holds.#h <= :now" + NOT_ATTENDEE
ACCEPT = "REMOVE holds.#email SET attendees.#email = :attendee, " + BUMP
ACCEPT_CONDITION = "holds.#email > :now" + NOT_ATTENDEE
ACCEPT_ORDER = "attendees.#email = :attendee, "  # SET before the hold of an order goes
ABSENT_CONDITION = "attribute_exists(event_id)" + NOT_ATTENDEE


def attendee_of(item: dict, email: str) -> dict | None:
    return (item.get("attendees") or {}).get(email)


class AggregateHolds(Holds):
    """Holds in the event item (``events``), in its ``holds`` map (``held``): a hold of one
    seat of the capacity is a bare ``until`` (a booking or the next offer may take it over
    once lapsed); a hold of an order also stores its seats per quota."""

    events: Table
    held: HoldsMap

    def hold_ops(self, event: Event, email: str, order: Order, *, until: float, now: float,
                 refused: Refusal | None = None) -> tuple[list[tuple[str, Op]], dict]:
        key = {"event_id": event.id}
        if refused is None or not refused.refused(EVENT):  # a first try, or a conflict
            if refused is None:
                self.held.ensure_map(event.id, orders=not order.is_single_seat)
            if not order.is_single_seat:
                return [(EVENT, self.held.order_hold_op(event.id, email, order, until=until,
                                                        also=NOT_ATTENDEE))], {}
            return [(EVENT, ("Update", self.events.update_op(
                key, HOLD, condition=HOLD_CONDITION, names={"#email": email, **CAPACITY_NAMES},
                values={":until": until, **BUMP_VALUES})))], {}
        old = refused.old(EVENT)
        if old is None:
            raise EventNotFound()
        if attendee_of(old, email) is not None:
            raise AlreadyRegistered()
        if not order.is_single_seat:  # with the capacities it showed, or EventFull
            corrected = refused_order(order, [old], email)
            return [(EVENT, self.held.order_hold_op(event.id, email, corrected, until=until,
                                                    also=NOT_ATTENDEE))], {}
        holder = expired_holder(old, now, prefer=email)
        if holder is None:
            raise EventFull()
        values = {":until": until, ":now": now, **BUMP_VALUES}
        if holder == email:
            update = self.events.update_op(key, RENEW, condition=RENEW_CONDITION,
                                           names={"#email": email}, values=values)
        else:
            update = self.events.update_op(key, HOLD_OVER, condition=HOLD_OVER_CONDITION,
                                           names={"#email": email, "#h": holder}, values=values)
        return [(EVENT, ("Update", update))], {}

    def book_over_op(self, event_id: str, registration: Registration, holder: str,
                     now: float) -> Op:
        """The booking's update taking the seat of ``holder``'s lapsed hold of one seat."""
        return ("Update", self.events.update_op(
            {"event_id": event_id}, BOOK_OVER, condition=BOOK_OVER_CONDITION,
            names={"#email": registration.email, "#h": holder},
            values={":attendee": items.attendee_value(registration), ":now": now,
                    **BUMP_VALUES}))

    def accept_ops(self, event: Event, registration: Registration, order: Order, *,
                   now: float, ref: dict) -> list[tuple[str, Op]]:
        attendee = {":attendee": items.attendee_value(registration)}
        if not order.is_single_seat:  # the held seats stay counted: they become the attendee's
            return [(EVENT, self.held.order_unhold_op(
                event.id, registration.email, order.seats, now, also=NOT_ATTENDEE,
                then=ACCEPT_ORDER, values=attendee))]
        return [(EVENT, ("Update", self.events.update_op(
            {"event_id": event.id}, ACCEPT, condition=ACCEPT_CONDITION,
            names={"#email": registration.email},
            values={**attendee, ":now": now, **BUMP_VALUES})))]

    def release_ops(self, event: Event, email: str, order: Order, *, until: float,
                    ref: dict) -> list[tuple[str, Op]]:
        if not order.is_single_seat:
            return [(EVENT, self.held.order_release_op(event.id, email, order.seats,
                                                       until=until))]
        return [(EVENT, self.held.release_op(event.id, email, until=until))]

    def release_expired(self, event: Event, *, now: float) -> int:
        return self.held.release_expired(event.id, now=now)

    def holds(self, event_id: str) -> dict[str, float]:
        return self.held.holds(event_id)

    def registration_absent_op(self, event_id: str, email: str) -> Op:
        return ("ConditionCheck", self.events.delete_op(
            {"event_id": event_id}, condition=ABSENT_CONDITION, names={"#email": email}))
