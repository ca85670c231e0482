"""Waiting-list holds on the shards strategy's shards (time-limited holds): an offer holds
the entry's order where its booking would take it. docs/strategies/shards.md#holds.
"""
from collections.abc import Callable

from booking.dynamo.access import ConditionFailed, Table
from booking.dynamo.expressions import Actions, Condition, attr
from booking.dynamo.expressions import Member, Members, Refusal
from booking.errors import AlreadyRegistered, EventFull, EventNotFound
from booking.models import CAPACITY_QUOTA, Event, Order, Registration
from booking.strategies.base import OneItemPerPerson, expired_holder, quota_order
from booking.strategies.holds import HoldsMap, RegistrationItemHolds
from booking.strategies.shards import seats
from booking.strategies.shards.seats import BUMP, COUNT, member, shard_key


def shard_id(event_id: str, shard: int, quota: str = CAPACITY_QUOTA) -> str:
    return shard_key(event_id, shard, quota)["event_id"]


class OneSeatHoldsMap(HoldsMap):
    """The shared holds map for a hold of one seat: its room is the shard's capacity as
    stored, as a booking's ``seats.take_op`` (an order's parts check their capacity as read)."""

    def _room(self, order: Order) -> Condition:
        return COUNT.lt(attr("capacity"))


class ShardsHolds(OneItemPerPerson, RegistrationItemHolds):
    """``Holds`` on the shard items (docs/strategies/shards.md#holds-for-the-waiting-list)."""

    locks: Table
    held: HoldsMap
    held_one_seat: HoldsMap
    # The strategy's own, declared here for the type checker:
    shard_count: Callable[[str], int]
    shard_counts: Callable[[list[str]], dict[str, int]]

    def hold_ops(self, event: Event, email: str, order: Order, *, until: float, now: float,
                 refused: Refusal | None = None) -> tuple[list[tuple[str, Member]], dict]:
        if refused is not None and refused.refused("registration"):
            raise AlreadyRegistered()
        seen = seats.settled_snapshots(self, event.id, quota_order(order))
        if not all(snapshot.complete for snapshot in seen.values()):
            raise EventNotFound()
        named: list[tuple[str, Member]] = [
            ("registration", self.registration_absent_op(event.id, email))]
        mine = [(n, item) for snapshot in seen.values() for n, item in enumerate(snapshot.shards)
                if email in ((item or {}).get("holds") or {})]
        lapsed = None
        if mine:  # the person's own lapsed hold of one seat is renewed; others released first
            shard, item = mine[0]
            if mine[1:] or not order.is_single_seat or expired_holder(item, now, email) != email:
                raise EventFull()
            lapsed = shard, email
        else:
            try:
                plan = seats.place(order, seen)
            except EventFull:
                lapsed = seen[CAPACITY_QUOTA].expired_hold(now) if order.is_single_seat else None
                if lapsed is None:
                    raise
        if lapsed is not None:  # a lapsed hold's seat (the count stays)
            shard, holder = lapsed
            return [*named, (member(CAPACITY_QUOTA, shard), self.held.takeover_op(
                shard_id(event.id, shard), email, holder, until=until, now=now))], {"shard": shard}
        bare = order.is_single_seat
        held = self.held_one_seat if bare else self.held
        for quota, parts in plan.items():  # a shard that never held an order gets its map
            for n in parts:
                if not bare and "hold_seats" not in (seen[quota].shards[n] or {}):
                    held.ensure_map(shard_id(event.id, n, quota), orders=True)
        return [*named, *((member(quota, n), held.order_hold_op(
            shard_id(event.id, n, quota), email,
            Order(seats={quota: taken}, capacities={quota: capacity}), until=until, bare=bare))
            for quota, parts in plan.items() for n, (taken, capacity) in sorted(parts.items()))
        ], seats.stored(seats.taken(plan), "shards")

    def accept_ops(self, event: Event, registration: Registration, order: Order, *,
                   now: float, ref: dict, holder: str | None = None) -> list[tuple[str, Member]]:
        held, email = seats.placed_on(ref, "shards"), holder or registration.email
        put = ("registration", self.registration_put(registration, **seats.stored(held)))
        return [*((member(quota, n), self.held.order_unhold_op(
            shard_id(event.id, n, quota), email, {quota: taken}, now, bare="shard" in ref))
            for quota, parts in held.items() for n, taken in sorted(parts.items())), put]

    def release_ops(self, event: Event, email: str, order: Order, *, until: float,
                    ref: dict) -> list[tuple[str, Member]]:
        return [*((member(quota, n), self.held.order_release_op(
            shard_id(event.id, n, quota), email, {quota: taken}, until=until, bare="shard" in ref))
            for quota, shards in seats.placed_on(ref, "shards").items()
            for n, taken in sorted(shards.items())), *seats.freed_ops(self.locks, event.id)]

    def release_expired(self, event: Event, *, now: float) -> int:
        """Lapsed holds of one seat shard by shard (a sold-out mark never outlasts them); an
        order's whole, with the marker's bump (``_release_order``)."""
        found = seats.quota_shard_items(self, {event.id: list(event.quota_capacities())})
        orders: dict[str, list] = {}
        released = 0
        for shards in found.get(event.id, {}).values():
            for item in shards:
                for email, until in (item.get("holds") or {}).items():
                    if until > now:
                        continue
                    if email in (item.get("hold_seats") or {}):
                        orders.setdefault(email, []).append(
                            (item["event_id"], item["hold_seats"][email]))
                        continue
                    # A lapsed hold of one seat (a bare until) released: its seat leaves
                    # the count.
                    lapsed = attr("holds", email)
                    try:
                        self.locks.update({"event_id": item["event_id"]},
                                          Actions().remove(lapsed).set(COUNT, COUNT.minus(1))
                                          + BUMP, condition=lapsed.le(now))
                        released += 1
                    except ConditionFailed:
                        pass  # taken over or released meanwhile
        return released + sum(self._release_order(event.id, email, parts, now)
                              for email, parts in sorted(orders.items()))

    def _release_order(self, event_id: str, email: str, parts: list, now: float) -> int:
        """A lapsed order hold released whole, with the marker's bump (0: released meanwhile)."""
        return self.transact(Members([*((f"part:{key}", self.held.order_lapsed_release_op(
            key, email, part, now=now)) for key, part in parts),
            *seats.freed_ops(self.locks, event_id)]), written=1,
            decode=lambda refusal: None if refusal.conflict else 0)

    def holds(self, event_id: str) -> dict[str, float]:
        found = seats.quota_shard_items(self, {event_id: [CAPACITY_QUOTA]})
        if event_id not in found:
            raise EventNotFound()
        return seats.as_counter(found[event_id][CAPACITY_QUOTA])["holds"]
