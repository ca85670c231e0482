"""Waiting-list holds in the aggregate strategy's event item (the shared holds map,
``MapHolds``), and the update every write of that item is. docs/strategies/aggregate.md."""
from booking.dynamo import items
from booking.dynamo.access import Table
from booking.dynamo.transaction import Op, Refusal
from booking.errors import AlreadyRegistered, EventNotFound
from booking.models import Event, Order, Registration
from booking.strategies.aggregate.item import BUMP, BUMP_VALUES, room
from booking.strategies.holds import HoldsMap, MapHolds

EVENT = "event"  # the one member of every write: an update of the event item
NOT_ATTENDEE = "attribute_not_exists(attendees.#email)"
BOOK_OVER = "REMOVE holds.#h SET attendees.#email = :attendee, " + BUMP  # #h's lapsed seat
BOOK_OVER_CONDITION = "holds.#h <= :now AND " + NOT_ATTENDEE
# An accepted hold's key (#email) may be another's: the attendee it becomes is #person.
ACCEPT = "attendees.#person = :attendee, "  # SET as the hold is removed
ACCEPT_CONDITION = "attribute_not_exists(attendees.#person)"
ABSENT_CONDITION = "attribute_exists(event_id) AND " + NOT_ATTENDEE


def attendee_of(item: dict, email: str) -> dict | None:
    return (item.get("attendees") or {}).get(email)


def present(item: dict | None) -> dict:
    if item is None:
        raise EventNotFound()
    return item


class EventHoldsMap(HoldsMap):
    """The shared holds map; a hold of one seat, as a booking, needs no capacity guess."""

    def _room(self, order: Order) -> tuple[str, dict, dict]:
        return room(order) if order.is_single_seat else super()._room(order)


class AggregateHolds(MapHolds):
    """Holds in the event item's map: one seat's a bare ``until``, an order's with its seats;
    the item's attendees stand in for the registration (one item: one member per write)."""

    events: Table
    held: HoldsMap

    def update(self, event_id: str, expression: str, condition: str, names: dict,
               values: dict) -> Op:
        return ("Update", self.events.update_op({"event_id": event_id}, expression,
                                                condition=condition, names=names,
                                                values={**values, **BUMP_VALUES}))

    def hold_ops(self, event: Event, email: str, order: Order, *, until: float, now: float,
                 refused: Refusal | None = None) -> tuple[list[tuple[str, Op]], dict]:
        if refused is not None and attendee_of(refused.old(EVENT) or {}, email) is not None:
            raise AlreadyRegistered()
        return self.hold_members(event, email, order, until=until, now=now, refused=refused,
                                 also=NOT_ATTENDEE), {}

    def book_over(self, event_id: str, registration: Registration, holder: str, now: float) -> Op:
        return self.update(event_id, BOOK_OVER, BOOK_OVER_CONDITION,
                           {"#email": registration.email, "#h": holder},
                           {":attendee": items.attendee_value(registration), ":now": now})

    def accept_ops(self, event: Event, registration: Registration, order: Order, *,
                   now: float, ref: dict, holder: str | None = None) -> list[tuple[str, Op]]:
        """The unexpired hold (``holder``'s, a seat held for this person) becomes the
        attendee; its seats stay counted."""
        return self.unhold_members(
            event, holder or registration.email, order, now=now, also=ACCEPT_CONDITION,
            then=ACCEPT, names={"#person": registration.email},
            values={":attendee": items.attendee_value(registration)})

    def registration_absent_op(self, event_id: str, email: str) -> Op:
        return ("ConditionCheck", self.events.delete_op(
            {"event_id": event_id}, condition=ABSENT_CONDITION, names={"#email": email}))
