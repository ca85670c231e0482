"""Time-limited holds of seats for waiting-list offers, kept in a counter item's maps.

``HoldsMap`` builds the writes of holds kept as entries of an item's ``holds`` map (e-mail
key -> until, epoch ms), counted in its counts; ``MapHolds`` is the contract's ``Holds``
over such items (aggregate's and streams' event item, lock_table's lock items). How they
work: docs/strategies/lock_table.md#holds-in-a-counter-item.
"""
from collections import Counter
from dataclasses import dataclass, field, replace

from booking.dynamo import items
from booking.dynamo.access import ConditionFailed, Table
from booking.dynamo.transaction import Op, Refusal
from booking.errors import AlreadyRegistered, EventFull, EventNotFound
from booking.models import CAPACITY_QUOTA, Availability, Event, Order, Registration
from booking.strategies.base import CAPACITY_NAMES, checked_order, expired_holder
from booking.strategies.contract import Holds
from booking.strategies.quota_counts import (count_changes, counts_of, further_availability,
                                             room_condition)

ENSURE_HOLDS = "SET holds = if_not_exists(holds, :empty)"
ENSURE_HOLDS_AND_SEATS = f"{ENSURE_HOLDS}, hold_seats = if_not_exists(hold_seats, :empty)"
EXISTS = "attribute_exists(event_id)"
NOT_REGISTERED = "attribute_not_exists(email)"  # a registration item's put or absence
# One quota counted in ``confirmed_count`` (a lock item): room for the seats at a capacity.
ONE_QUOTA_ROOM = "#capacity >= :cap0 AND confirmed_count <= :room0"
FREE_OF_EMAIL = "attribute_not_exists(holds.#email)"
LIVE = "holds.#email > :now"
UNTIL = "holds.#email = :until"
LAPSED = "holds.#email <= :now"
HOLDER_LAPSED = "holds.#h <= :now"
SAME_SEATS = "hold_seats.#email = :seats"
# Update templates: ``{bump}`` is the item's version clause, ``{then}`` further SET clauses.
RENEW = "SET holds.#email = :until, {bump}"
TAKE_OVER = "REMOVE holds.#h SET holds.#email = :until, {bump}"
UNHOLD = "REMOVE holds.#email SET {then}{bump}"
UNHOLD_ORDER = "REMOVE holds.#email, hold_seats.#email SET {then}{bump}"


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


def _and(*conditions: str) -> str:
    """The conditions given (an empty one is none), joined."""
    return " AND ".join(c for c in conditions if c)


