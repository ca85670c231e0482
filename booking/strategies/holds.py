"""The waiting list's seat-holds protocol (a time-limited hold: a seat held for one person until a
time), and the holds map that the counter-item strategies share.

A waiting-list offer holds a seat in the strategy's own terms, so a concurrent ``book``
cannot take it, and time releases it: every write that could take a held seat states in
its condition that the hold's ``until`` (epoch milliseconds) has passed. Nobody has to act
when an offer expires; ``release_expired`` only tidies. The waiting list
(``booking/waitlist/engine.py``) runs the transactions; a strategy builds their members,
which always come first. ``book`` counts unexpired holds as taken seats, and takes a seat
whose hold has expired when no other is free.

An offer on an event with orders (docs/orders.md) holds exactly the entry's order: its
seats in every quota it draws on, in one transaction, all or nothing, with the same
conditions as booking that order (``capacity >= :cap AND count <= :cap - n``). Strategies
whose holds can do that say ``holds_orders``. In a counter item such a hold also stores
its seats (``hold_seats``: e-mail key -> {quota: seats}), so whoever releases it gives
back exactly what it took. Nothing takes an order hold over: a lapsed one is released
(``release_expired``) and the next offer or booking then finds its seats free.
"""
from abc import ABC, abstractmethod
from collections import Counter
from dataclasses import dataclass, field

from booking.dynamo.access import CONDITION_FAILED, ConditionFailed, Table
from booking.errors import AlreadyRegistered, EventFull, EventNotFound
from booking.models import CAPACITY_QUOTA, Availability, Order, QuotaAvailability, Registration
from booking.strategies.base import CAPACITY_NAMES, checked_order, expired_holder
from booking.strategies.quota_counts import (count_changes, counts_of, further_availability,
                                             room_condition)


def hold_seats(item: dict | None, email: str, quota: str = CAPACITY_QUOTA) -> dict[str, int]:
    """What ``email``'s hold in a counter item takes: quota -> seats (one seat of ``quota``,
    the item's own count, for a hold of one seat, stored as a bare ``until``)."""
    return dict((item or {}).get("hold_seats", {}).get(email) or {quota: 1})


def held_seats(item: dict | None, now: float | None = None,
               quota: str = CAPACITY_QUOTA) -> Counter:
    """Seats per quota held in a counter item: every hold, or with ``now`` those still
    taken: unexpired ones, and an order's lapsed one until it is released (nothing takes
    it over, so its seats are nobody's until then). ``quota``: the item's own count, for
    holds of one seat."""
    held, orders = Counter(), (item or {}).get("hold_seats") or {}
    for email, until in ((item or {}).get("holds") or {}).items():
        if now is None or until > now or email in orders:
            held.update(hold_seats(item, email, quota))
    return held


def quota_availability_of(item: dict, now: float | None) -> dict[str, QuotaAvailability]:
    """The further quotas of an event item that counts them (``quota_counts``), their
    held seats apart."""
    return further_availability(item, held_seats(item), held_seats(item, now))


def availability_of(item: dict, now: float | None, quota: str = CAPACITY_QUOTA) -> Availability:
    """Seats of a counter item (``capacity``, ``confirmed_count`` counting attendees and
    holds, ``holds`` map); with ``now`` None every hold counts as held, a lapsed one too.
    ``quota``: the quota the item's ``confirmed_count`` counts."""
    stored, held = held_seats(item, quota=quota)[quota], held_seats(item, now, quota)[quota]
    return Availability(capacity=item["capacity"],
                        confirmed=item["confirmed_count"] - stored, held=held)


