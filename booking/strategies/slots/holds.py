"""Waiting-list holds in the slots strategy (time-limited holds on seat items).

A hold is a slot claimed for one e-mail until a time: ``holder`` set, ``held_until``
(epoch milliseconds) set, no registration yet, and out of the free list, so no booking's
claim (``attribute_exists(free_in)``) can take it. Time releases it: a write may claim a
held slot only with ``held_until <= :now`` in its condition (a booking when no slot is
free, or the next offer). Accepting removes ``held_until`` and puts the registration
naming the slot in one transaction whose condition is ``holder = :email AND held_until >
:now``: an offer that expires during an accept either books or refuses, never both.

On an event with orders an offer holds as many slots as the entry's order needs in every
quota's partition, found and claimed as its booking would (one transaction, all or
nothing: the same 100-action bound); accepting keeps them all and puts the order naming
them; releasing frees every one.
"""
import random

from booking.dynamo import items
from booking.dynamo.access import CONDITION_FAILED as CCF, Table, TransactionCancelled
from booking.errors import AlreadyRegistered, EventFull
from booking.models import CAPACITY_QUOTA
from booking.strategies.base import order_full, quota_order
from booking.strategies.holds import SeatHolds
from booking.strategies.slots import freed
from booking.strategies.slots.capacity import SHUFFLE_RANGE
from booking.strategies.slots.orders import partition

NOT_REGISTERED = "attribute_not_exists(email)"
RELEASE = "SET free_in = :e, shuffle = :r REMOVE holder, held_until"


