"""Waiting-list holds in the aggregate strategy's event item (time-limited holds).

A hold is an entry of the event item's ``holds`` map (``HoldsMap``, shared with the other
counter items): e-mail key -> until (epoch milliseconds). It takes a seat like an attendee
does: ``confirmed_count`` counts attendees *and* holds, so ``book``'s unchanged condition
(``confirmed_count < capacity``) already keeps the held seat from anyone else. Time
releases it: a write may take over a hold only with ``holds.#h <= :now`` in its condition
(a booking when no other seat is free, or the next offer), turning the held seat into its
own without changing the count. Accepting is one update whose condition is
``holds.#email > :now``: an offer that expires during an accept either books or refuses,
never both. The attendees live in the same item, so every hold condition also states
that the person is not one.

On an event with orders a hold takes the entry's seats in every quota count of the item
(``hold_seats`` remembers them), in the same one conditional update as an order's
booking; accepting moves them to the attendee, releasing gives them back.
"""
from booking.dynamo import items
from booking.dynamo.access import CONDITION_FAILED, Table
from booking.errors import AlreadyRegistered
from booking.strategies.base import expired_holder
from booking.strategies.holds import HoldsMap, MapHolds

# The SET clause every write of the item adds: the version a repair checks.
BUMP = "booking_version = if_not_exists(booking_version, :zero) + :one"
BUMP_VALUES = {":one": 1, ":zero": 0}
NOT_ATTENDEE = " AND attribute_not_exists(attendees.#email)"


class AggregateHolds(MapHolds):
    """The seat-holds protocol on the event item: ``events`` is its table, ``held`` its
    holds map (both set by ``AggregateStrategy``)."""

    events: Table
    held: HoldsMap

    holds_orders = True

    def hold_ops(self, event_id, email, *, until, now, refused=None, order=None):
        if refused is not None and refused.code(0) == CONDITION_FAILED:
            old = refused.reasons[0].old_item
            if old is not None and email in (old.get("attendees") or {}):
                raise AlreadyRegistered()
        if order is not None:  # every quota's count is in this item: one update
            return self.order_hold_ops(event_id, email, order, until=until, refused=refused,
                                       also=NOT_ATTENDEE), {}
        return [self.held.hold_op(event_id, email, until=until, now=now, refused=refused,
                                  also=NOT_ATTENDEE)], {}

    def book_over_expired(self, event_id, old, registration, now):
        """The booking's update taking the seat of an expired hold in ``old``, or None."""
        holder = expired_holder(old, now)
        if holder is None or registration.email in (old.get("attendees") or {}):
            return None
        return ("Update", self.events.update_op(
            {"event_id": event_id}, f"REMOVE holds.#h SET attendees.#email = :attendee, {BUMP}",
            condition="holds.#h <= :now AND attribute_not_exists(attendees.#email)",
            names={"#email": registration.email, "#h": holder},
            values={":attendee": items.attendee_value(registration), ":now": now,
                    **BUMP_VALUES}))

    def accept_ops(self, event_id, registration, *, now, ref, order=None):
        if order is not None:  # the held seats stay counted: they become the attendee's
            return [self.held.order_unhold_op(
                event_id, registration.email, order.seats, now, also=NOT_ATTENDEE,
                then="attendees.#email = :attendee, ",
                values={":attendee": items.attendee_value(registration)})]
        return [("Update", self.events.update_op(
            {"event_id": event_id},
            f"REMOVE holds.#email SET attendees.#email = :attendee, {BUMP}",
            condition="holds.#email > :now AND attribute_not_exists(attendees.#email)",
            names={"#email": registration.email},
            values={":attendee": items.attendee_value(registration), ":now": now,
                    **BUMP_VALUES}))]

    def registration_absent_op(self, event_id, email):
        return ("ConditionCheck", self.events.delete_op(
            {"event_id": event_id},
            condition="attribute_exists(event_id) AND attribute_not_exists(attendees.#email)",
            names={"#email": email}))