class SeatHolds(ABC):
    """What a strategy with ``holds_seats`` implements (times in epoch ms). With
    ``holds_orders``, ``hold_ops``, ``accept_ops`` and ``release_ops`` also take ``order``
    (the entry's ``Order``: seats per quota) for events with orders; without it they are
    only ever called without one."""

    holds_seats = True
    holds_orders = False

    @abstractmethod
    def hold_ops(self, event_id: str, email: str, *, until: float, now: float,
                 refused=None) -> tuple[list, dict]:
        """Members that take one free seat, or one whose hold has expired, for ``email``
        until ``until``, only if the person is not registered. ``refused`` is the previous
        attempt's ``TransactionCancelled`` (its evidence chooses the next try). Returns the
        members and ``ref``, what the strategy needs later (the slot), stored with the
        offer. Raises ``EventFull``, ``AlreadyRegistered`` or ``EventNotFound``."""

    @abstractmethod
    def accept_ops(self, event_id: str, registration: Registration, *, now: float,
                   ref: dict) -> list:
        """Members that turn the person's hold into ``registration``, only while unexpired."""

    @abstractmethod
    def release_ops(self, event_id: str, email: str, *, until: float, ref: dict) -> list:
        """Members that free exactly the hold that lasts until ``until``."""

    @abstractmethod
    def release_expired(self, event_id: str, *, now: float) -> int:
        """Free the seats of holds expired before ``now`` (each conditional on still being
        so); return how many. With ``holds_orders`` it also takes ``quotas``, the event's
        further quotas (where their holds live)."""

    @abstractmethod
    def holds(self, event_id: str) -> dict[str, float]:
        """Every stored hold: e-mail key -> until (expired ones included)."""

    @abstractmethod
    def registration_absent_op(self, event_id: str, email: str) -> tuple[str, dict]:
        """A ConditionCheck member: the person holds no registration for the event."""


def refused_order(order: Order, found: list, email: str, counts=None) -> Order:
    """What a refused hold of ``order`` learns from the counter items it ``found``: raises
    ``EventNotFound``, ``EventFull`` (naming the quota without room, or while the person
    still has a hold there: a lapsed one is released first), else returns the order with
    the stored capacities (its guess was stale: hold again with these). ``counts``: the
    items' quota -> (capacity, taken) (default: one event item's ``counts_of``)."""
    if any(item is None for item in found):
        raise EventNotFound()
    if any(email in (item.get("holds") or {}) for item in found):
        raise EventFull()
    stored = counts(found) if counts is not None else counts_of(found[0])
    return checked_order(order, {q: c for q, c in stored.items() if q in order.seats})


