"""Waiting-list holds on the shards strategy's shard items (seed 003 on seed 004 2-2).

A hold lives in one shard's ``holds`` map, as on lock_table's lock item (``HoldsMap``): the
shard's ``confirmed_count`` counts it, so its seat is kept from bookings, and time releases
it (a write takes it over only with ``holds.#h <= :now``). The offer's ``ref`` names the
shard (``{"shard": n}``). An offer reads every shard in one TransactGetItems and holds a
free seat of one of them (weighted by free seats), else takes over a lapsed hold, else the
event is full. Releasing a hold frees a seat, so it bumps the marker in the same
transaction; an expired hold needs no bump: the sold-out mark never lasts past the earliest
hold it saw, and no hold can start while the event is marked sold out.
"""
import random

from booking.dynamo import items
from booking.dynamo.access import CONDITION_FAILED, Table
from booking.errors import AlreadyRegistered, EventFull, EventNotFound

from booking.strategies.holds import HoldsMap, SeatHolds
from booking.strategies.shards import seats
from booking.strategies.shards.seats import BUMP, SHARDS, shard_key

NOT_REGISTERED = "attribute_not_exists(email)"


def shard_id(event_id: str, shard: int) -> str:
    """The key value of a shard item: ``HoldsMap`` keys its items by it."""
    return shard_key(event_id, shard)["event_id"]


class ShardsHolds(SeatHolds):
    """The seat-holds protocol on the shard items: ``locks`` and ``registrations_table`` are
    the strategy's tables, ``held`` the shards' holds maps (set by the strategy)."""

    locks: Table
    registrations_table: Table
    held: HoldsMap

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

    def hold_ops(self, event_id, email, *, until, now, refused=None):
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

    def accept_ops(self, event_id, registration, *, now, ref):
        return [self.held.unhold_op(shard_id(event_id, ref["shard"]), registration.email, now),
                ("Put", self.registrations_table.put_op(
                    items.registration_item(registration, shard=ref["shard"]),
                    condition=NOT_REGISTERED))]

    def release_ops(self, event_id, email, *, until, ref):
        return [self.held.release_op(shard_id(event_id, ref["shard"]), email, until=until),
                seats.freed_op(self.locks, event_id)]

    def release_expired(self, event_id, *, now):
        return sum(self.held.release_expired(shard_id(event_id, n), now=now)
                   for n in range(SHARDS))

    def holds(self, event_id):
        found = seats.shard_items(self, [event_id]).get(event_id)
        if not found:
            raise EventNotFound()
        return seats.as_counter(found)["holds"]

    def registration_absent_op(self, event_id, email):
        return ("ConditionCheck", self.registrations_table.delete_op(
            {"event_id": event_id, "email": email}, condition=NOT_REGISTERED))
