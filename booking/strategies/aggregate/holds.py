"""Waiting-list holds in the aggregate strategy's event item (the shared holds map,
``MapHolds``), and the update every write of that item is. docs/strategies/aggregate.md."""
from booking.dynamo import items
from booking.dynamo.access import Table
from booking.dynamo.expressions import Actions, Condition, attr
from booking.dynamo.expressions import ConditionCheck, Member, Refusal, Update
from booking.errors import AlreadyRegistered, EventNotFound
from booking.models import Event, Order, Registration
from booking.strategies.aggregate.item import BUMP, attendee, room
from booking.strategies.holds import HoldsMap, MapHolds

EVENT = "event"  # the one member of every write: an update of the event item


def attendee_of(item: dict, email: str) -> dict | None:
    return (item.get("attendees") or {}).get(email)


def present(item: dict | None) -> dict:
    if item is None:
        raise EventNotFound()
    return item


class EventHoldsMap(HoldsMap):
    """The shared holds map; a hold of one seat, as a booking, needs no capacity guess."""

    def _room(self, order: Order) -> Condition:
        return room(order) if order.is_single_seat else super()._room(order)


class AggregateHolds(MapHolds):
    """Holds in the event item's map: one seat's a bare ``until``, an order's with its seats;
    the item's attendees stand in for the registration (one item: one member per write)."""

    events: Table
    held: HoldsMap

    def update(self, event_id: str, actions: Actions, condition: Condition) -> Update:
        return Update(self.events, {"event_id": event_id}, actions, condition)

    def hold_ops(self, event: Event, email: str, order: Order, *, until: float, now: float,
                 refused: Refusal | None = None) -> tuple[list[tuple[str, Member]], dict]:
        if refused is not None and attendee_of(refused.old(EVENT) or {}, email) is not None:
            raise AlreadyRegistered()
        return self.hold_members(event, email, order, until=until, now=now, refused=refused,
                                 also=attendee(email).not_exists()), {}

    def book_over(self, event_id: str, registration: Registration, holder: str,
                  now: float) -> Update:
        """The booking takes ``holder``'s lapsed hold's seat."""
        lapsed, person = attr("holds", holder), attendee(registration.email)
        return self.update(event_id, Actions().remove(lapsed)
                           .set(person, items.attendee_value(registration)) + BUMP,
                           lapsed.le(now) & person.not_exists())

    def accept_ops(self, event: Event, registration: Registration, order: Order, *,
                   now: float, ref: dict, holder: str | None = None) -> list[tuple[str, Member]]:
        """The unexpired hold (``holder``'s, a seat held for this person; its key may be
        another's) becomes the attendee; its seats stay counted."""
        person = attendee(registration.email)
        return self.unhold_members(
            event, holder or registration.email, order, now=now, also=person.not_exists(),
            then=Actions().set(person, items.attendee_value(registration)))

    def registration_absent_op(self, event_id: str, email: str) -> ConditionCheck:
        return ConditionCheck(self.events, {"event_id": event_id},
                              attr("event_id").exists() & attendee(email).not_exists())