@dataclass(frozen=True)
class HoldsMap:
    """Holds as a ``holds`` map (e-mail key -> until) in an item keyed by ``event_id`` that
    counts them in ``confirmed_count`` (aggregate's and streams' event item, lock_table's
    lock item), so a condition ``confirmed_count < capacity`` keeps a held seat from anyone
    else and a takeover (``holds.#h <= :now``) swaps the holder without changing the count.

    ``table`` holds the item; ``bump`` is the SET clause every hold write adds (the version
    a repair checks), with ``bump_values`` (always ``:one``)."""

    table: Table
    bump: str
    bump_values: dict = field(default_factory=lambda: {":one": 1})
    # True when the item counts further quotas too (``quota_counts``: aggregate, streams);
    # False when its ``confirmed_count`` counts its one quota (lock_table's lock items).
    counts_quotas: bool = False

    def key(self, event_id: str) -> dict:
        return {"event_id": event_id}

    def ensure_map(self, event_id: str, *, orders: bool = False) -> None:
        """Give the item its ``holds`` map (and, for holds of orders, ``hold_seats``)."""
        expression = "SET holds = if_not_exists(holds, :empty)" + (
            ", hold_seats = if_not_exists(hold_seats, :empty)" if orders else "")
        try:
            self.table.update(self.key(event_id), expression,
                              condition="attribute_exists(event_id)", values={":empty": {}})
        except ConditionFailed:
            raise EventNotFound() from None

    # --- holds of orders: seats per quota, stored with the hold ----------------------------
    def _counts(self, seats: dict[str, int], sign: str) -> tuple[list[str], dict, dict]:
        """SET clauses moving the item's counts by ``seats`` (quota -> seats)."""
        if self.counts_quotas:
            return count_changes(seats, sign)
        return [f"confirmed_count = confirmed_count {sign} :n0"], {}, {":n0": sum(seats.values())}

    def _room(self, order: Order) -> tuple[str, dict, dict]:
        """The condition that the item has room for ``order`` (one quota in a lock item)."""
        if self.counts_quotas:
            return room_condition(order)
        (quota, seats), = order.seats.items()
        capacity = order.capacities[quota]
        return ("#capacity >= :cap0 AND confirmed_count <= :room0", dict(CAPACITY_NAMES),
                {":cap0": capacity, ":room0": capacity - seats})

    def order_hold_op(self, event_id, email, order: Order, *, until, also: str = ""):
        """The update holding ``order``'s seats (in this item's quotas) for ``email``, only if
        they all fit and the person holds nothing here; ``also`` adds to the condition."""
        clauses, names, values = self._counts(order.seats, "+")
        fits, room_names, room = self._room(order)
        return ("Update", self.table.update_op(
            self.key(event_id),
            f"SET holds.#email = :until, hold_seats.#email = :seats, {', '.join(clauses)}, "
            f"{self.bump}",
            condition=f"attribute_exists(event_id) AND attribute_not_exists(holds.#email){also} "
                      f"AND {fits}",
            names={"#email": email, **names, **room_names},
            values={":until": until, ":seats": dict(order.seats), **values, **room,
                    **self.bump_values}))

    def order_unhold_op(self, event_id, email, seats: dict[str, int], now, *, also: str = "",
                        then: str = "", names=None, values=None):
        """Remove the hold of ``seats`` (they stay counted: they become the person's), only
        while unexpired; ``then`` adds SET clauses (with ``names``, ``values``)."""
        return ("Update", self.table.update_op(
            self.key(event_id), f"REMOVE holds.#email, hold_seats.#email SET {then}{self.bump}",
            condition=f"holds.#email > :now AND hold_seats.#email = :seats{also}",
            names={"#email": email, **(names or {})},
            values={":now": now, ":seats": dict(seats), **(values or {}), **self.bump_values}))

    def order_release_op(self, event_id, email, seats: dict[str, int], *, until):
        """Free exactly the hold of ``seats`` that lasts until ``until``."""
        expression, kwargs = self._release(email, seats, "holds.#email = :until",
                                                {":until": until})
        return ("Update", self.table.update_op(self.key(event_id), expression, **kwargs))

    def order_lapsed_release_op(self, event_id, email, seats: dict[str, int], *, now):
        """Free exactly ``email``'s hold of ``seats``, only if it lapsed before ``now``."""
        expression, kwargs = self._release(email, seats, "holds.#email <= :now", {":now": now})
        return ("Update", self.table.update_op(self.key(event_id), expression, **kwargs))

    def _release(self, email, seats, condition, values) -> tuple[str, dict]:
        """(expression, its keyword arguments) removing ``email``'s hold of ``seats`` and
        giving them back to the counts, only if ``condition`` holds."""
        clauses, names, counts = self._counts(seats, "-")
        return (f"REMOVE holds.#email, hold_seats.#email SET {', '.join(clauses)}, {self.bump}",
                {"condition": f"{condition} AND hold_seats.#email = :seats",
                 "names": {"#email": email, **names},
                 "values": {**values, ":seats": dict(seats), **counts, **self.bump_values}})

    def hold_op(self, event_id, email, *, until, now, refused=None, also: str = "",
                ensure: bool = True):
        """The update taking a free seat for ``email`` (first try) or, once ``refused``
        found none, one whose hold has expired; ``also`` adds to both conditions (the
        person is not an attendee of the same item); ``ensure=False`` when the item is
        known to have its ``holds`` map."""
        names, values = {"#email": email}, {":until": until, **self.bump_values}
        if refused is None or refused.code(0) != CONDITION_FAILED:
            if refused is None and ensure:
                self.ensure_map(event_id)
            return ("Update", self.table.update_op(
                self.key(event_id),
                f"SET holds.#email = :until, confirmed_count = confirmed_count + :one, {self.bump}",
                condition=f"attribute_exists(event_id) AND confirmed_count < #capacity{also} "
                          "AND attribute_not_exists(holds.#email)",
                names={**names, **CAPACITY_NAMES}, values=values))
        old = refused.reasons[0].old_item
        if old is None:
            raise EventNotFound()
        holder = expired_holder(old, now, prefer=email)
        if holder is None:
            raise EventFull()
        if holder == email:
            expression, condition = (f"SET holds.#email = :until, {self.bump}",
                                     f"holds.#email <= :now{also}")
        else:  # DynamoDB refuses names an expression does not use: #h only here
            names["#h"] = holder
            expression = f"REMOVE holds.#h SET holds.#email = :until, {self.bump}"
            condition = f"holds.#h <= :now{also} AND attribute_not_exists(holds.#email)"
        return ("Update", self.table.update_op(self.key(event_id), expression,
                                               condition=condition, names=names,
                                               values={**values, ":now": now}))

    def unhold_op(self, event_id, email, now):
        """Remove ``email``'s hold (its seat stays counted: it becomes theirs), only while
        it is unexpired."""
        return ("Update", self.table.update_op(
            self.key(event_id), f"REMOVE holds.#email SET {self.bump}",
            condition="holds.#email > :now", names={"#email": email},
            values={":now": now, **self.bump_values}))

    def release_op(self, event_id, email, *, until):
        return ("Update", self.table.update_op(
            self.key(event_id),
            f"REMOVE holds.#email SET confirmed_count = confirmed_count - :one, {self.bump}",
            condition="holds.#email = :until", names={"#email": email},
            values={":until": until, **self.bump_values}))

    def release_expired(self, event_id, *, now) -> int:
        released, item = 0, self._item(event_id)
        orders = item.get("hold_seats") or {}
        for email, until in (item.get("holds") or {}).items():
            if until > now:
                continue
            try:
                if email in orders:
                    expression, kwargs = self._release(email, orders[email],
                                                       "holds.#email <= :now", {":now": now})
                    self.table.update(self.key(event_id), expression, **kwargs)
                else:
                    self.table.update(self.key(event_id), "REMOVE holds.#h SET confirmed_count = "
                                      f"confirmed_count - :one, {self.bump}",
                                      condition="holds.#h <= :now", names={"#h": email},
                                      values={":now": now, **self.bump_values})
                released += 1
            except ConditionFailed:
                pass  # taken over or released meanwhile
        return released

    def holds(self, event_id) -> dict[str, float]:
        return dict(self._item(event_id).get("holds") or {})

    def _item(self, event_id) -> dict:
        item = self.table.get(self.key(event_id), projection="event_id, holds, hold_seats")
        if item is None:
            raise EventNotFound()
        return item


