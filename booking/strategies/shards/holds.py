"""Waiting-list holds on the shards strategy's shard items (time-limited holds).

A hold lives in one shard's ``holds`` map, as on lock_table's lock item (``HoldsMap``): the
shard's ``confirmed_count`` counts it, so its seat is kept from bookings, and time releases
it (a write takes it over only with ``holds.#h <= :now``). The offer's ``ref`` names the
shard (``{"shard": n}``). An offer reads every shard in one TransactGetItems and holds a
free seat of one of them (weighted by free seats), else takes over a lapsed hold, else the
event is full. Releasing a hold frees a seat, so it bumps the marker in the same
transaction; an expired hold needs no bump: the sold-out mark never lasts past the earliest
hold it saw, and no hold can start while the event is marked sold out.

On an event with orders an offer holds the entry's order as its booking would take it
(``orders.py``): one TransactGetItems of the marker and every shard of every quota the
order draws on, the seats placed over the shards with the most room (a quota whose shards
together lack room is ``EventFull`` naming it), then one transaction holding them on every
shard placed, each with the booking's condition (``#capacity >= :cap AND confirmed_count
<= :cap - n``), all or nothing. Each shard stores its part (``hold_seats``) and the
offer's ``ref`` names them all (``{"shards": {quota: {shard: seats}}}``), so accepting
removes every part and puts the order naming exactly those shards (as a booking's
``shard_seats``), and releasing gives every shard its part back and bumps the marker.
Nothing takes an order's hold over: a lapsed one is released (``release_expired``: every
part and the marker's bump in one transaction) and the next offer or booking finds its
seats free.
"""
import random

from booking.dynamo import items
from booking.dynamo.access import CONDITION_FAILED, Table, TransactionCancelled
from booking.errors import AlreadyRegistered, EventFull, EventNotFound
from booking.models import CAPACITY_QUOTA, Order

from booking.strategies.base import quota_order
from booking.strategies.holds import HoldsMap, SeatHolds
from booking.strategies.shards import seats
from booking.strategies.shards.orders import place, placed_on, stored_plan
from booking.strategies.shards.seats import BUMP, SHARDS, quota_shard_key, shard_key

NOT_REGISTERED = "attribute_not_exists(email)"


def shard_id(event_id: str, shard: int, quota: str = CAPACITY_QUOTA) -> str:
    """The key value of a (quota's) shard item: ``HoldsMap`` keys its items by it."""
    return quota_shard_key(event_id, quota, shard)["event_id"]


def held_on(ref: dict) -> dict[str, dict[int, int]]:
    """Quota -> shard -> seats of an order's hold, as its offer's ``ref`` names them."""
    return placed_on({"shard_seats": ref["shards"]})


