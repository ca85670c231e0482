"""Time-limited holds of seats for waiting-list offers, kept in a counter item's maps.

``HoldsMap`` builds the writes of holds kept as entries of an item's ``holds`` map (e-mail
key -> until, epoch ms), counted in its counts; ``MapHolds`` is the contract's ``Holds``
over such items (aggregate's and streams' event item, lock_table's lock items). How they
work: docs/strategies/lock_table.md#holds-in-a-counter-item.
"""
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass, replace
from typing import Any

from booking.dynamo.access import ConditionFailed, Table
from booking.dynamo.expressions import Actions, Condition, Path, all_of, attr, projection
from booking.dynamo.expressions import ConditionCheck, Member, Put, Refusal, Update
from booking.errors import AlreadyRegistered, EventFull, EventNotFound
from booking.models import CAPACITY_QUOTA, Availability, Event, Order
from booking.strategies.base import NOT_REGISTERED, checked_order, expired_holder
from booking.strategies.contract import Holds
from booking.strategies.quota_counts import (count_changes, counts_of, further_availability,
                                             room_condition)

EXISTS = attr("event_id").exists()
HOLDS_ITEM = projection("event_id", "holds", "hold_seats")


def hold_of(email: str) -> Path:
    """The person's entry in a counter item's ``holds`` map (e-mail key -> until)."""
    return attr("holds", email)


def seats_of(email: str) -> Path:
    """The person's entry in ``hold_seats`` (e-mail key -> {quota: seats})."""
    return attr("hold_seats", email)


def _and(*conditions: Condition | None) -> Condition:
    """The conditions given (None is none), joined."""
    return all_of(c for c in conditions if c is not None)


def held_seats(item: dict | None, now: float | None = None,
               quota: str = CAPACITY_QUOTA) -> Counter:
    """Seats per quota held in a counter item: every hold, or with ``now`` those still
    taken: unexpired ones, and an order's lapsed one until it is released (nothing takes
    it over, so its seats are nobody's until then). ``quota``: the item's own count, which
    a hold of one seat (a bare ``until``, no ``hold_seats`` entry) takes a seat of."""
    held: Counter = Counter()
    orders = (item or {}).get("hold_seats") or {}
    for email, until in ((item or {}).get("holds") or {}).items():
        if now is None or until > now or email in orders:
            held.update(orders.get(email) or {quota: 1})
    return held


def availability_of(item: dict, now: float | None, quota: str = CAPACITY_QUOTA) -> Availability:
    """Seats of a counter item (``capacity``, ``confirmed_count`` counting attendees and
    holds, ``holds`` map); with ``now`` None every hold counts as held, a lapsed one too.
    ``quota``: the quota the item's ``confirmed_count`` counts."""
    stored, held = held_seats(item, quota=quota)[quota], held_seats(item, now, quota)[quota]
    return Availability(capacity=item["capacity"],
                        confirmed=item["confirmed_count"] - stored, held=held)


def counted_availability(item: dict, now: float | None) -> Availability:
    """``availability_of`` an event item that counts every quota (``quota_counts``), with
    the further quotas' seats."""
    return replace(availability_of(item, now),
                   further=further_availability(item, held_seats(item), held_seats(item, now)))