class SlotsHolds(SeatHolds):
    """The seat-holds protocol on slot items: ``slots`` and ``registrations_table`` are the
    strategy's tables; ``_free_candidates`` and ``_require_event`` its reads, ``orders``
    its order paths (their free-slot lookup)."""

    slots: Table
    registrations_table: Table
    locks: Table  # the freed epoch's items (freed.py)
    holds_orders = True

    def hold_ops(self, event_id, email, *, until, now, refused=None, order=None):
        if order is not None:
            return self.order_hold_ops(event_id, email, order, until=until, refused=refused)
        if refused is not None and refused.code(1) == CCF:
            raise AlreadyRegistered()
        free = self._free_candidates(event_id)
        values = {":email": email, ":until": until}
        if free:
            slot = free[0]
            claim = self.slots.update_op(
                {"event_id": event_id, "slot": slot},
                "SET holder = :email, held_until = :until REMOVE free_in",
                condition="attribute_exists(free_in)", values=values)
        else:
            expired = self.expired_hold_slots(event_id, now)
            if not expired:
                self._require_event(event_id)
                raise EventFull()
            slot = random.choice(expired)
            claim = self.slots.update_op(
                {"event_id": event_id, "slot": slot}, "SET holder = :email, held_until = :until",
                condition="held_until <= :now", values={**values, ":now": now})
        return [("Update", claim), self.registration_absent_op(event_id, email)], {"slot": slot}

    def order_hold_ops(self, event_id, email, order, *, until, refused):
        """``registration_absent_op`` first, then a claim of enough free slots in every
        quota the order draws on (as its booking looks them up), each held until
        ``until``; ``ref`` names them (``{"slots": {quota: [numbers]}}``). A quota without
        enough free slots is ``EventFull`` naming it (a lapsed hold's slots are not free
        until released: nothing takes an order's hold over)."""
        if refused is not None and refused.code(0) == CCF:
            raise AlreadyRegistered()
        claims = {}
        for quota in quota_order(order):
            claims[quota] = self.orders.free_slots(partition(event_id, quota), order.seats[quota])
            if not claims[quota]:
                self._require_event(event_id)
                raise order_full(order, quota)
        values = {":email": email, ":until": until}
        return [self.registration_absent_op(event_id, email), *(
            ("Update", self.slots.update_op(
                {"event_id": partition(event_id, quota), "slot": slot},
                "SET holder = :email, held_until = :until REMOVE free_in",
                condition="attribute_exists(free_in)", values=values))
            for quota, slots in claims.items() for slot in slots)], {"slots": claims}

    def expired_hold_slots(self, event_id, now) -> list[int]:
        """Numbers of the event's slots whose hold has expired (read consistently)."""
        return [slot for slot, until in self._held_slots(event_id).items() if until <= now]

    def _held_slots(self, event_id) -> dict[int, float]:
        return {item["slot"]: item["held_until"] for item in self.slots.query(
            key_condition="event_id = :e", values={":e": event_id},
            projection="#slot, held_until", names={"#slot": "slot"}) if "held_until" in item}

    def book_over_expired_op(self, event_id, slot, registration, now):
        """The booking's claim of a slot whose hold has expired."""
        return ("Update", self.slots.update_op(
            {"event_id": event_id, "slot": slot}, "SET holder = :email REMOVE held_until",
            condition="held_until <= :now", values={":email": registration.email, ":now": now}))

    def accept_ops(self, event_id, registration, *, now, ref, order=None):
        if order is not None:  # every held slot kept, only while unexpired, and the order
            claims = {q: list(slots) for q, slots in ref["slots"].items()}
            return [*(("Update", self.slots.update_op(
                {"event_id": partition(event_id, quota), "slot": slot}, "REMOVE held_until",
                condition="holder = :email AND held_until > :now",
                values={":email": registration.email, ":now": now}))
                for quota, slots in claims.items() for slot in slots),
                ("Put", self.registrations_table.put_op(
                    items.registration_item(registration, slots=claims),
                    condition=NOT_REGISTERED))]
        slot = ref["slot"]
        return [
            ("Update", self.slots.update_op(
                {"event_id": event_id, "slot": slot}, "REMOVE held_until",
                condition="holder = :email AND held_until > :now",
                values={":email": registration.email, ":now": now})),
            ("Put", self.registrations_table.put_op(
                items.registration_item(registration, slot=slot), condition=NOT_REGISTERED)),
        ]

    def release_ops(self, event_id, email, *, until, ref, order=None):
        held = ({q: s for q, s in ref["slots"].items()} if order is not None
                else {CAPACITY_QUOTA: [ref["slot"]]})
        return [*(("Update", self._release(partition(event_id, quota), slot, "holder = :email "
                                           "AND held_until = :until",
                                           {":email": email, ":until": until}))
                  for quota, slots in held.items() for slot in slots),
                *self.freed_ops(event_id)]

    def release_expired(self, event_id, *, now, quotas=()):
        """Per quota partition (an order's hold holds slots in each)."""
        return sum(self._release_expired(event_id, partition(event_id, quota), now)
                   for quota in (CAPACITY_QUOTA, *quotas))

    def _release_expired(self, event_id, part, now):
        released = 0
        for slot in self.expired_hold_slots(part, now):
            try:  # each with the freed epoch's bump (freed.py)
                freed.freed_together(self, event_id, ("Update", self._release(
                    part, slot, "held_until <= :now", {":now": now})))
                released += 1
            except TransactionCancelled:
                pass  # claimed or released meanwhile
        return released

    def _release(self, event_id, slot, condition, values):
        return self.slots.update_op(
            {"event_id": event_id, "slot": slot}, RELEASE, condition=condition,
            values={":e": event_id, ":r": random.randrange(SHUFFLE_RANGE), **values})

    def holds(self, event_id):
        return {item["holder"]: item["held_until"] for item in self.slots.query(
            key_condition="event_id = :e", values={":e": event_id})
            if "held_until" in item}

    def held_count(self, event_id, now) -> int:
        return sum(1 for until in self._held_slots(event_id).values() if until > now)

    def registration_absent_op(self, event_id, email):
        return ("ConditionCheck", self.registrations_table.delete_op(
            {"event_id": event_id, "email": email}, condition=NOT_REGISTERED))