class MapHolds(SeatHolds):
    """``SeatHolds`` kept in a ``HoldsMap``: ``held``, set by the strategy; the strategy's
    own holds module adds ``accept_ops`` and ``registration_absent_op``."""

    held: HoldsMap

    def hold_ops(self, event_id, email, *, until, now, refused=None, order=None):
        """The hold (the last of its members: ``order_hold_ops``), then
        ``registration_absent_op``: registrations kept in a table of their own
        (aggregate's, in the same item, override this)."""
        if order is not None:
            hold = self.order_hold_ops(event_id, email, order, until=until, refused=refused)
            if refused is not None and refused.code(len(hold)) == CONDITION_FAILED:
                raise AlreadyRegistered()
            return [*hold, self.registration_absent_op(event_id, email)], {}
        if refused is not None and refused.code(1) == CONDITION_FAILED:
            raise AlreadyRegistered()
        hold = self.held.hold_op(event_id, email, until=until, now=now, refused=refused)
        return [hold, self.registration_absent_op(event_id, email)], {}

    def order_hold_ops(self, event_id, email, order: Order, *, until, refused,
                       also: str = "") -> list:
        """The event item's hold of ``order`` (every quota counted in that one item); after
        a refusal, with the capacities it showed, or ``EventFull`` naming the quota."""
        if refused is None:
            self.held.ensure_map(event_id, orders=True)
        elif refused.code(0) == CONDITION_FAILED:
            order = refused_order(order, [refused.reasons[0].old_item], email)
        return [self.held.order_hold_op(event_id, email, order, until=until, also=also)]

    def release_ops(self, event_id, email, *, until, ref, order=None):
        if order is not None:
            return [self.held.order_release_op(event_id, email, order.seats, until=until)]
        return [self.held.release_op(event_id, email, until=until)]

    def release_expired(self, event_id, *, now, quotas=()):
        return self.held.release_expired(event_id, now=now)

    def holds(self, event_id):
        return self.held.holds(event_id)