class ShardsHolds(SeatHolds):
    """The seat-holds protocol on the shard items: ``locks`` and ``registrations_table`` are
    the strategy's tables, ``held`` the shards' holds maps (set by the strategy)."""

    locks: Table
    registrations_table: Table
    held: HoldsMap
    holds_orders = True

    def take_over_op(self, event_id, shard, holder, now, *, email=None, until=None):
        """The update taking the seat of ``holder``'s lapsed hold on ``shard`` (for a booking,
        or for ``email``'s hold until ``until``)."""
        names, values = {"#h": holder}, {":now": now, ":one": 1}
        expression = f"REMOVE holds.#h SET {BUMP}"
        if email is not None and email == holder:
            expression = f"SET holds.#h = :until, {BUMP}"
            values[":until"] = until
        elif email is not None:
            expression += ", holds.#email = :until"
            names["#email"], values[":until"] = email, until
        return ("Update", self.locks.update_op(shard_key(event_id, shard), expression,
                                               condition="holds.#h <= :now", names=names,
                                               values=values))

    def hold_ops(self, event_id, email, *, until, now, refused=None, order=None):
        if order is not None:
            return self.order_hold_ops(event_id, email, order, until=until, refused=refused)
        if refused is not None and refused.code(1) == CONDITION_FAILED:
            raise AlreadyRegistered()
        seen = self._seen(event_id)
        free, lapsed = seen.free(), seen.expired_hold(now)
        own = next((n for n, item in enumerate(seen.shards)
                    if (item.get("holds") or {}).get(email, now + 1) <= now), None)
        if own is not None:  # the person's own hold lapsed: renew it
            shard, hold = own, self.take_over_op(event_id, own, email, now, email=email,
                                                 until=until)
        elif free:
            shard = random.choice(free)
            hold = self.held.hold_op(shard_id(event_id, shard), email, until=until, now=now,
                                     refused=None, ensure=False)
        elif lapsed:
            shard, hold = lapsed[0], self.take_over_op(event_id, *lapsed, now, email=email,
                                                       until=until)
        else:
            raise EventFull()
        return [hold, self.registration_absent_op(event_id, email)], {"shard": shard}

    def _seen(self, event_id) -> seats.Snapshot:
        """Every shard at one instant, or ``EventNotFound``."""
        seen = seats.settled_snapshot(self, event_id)
        if not seen.complete:
            raise EventNotFound()
        return seen

    def order_hold_ops(self, event_id, email, order: Order, *, until, refused):
        """``registration_absent_op`` first, then the order's seats held on the shards
        placed from one read of every touched quota (after a refusal: read again). The
        person's own hold still on a shard (a lapsed one) is ``EventFull``: it is released
        first."""
        if refused is not None and refused.code(0) == CONDITION_FAILED:
            raise AlreadyRegistered()
        seen = seats.settled_snapshot(self, event_id, quota_order(order))
        if not all(snapshot.complete for snapshot in seen.values()):
            raise EventNotFound()
        if any(email in (item.get("holds") or {}) for s in seen.values() for item in s.shards):
            raise EventFull()
        plan = place(order, seen)
        for quota, shards in plan.items():  # a shard that never held an order gets its map
            for n in shards:
                if "hold_seats" not in seen[quota].shards[n]:
                    self.held.ensure_map(shard_id(event_id, n, quota), orders=True)
        return [self.registration_absent_op(event_id, email), *(
            self.held.order_hold_op(shard_id(event_id, n, quota), email,
                                    Order(seats={quota: taken}, capacities={quota: capacity}),
                                    until=until)
            for quota, shards in plan.items() for n, (taken, capacity) in sorted(shards.items()))
        ], {"shards": stored_plan(plan)}

    def accept_ops(self, event_id, registration, *, now, ref, order=None):
        if order is None:
            return [self.held.unhold_op(shard_id(event_id, ref["shard"]), registration.email,
                                        now),
                    ("Put", self.registrations_table.put_op(
                        items.registration_item(registration, shard=ref["shard"]),
                        condition=NOT_REGISTERED))]
        held = held_on(ref)  # every part kept, only while unexpired, and the order naming them
        return [*(self.held.order_unhold_op(shard_id(event_id, n, quota), registration.email,
                                            {quota: taken}, now)
                  for quota, shards in held.items() for n, taken in sorted(shards.items())),
                ("Put", self.registrations_table.put_op(
                    items.registration_item(registration, shard_seats={
                        quota: {str(n): taken for n, taken in shards.items()}
                        for quota, shards in held.items()}),
                    condition=NOT_REGISTERED))]

    def release_ops(self, event_id, email, *, until, ref, order=None):
        if order is None:
            return [self.held.release_op(shard_id(event_id, ref["shard"]), email, until=until),
                    *seats.freed_ops(self.locks, event_id)]
        return [*(self.held.order_release_op(shard_id(event_id, n, quota), email,
                                             {quota: taken}, until=until)
                  for quota, shards in held_on(ref).items()
                  for n, taken in sorted(shards.items())),
                *seats.freed_ops(self.locks, event_id)]

    def release_expired(self, event_id, *, now, quotas=()):
        """Plain holds shard by shard; an order's lapsed hold whole (``_release_order``)."""
        found = seats.quota_shard_items(self, event_id, (CAPACITY_QUOTA, *quotas))
        orders, plain = {}, set()
        for shards in found.values():
            for item in shards:
                for email, until in (item.get("holds") or {}).items():
                    if until > now:
                        continue
                    if email in (item.get("hold_seats") or {}):
                        orders.setdefault(email, []).append(
                            (item["event_id"], item["hold_seats"][email]))
                    else:
                        plain.add(item["event_id"])
        return (sum(self._release_order(event_id, email, parts, now)
                    for email, parts in sorted(orders.items()))
                + sum(self.held.release_expired(key, now=now) for key in sorted(plain)))

    def _release_order(self, event_id, email, parts, now) -> int:
        """Give every shard its part of ``email``'s lapsed order hold back and bump the
        marker, in one transaction (1), or 0 when it was released meanwhile."""
        operations = [*(self.held.order_lapsed_release_op(key, email, part, now=now)
                        for key, part in parts), *seats.freed_ops(self.locks, event_id)]
        for _ in self.retry.attempts():
            try:
                self.store.transact_write(operations)
                return 1
            except TransactionCancelled as cancelled:
                if not cancelled.conflict:
                    return 0  # released (or renewed) meanwhile

    def holds(self, event_id):
        found = seats.shard_items(self, [event_id]).get(event_id)
        if not found:
            raise EventNotFound()
        return seats.as_counter(found)["holds"]

    def registration_absent_op(self, event_id, email):
        return ("ConditionCheck", self.registrations_table.delete_op(
            {"event_id": event_id, "email": email}, condition=NOT_REGISTERED))