@dataclass(frozen=True)
class HoldsMap:
    """The writes of holds kept in an item keyed by ``event_id``: its ``holds`` map, and for
    a hold of more than one seat its ``hold_seats`` map (e-mail key -> {quota: seats}).

    ``table`` holds the item; ``bump`` is what every hold write adds (the version a repair
    checks). ``counts_quotas``: the item counts further quotas too (``quota_counts``:
    aggregate, streams); False when its ``confirmed_count`` counts its one quota
    (lock_table's lock items)."""

    table: Table
    bump: Actions
    counts_quotas: bool = False

    def key(self, event_id: str) -> dict[str, str]:
        return {"event_id": event_id}

    def ensure_map(self, event_id: str, *, orders: bool = False) -> None:
        """Give the item its ``holds`` map (and, for holds of orders, ``hold_seats``)."""
        ensure = Actions().set("holds", attr("holds").if_not_exists({}))
        if orders:
            ensure = ensure.set("hold_seats", attr("hold_seats").if_not_exists({}))
        try:
            self.table.update(self.key(event_id), ensure, condition=EXISTS)
        except ConditionFailed:
            raise EventNotFound() from None

    def _counts(self, seats: dict[str, int], sign: str) -> Actions:
        """SET clauses moving the item's counts by ``seats`` (quota -> seats)."""
        if self.counts_quotas:
            return count_changes(seats, sign)
        count, moved = attr("confirmed_count"), sum(seats.values())
        return Actions().set(count, count.plus(moved) if sign == "+" else count.minus(moved))

    def _room(self, order: Order) -> Condition:
        """The condition that the item has room for ``order`` (one quota in a lock item)."""
        if self.counts_quotas:
            return room_condition(order)
        (quota, seats), = order.seats.items()
        capacity = order.capacities[quota]
        return attr("capacity").ge(capacity) & attr("confirmed_count").le(capacity - seats)

    def _stored(self, item: dict, order: Order) -> dict[str, tuple[int, int]]:
        """The item's (capacity, taken) of each quota ``order`` draws on here."""
        if self.counts_quotas:
            return {q: c for q, c in counts_of(item).items() if q in order.seats}
        (quota,) = order.seats
        return {quota: (int(item["capacity"]), int(item["confirmed_count"]))}

    # --- one path for every hold: ``bare`` is a hold of one seat, stored as a bare until ---
    def order_hold_op(self, event_id: str, email: str, order: Order, *, until: float,
                      also: Condition | None = None, bare: bool = False) -> Update:
        """Hold ``order``'s seats (this item's part) for ``email`` if they all fit and the
        person holds nothing here; ``also`` adds to the condition. A ``bare`` hold stores
        only its until (what a hold of one seat always stored), any other its seats too."""
        held = Actions().set(hold_of(email), until)
        if not bare:
            held = held.set(seats_of(email), dict(order.seats))
        return Update(self.table, self.key(event_id),
                      held + self._counts(order.seats, "+") + self.bump,
                      _and(EXISTS, hold_of(email).not_exists(), also, self._room(order)))

    def rehold_op(self, event_id: str, email: str, order: Order, found: dict | None, *,
                  until: float, now: float, bare: bool, also: Condition | None = None) -> Update:
        """The hold again after its write was refused by an item that ``found`` showed:
        with the capacities it showed, or (a hold of one seat) over a lapsed hold of one
        seat, the person's own first. Raises ``EventNotFound``, or ``EventFull`` (naming
        the quota) when neither, or while the person holds seats here otherwise."""
        if found is None:
            raise EventNotFound()
        if email in (found.get("holds") or {}):
            if bare and expired_holder(found, now, prefer=email) == email:
                return self.takeover_op(event_id, email, email, until=until, now=now, also=also)
            raise EventFull()
        try:
            order = checked_order(order, self._stored(found, order))
        except EventFull:
            holder = expired_holder(found, now) if bare else None
            if holder is None:
                raise
            return self.takeover_op(event_id, email, holder, until=until, now=now, also=also)
        return self.order_hold_op(event_id, email, order, until=until, also=also, bare=bare)

    def takeover_op(self, event_id: str, email: str, holder: str, *, until: float, now: float,
                    also: Condition | None = None) -> Update:
        """``email`` takes over ``holder``'s lapsed hold of one seat (its own: renewed); the
        count does not change."""
        renewed = Actions().set(hold_of(email), until)
        if holder == email:
            update, condition = renewed, _and(hold_of(email).le(now), also)
        else:
            update = Actions().remove(hold_of(holder)) + renewed
            condition = _and(hold_of(holder).le(now), also, hold_of(email).not_exists())
        return Update(self.table, self.key(event_id), update + self.bump, condition)

    def order_unhold_op(self, event_id: str, email: str, seats: dict[str, int], now: float, *,
                        also: Condition | None = None, then: Actions | None = None,
                        bare: bool = False) -> Update:
        """Remove ``email``'s unexpired hold of ``seats`` (they stay counted: they become the
        person's); ``then`` adds further actions."""
        unhold = Actions().remove(hold_of(email))
        if not bare:
            unhold = unhold.remove(seats_of(email))
        return Update(self.table, self.key(event_id), unhold + (then or Actions()) + self.bump,
                      _and(hold_of(email).gt(now),
                           None if bare else seats_of(email).eq(dict(seats)), also))

    def order_release_op(self, event_id: str, email: str, seats: dict[str, int], *,
                         until: float, bare: bool = False) -> Update:
        """Free exactly the hold of ``seats`` that lasts until ``until``."""
        return self._release(event_id, email, seats, hold_of(email).eq(until), bare=bare)

    def order_lapsed_release_op(self, event_id: str, email: str, seats: dict[str, int], *,
                                now: float) -> Update:
        """Free exactly ``email``'s hold of ``seats``, only if it lapsed before ``now``."""
        return self._release(event_id, email, seats, hold_of(email).le(now))

    def _release(self, event_id: str, email: str, seats: dict[str, int], condition: Condition,
                 *, bare: bool = False) -> Update:
        """The update removing ``email``'s hold of ``seats`` and giving them back to the
        counts, only if ``condition`` holds (and, unless ``bare``, the hold is of those
        seats)."""
        removed = Actions().remove(hold_of(email))
        if not bare:
            removed = removed.remove(seats_of(email))
        return Update(self.table, self.key(event_id),
                      removed + self._counts(seats, "-") + self.bump,
                      _and(condition, None if bare else seats_of(email).eq(dict(seats))))

    # --- tidying and reading -------------------------------------------------------------
    def release_expired(self, event_id: str, *, now: float) -> int:
        """Free every hold of the item that lapsed before ``now`` (each write conditional on
        it still being so); return how many."""
        released, item = 0, self._item(event_id)
        orders = item.get("hold_seats") or {}
        for email, until in (item.get("holds") or {}).items():
            if until > now:
                continue
            seats = orders.get(email) or {CAPACITY_QUOTA: 1}
            release = self._release(event_id, email, seats, hold_of(email).le(now),
                                    bare=email not in orders)
            try:
                self.table.update(release.key, release.actions, condition=release.condition)
                released += 1
            except ConditionFailed:
                pass  # taken over or released meanwhile
        return released

    def holds(self, event_id: str) -> dict[str, float]:
        return dict(self._item(event_id).get("holds") or {})

    def _item(self, event_id: str) -> dict[str, Any]:
        item = self.table.get(self.key(event_id), projection=HOLDS_ITEM)
        if item is None:
            raise EventNotFound()
        return item


