"""Waiting-list holds on the lock-table strategy's counter item (seed 003 on seed 004 2-2).

The event's lock item carries the holds: a ``holds`` map, e-mail key -> until (epoch
milliseconds), and ``confirmed_count`` counts registrations *and* holds, so ``book``'s
unchanged condition (``confirmed_count < capacity``) keeps a held seat from anyone else.
Time releases a hold: a write may take it over only with ``holds.#h <= :now`` in its
condition (a booking when no other seat is free, or the next offer), which swaps the
holder without changing the count. Accepting puts the registration and removes the hold
in one transaction whose condition is ``holds.#email > :now``: an offer that expires
during an accept either books or refuses, never both. Every hold write bumps the lock
item's ``version``, which the repair's count relies on.
"""
from booking.dynamo import items
from booking.dynamo.access import Table

from booking.strategies.base import expired_holder
from booking.strategies.holds import HoldsMap, MapHolds

NOT_REGISTERED = "attribute_not_exists(email)"
BUMP = "version = version + :one"  # every write of the lock item: the repair's check


class LockTableHolds(MapHolds):
    """The seat-holds protocol on the lock item: ``locks`` and ``registrations_table`` are
    the strategy's tables, ``held`` the lock item's holds map (set by the strategy)."""

    locks: Table
    registrations_table: Table
    held: HoldsMap

    def book_over_expired(self, event_id, lock, now):
        """The booking's lock update taking the seat of an expired hold, or None."""
        holder = expired_holder(lock, now)
        if holder is None:
            return None
        return ("Update", self.locks.update_op(
            {"event_id": event_id}, f"REMOVE holds.#h SET {BUMP}",
            condition="holds.#h <= :now", names={"#h": holder}, values={":now": now, ":one": 1}))

    def accept_ops(self, event_id, registration, *, now, ref):
        return [self.held.unhold_op(event_id, registration.email, now),
                ("Put", self.registrations_table.put_op(items.registration_item(registration),
                                                        condition=NOT_REGISTERED))]

    def registration_absent_op(self, event_id, email):
        return ("ConditionCheck", self.registrations_table.delete_op(
            {"event_id": event_id, "email": email}, condition=NOT_REGISTERED))