@dataclass(frozen=True)
class HoldsMap:
    """The writes of holds kept in an item keyed by ``event_id``: its ``holds`` map, and for
    a hold of more than one seat its ``hold_seats`` map (e-mail key -> {quota: seats}).

    ``table`` holds the item; ``bump`` is the SET clause every hold write adds (the version
    a repair checks), with ``bump_values`` (always ``:one``). ``counts_quotas``: the item
    counts further quotas too (``quota_counts``: aggregate, streams); False when its
    ``confirmed_count`` counts its one quota (lock_table's lock items)."""

    table: Table
    bump: str
    bump_values: dict = field(default_factory=lambda: {":one": 1})
    counts_quotas: bool = False

    def key(self, event_id: str) -> dict:
        return {"event_id": event_id}

    def ensure_map(self, event_id: str, *, orders: bool = False) -> None:
        """Give the item its ``holds`` map (and, for holds of orders, ``hold_seats``)."""
        try:
            self.table.update(self.key(event_id),
                              ENSURE_HOLDS_AND_SEATS if orders else ENSURE_HOLDS,
                              condition=EXISTS, values={":empty": {}})
        except ConditionFailed:
            raise EventNotFound() from None

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
        return ONE_QUOTA_ROOM, dict(CAPACITY_NAMES), {":cap0": capacity, ":room0": capacity - seats}

    def _stored(self, item: dict, order: Order) -> dict[str, tuple[int, int]]:
        """The item's (capacity, taken) of each quota ``order`` draws on here."""
        if self.counts_quotas:
            return {q: c for q, c in counts_of(item).items() if q in order.seats}
        (quota,) = order.seats
        return {quota: (int(item["capacity"]), int(item["confirmed_count"]))}

    # --- one path for every hold: ``bare`` is a hold of one seat, stored as a bare until ---
    def order_hold_op(self, event_id: str, email: str, order: Order, *, until: float,
                      also: str = "", bare: bool = False) -> Op:
        """Hold ``order``'s seats (this item's part) for ``email`` if they all fit and the
        person holds nothing here; ``also`` adds to the condition. A ``bare`` hold stores
        only its until (what a hold of one seat always stored), any other its seats too."""
        clauses, names, values = self._counts(order.seats, "+")
        fits, room_names, room = self._room(order)
        sets = ["holds.#email = :until", *([] if bare else ["hold_seats.#email = :seats"]),
                *clauses, self.bump]
        seats = {} if bare else {":seats": dict(order.seats)}
        return ("Update", self.table.update_op(
            self.key(event_id), "SET " + ", ".join(sets),
            condition=_and(EXISTS, FREE_OF_EMAIL, also, fits),
            names={"#email": email, **names, **room_names},
            values={":until": until, **seats, **values, **room, **self.bump_values}))

    def rehold_op(self, event_id: str, email: str, order: Order, found: dict | None, *,
                  until: float, now: float, bare: bool, also: str = "") -> Op:
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
                    also: str = "") -> Op:
        """``email`` takes over ``holder``'s lapsed hold of one seat (its own: renewed); the
        count does not change."""
        if holder == email:
            update, condition, names = RENEW, _and(LAPSED, also), {"#email": email}
        else:  # DynamoDB refuses unused names: #h only here
            update, condition = TAKE_OVER, _and(HOLDER_LAPSED, also, FREE_OF_EMAIL)
            names = {"#email": email, "#h": holder}
        return ("Update", self.table.update_op(
            self.key(event_id), update.format(bump=self.bump), condition=condition, names=names,
            values={":until": until, ":now": now, **self.bump_values}))

    def order_unhold_op(self, event_id, email, seats: dict[str, int], now, *, also: str = "",
                        then: str = "", names=None, values=None, bare: bool = False) -> Op:
        """Remove ``email``'s unexpired hold of ``seats`` (they stay counted: they become the
        person's); ``then`` adds SET clauses (with ``names``, ``values``)."""
        unhold, same = (UNHOLD, {}) if bare else (UNHOLD_ORDER, {":seats": dict(seats)})
        return ("Update", self.table.update_op(
            self.key(event_id), unhold.format(then=then, bump=self.bump),
            condition=_and(LIVE, "" if bare else SAME_SEATS, also),
            names={"#email": email, **(names or {})},
            values={":now": now, **same, **(values or {}), **self.bump_values}))

    def order_release_op(self, event_id, email, seats: dict[str, int], *, until,
                         bare: bool = False) -> Op:
        """Free exactly the hold of ``seats`` that lasts until ``until``."""
        release = self._release(event_id, email, seats, UNTIL, {":until": until}, bare=bare)
        return ("Update", self.table.update_op(**release))

    def order_lapsed_release_op(self, event_id, email, seats: dict[str, int], *, now) -> Op:
        """Free exactly ``email``'s hold of ``seats``, only if it lapsed before ``now``."""
        release = self._release(event_id, email, seats, LAPSED, {":now": now})
        return ("Update", self.table.update_op(**release))

    def _release(self, event_id, email, seats, condition, values, *, bare=False) -> dict:
        """The update's arguments removing ``email``'s hold of ``seats`` and giving them back
        to the counts, only if ``condition`` holds (and, unless ``bare``, the hold is of
        those seats)."""
        clauses, names, counts = self._counts(seats, "-")
        removed, same = ("holds.#email", {}) if bare else (
            "holds.#email, hold_seats.#email", {":seats": dict(seats)})
        return {"key": self.key(event_id),
                "expression": f"REMOVE {removed} SET {', '.join([*clauses, self.bump])}",
                "condition": _and(condition, "" if bare else SAME_SEATS),
                "names": {"#email": email, **names},
                "values": {**values, **same, **counts, **self.bump_values}}

    # --- tidying and reading -------------------------------------------------------------
    def release_expired(self, event_id, *, now) -> int:
        """Free every hold of the item that lapsed before ``now`` (each write conditional on
        it still being so); return how many."""
        released, item = 0, self._item(event_id)
        orders = item.get("hold_seats") or {}
        for email, until in (item.get("holds") or {}).items():
            if until > now:
                continue
            seats = orders.get(email) or {CAPACITY_QUOTA: 1}
            try:
                self.table.update(**self._release(event_id, email, seats, LAPSED, {":now": now},
                                                  bare=email not in orders))
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


class RegistrationItemHolds(Holds):
    """``Holds`` with registration items (``registrations_table``); put it before any other
    ``Holds`` base, or the abstract ``registration_absent_op`` wins."""

    registrations_table: Table

    def registration_put(self, registration: Registration, **stored) -> Op:
        """Put ``registration`` (and ``stored``), only if the person holds none."""
        return ("Put", self.registrations_table.put_op(
            items.registration_item(registration, **stored), condition=NOT_REGISTERED))

    def registration_absent_op(self, event_id: str, email: str) -> Op:
        return ("ConditionCheck", self.registrations_table.delete_op(
            {"event_id": event_id, "email": email}, condition=NOT_REGISTERED))


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
                 refused: Refusal | None = None) -> tuple[list[tuple[str, Op]], dict]:
        if refused is not None and refused.refused("registration"):
            raise AlreadyRegistered()
        return [*self.hold_members(event, email, order, until=until, now=now, refused=refused),
                ("registration", self.registration_absent_op(event.id, email))], {}

    def hold_members(self, event: Event, email: str, order: Order, *, until: float,
                     now: float, refused: Refusal | None, also: str = "") -> list[tuple[str, Op]]:
        """The hold's members, one per item; an item that refused the previous attempt is
        written with what it showed (``HoldsMap.rehold_op``)."""
        bare, members = order.is_single_seat, []
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
                       **extra) -> list[tuple[str, Op]]:
        """Members turning the unexpired hold of ``order`` into the person's seats
        (``extra``: ``HoldsMap.order_unhold_op``'s ``also``, ``then``, ``names``, ``values``)."""
        return [(name, self.held.order_unhold_op(item_id, email, part.seats, now,
                                                 bare=order.is_single_seat, **extra))
                for name, item_id, part in self.hold_items(event, order)]

    def release_ops(self, event: Event, email: str, order: Order, *, until: float,
                    ref: dict) -> list[tuple[str, Op]]:
        return [(name, self.held.order_release_op(item_id, email, part.seats, until=until,
                                                  bare=order.is_single_seat))
                for name, item_id, part in self.hold_items(event, order)]

    def release_expired(self, event: Event, *, now: float) -> int:
        return sum(self.held.release_expired(key, now=now) for key in self.hold_keys(event))

    def holds(self, event_id: str) -> dict[str, float]:
        return self.held.holds(event_id)