class RegistrationItemHolds(Holds):
    """``Holds`` with registration items (``registrations_table``); put it before any other
    ``Holds`` base, or the abstract ``registration_absent_op`` wins."""

    registrations_table: Table
    # The registration's put, the strategy's own (``OneItemPerPerson``, on every booking):
    registration_put: Callable[..., Put]

    def registration_absent_op(self, event_id: str, email: str) -> ConditionCheck:
        return ConditionCheck(self.registrations_table, {"event_id": event_id, "email": email},
                              NOT_REGISTERED)


class MapHolds(Holds):
    """The contract's ``Holds`` kept in ``HoldsMap`` items (``held``, set by the strategy).
    ``hold_items`` names the items an order's hold writes (default: the event item, which
    counts every quota); the strategy adds ``accept_ops`` (with ``unhold_members``) and
    ``registration_absent_op``."""

    held: HoldsMap

    def hold_items(self, event: Event, order: Order) -> list[tuple[str, str, Order]]:
        """(member name, item id, the part of ``order`` that item counts) of each item."""
        return [("event", event.id, order)]

    def hold_keys(self, event: Event) -> list[str]:
        """The ids of every item of the event that may keep holds."""
        return [event.id]

    def hold_ops(self, event: Event, email: str, order: Order, *, until: float, now: float,
                 refused: Refusal | None = None) -> tuple[list[tuple[str, Member]], dict]:
        if refused is not None and refused.refused("registration"):
            raise AlreadyRegistered()
        return [*self.hold_members(event, email, order, until=until, now=now, refused=refused),
                ("registration", self.registration_absent_op(event.id, email))], {}

    def hold_members(self, event: Event, email: str, order: Order, *, until: float,
                     now: float, refused: Refusal | None,
                     also: Condition | None = None) -> list[tuple[str, Member]]:
        """The hold's members, one per item; an item that refused the previous attempt is
        written with what it showed (``HoldsMap.rehold_op``)."""
        bare, members = order.is_single_seat, list[tuple[str, Member]]()
        for name, item_id, part in self.hold_items(event, order):
            if refused is not None and refused.refused(name):
                op = self.held.rehold_op(item_id, email, part, refused.old(name), until=until,
                                         now=now, bare=bare, also=also)
            else:
                if refused is None:
                    self.held.ensure_map(item_id, orders=not bare)
                op = self.held.order_hold_op(item_id, email, part, until=until, also=also,
                                             bare=bare)
            members.append((name, op))
        return members

    def unhold_members(self, event: Event, email: str, order: Order, *, now: float,
                       also: Condition | None = None,
                       then: Actions | None = None) -> list[tuple[str, Member]]:
        """Members turning the unexpired hold of ``order`` into the person's seats
        (``also``, ``then``: as ``HoldsMap.order_unhold_op``)."""
        return [(name, self.held.order_unhold_op(item_id, email, part.seats, now, also=also,
                                                 then=then, bare=order.is_single_seat))
                for name, item_id, part in self.hold_items(event, order)]

    def release_ops(self, event: Event, email: str, order: Order, *, until: float,
                    ref: dict) -> list[tuple[str, Member]]:
        return [(name, self.held.order_release_op(item_id, email, part.seats, until=until,
                                                  bare=order.is_single_seat))
                for name, item_id, part in self.hold_items(event, order)]

    def release_expired(self, event: Event, *, now: float) -> int:
        return sum(self.held.release_expired(key, now=now) for key in self.hold_keys(event))

    def holds(self, event_id: str) -> dict[str, float]:
        return self.held.holds(event_id)

