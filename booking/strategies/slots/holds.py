"""Waiting-list holds in the slots strategy (seed 003 on seed 004 2-3).

A hold is a slot claimed for one e-mail until a time: ``holder`` set, ``held_until``
(epoch milliseconds) set, no registration yet, and out of the free list, so no booking's
claim (``attribute_exists(free_in)``) can take it. Time releases it: a write may claim a
held slot only with ``held_until <= :now`` in its condition (a booking when no slot is
free, or the next offer). Accepting removes ``held_until`` and puts the registration
naming the slot in one transaction whose condition is ``holder = :email AND held_until >
:now``: an offer that expires during an accept either books or refuses, never both.
"""
import random

from booking.dynamo import items
from booking.dynamo.access import CONDITION_FAILED as CCF, ConditionFailed, Table
from booking.errors import AlreadyRegistered, EventFull
from booking.strategies.holds import SeatHolds
from booking.strategies.slots.capacity import SHUFFLE_RANGE

NOT_REGISTERED = "attribute_not_exists(email)"
RELEASE = "SET free_in = :e, shuffle = :r REMOVE holder, held_until"


class SlotsHolds(SeatHolds):
    """The seat-holds protocol on slot items: ``slots`` and ``registrations_table`` are the
    strategy's tables; ``_free_candidates`` and ``_require_event`` its reads."""

    slots: Table
    registrations_table: Table

    def hold_ops(self, event_id, email, *, until, now, refused=None):
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

    def accept_ops(self, event_id, registration, *, now, ref):
        slot = ref["slot"]
        return [
            ("Update", self.slots.update_op(
                {"event_id": event_id, "slot": slot}, "REMOVE held_until",
                condition="holder = :email AND held_until > :now",
                values={":email": registration.email, ":now": now})),
            ("Put", self.registrations_table.put_op(
                items.registration_item(registration, slot=slot), condition=NOT_REGISTERED)),
        ]

    def release_ops(self, event_id, email, *, until, ref):
        return [("Update", self._release(event_id, ref["slot"], "holder = :email AND "
                                         "held_until = :until", {":email": email, ":until": until}))]

    def release_expired(self, event_id, *, now):
        released = 0
        for slot in self.expired_hold_slots(event_id, now):
            try:
                self.slots.update({"event_id": event_id, "slot": slot}, RELEASE,
                                  condition="held_until <= :now",
                                  values={":e": event_id, ":r": random.randrange(SHUFFLE_RANGE), ":now": now})
                released += 1
            except ConditionFailed:
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
