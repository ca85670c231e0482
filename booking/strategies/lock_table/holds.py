"""Waiting-list holds on the lock-table strategy's counter item (time-limited holds).

The event's lock item carries the holds: a ``holds`` map, e-mail key -> until (epoch
milliseconds), and ``confirmed_count`` counts registrations *and* holds, so ``book``'s
unchanged condition (``confirmed_count < capacity``) keeps a held seat from anyone else.
Time releases a hold: a write may take it over only with ``holds.#h <= :now`` in its
condition (a booking when no other seat is free, or the next offer), which swaps the
holder without changing the count. Accepting puts the registration and removes the hold
in one transaction whose condition is ``holds.#email > :now``: an offer that expires
during an accept either books or refuses, never both. Every hold write bumps the lock
item's ``version``, which the repair's count relies on.

On an event with orders an offer holds the entry's seats on the lock item of every quota
they draw on (each item's ``holds`` and ``hold_seats``), in one transaction with the
same conditions as booking that order, so every quota counts them; accepting removes
every quota's hold and puts the order, releasing gives every quota its seats back.
"""
from booking.dynamo import items
from booking.dynamo.access import CONDITION_FAILED, Table
from booking.models import CAPACITY_QUOTA, Order

from booking.strategies.base import expired_holder, quota_order
from booking.strategies.holds import HoldsMap, MapHolds, refused_order
from booking.strategies.lock_table.orders import lock_key

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

    holds_orders = True

    def order_hold_ops(self, event_id, email, order, *, until, refused, also=""):
        """One update per quota the order touches, each on that quota's lock item (all in
        the offer's one transaction); after a refusal, with the capacities it showed."""
        quotas = quota_order(order)
        if refused is None:
            for quota in quotas:
                self.held.ensure_map(lock_key(event_id, quota)["event_id"], orders=True)
        elif any(refused.code(i) == CONDITION_FAILED for i in range(len(quotas))):
            found = {q: refused.reasons[i].old_item for i, q in enumerate(quotas)
                     if refused.code(i) == CONDITION_FAILED}
            order = refused_order(order, list(found.values()), email, lambda _: {
                q: (int(lock["capacity"]), int(lock["confirmed_count"]))
                for q, lock in found.items()})
        return [self.held.order_hold_op(lock_key(event_id, quota)["event_id"], email,
                                        _one_quota(order, quota), until=until)
                for quota in quotas]

    def accept_ops(self, event_id, registration, *, now, ref, order=None):
        put = ("Put", self.registrations_table.put_op(items.registration_item(registration),
                                                      condition=NOT_REGISTERED))
        if order is None:
            return [self.held.unhold_op(event_id, registration.email, now), put]
        return [*(self.held.order_unhold_op(lock_key(event_id, quota)["event_id"],
                                            registration.email, {quota: order.seats[quota]}, now)
                  for quota in quota_order(order)), put]

    def release_ops(self, event_id, email, *, until, ref, order=None):
        if order is None:
            return [self.held.release_op(event_id, email, until=until)]
        return [self.held.order_release_op(lock_key(event_id, quota)["event_id"], email,
                                           {quota: order.seats[quota]}, until=until)
                for quota in quota_order(order)]

    def release_expired(self, event_id, *, now, quotas=()):
        return sum(self.held.release_expired(lock_key(event_id, quota)["event_id"], now=now)
                   for quota in (CAPACITY_QUOTA, *quotas))

    def registration_absent_op(self, event_id, email):
        return ("ConditionCheck", self.registrations_table.delete_op(
            {"event_id": event_id, "email": email}, condition=NOT_REGISTERED))


def _one_quota(order: Order, quota: str) -> Order:
    """The part of ``order`` one quota's lock item counts."""
    return Order(seats={quota: order.seats[quota]}, capacities={quota: order.capacities[quota]})
