"""The shards strategy's seats: shard and marker items, their keys, how seats are read and
where an order's seats are placed. docs/strategies/shards.md describes the items.
"""
from __future__ import annotations

import itertools
import math
import random
import threading
import time
from collections import Counter
from concurrent.futures import Future
from collections.abc import Callable, Hashable, Iterable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Generic, TypeVar

from booking.dynamo.access import Table, TransactionCancelled
from booking.dynamo.expressions import Actions, attr, projection
from booking.dynamo.expressions import Member, Update
from booking.models import CAPACITY_QUOTA, Event, Order
from booking.strategies.base import expired_holder, order_full, quota_order
from booking.strategies.base import hint_key
from booking.strategies.parts import ShardCounts

if TYPE_CHECKING:  # for types only (typeshed's, not at run time)
    from _typeshed import SupportsRichComparison

R = TypeVar("R")  # what a shared read answers

SHARDS = 8  # a quota's shards unless its event expects more arrivals a second
BOOKINGS_PER_SHARD = 400  # a shard takes 2 of its 1,000 WCU a second per booking: at 80%
MAX_SHARDS = 64  # a read takes the marker and every shard in one TransactGetItems (100)
MARKERS = 4  # the marker and its copies: 4 x 3,000 rejections a second read from them
FOREVER = 2**62
NEW = attr("event_id").not_exists()
EXISTS = attr("event_id").exists()
VERSION, COUNT, CAPACITY, EPOCH = attr("version"), attr("confirmed_count"), attr("capacity"), attr("epoch")
BUMP = Actions().set(VERSION, VERSION.plus(1))  # every write of a shard: the repair's check
SEATS = projection("event_id", "capacity", "confirmed_count", "holds", "hold_seats")  # as read
# On every freed seat: the marker's epoch bumped, and its marks and its copies' removed.
UNMARK = Actions().remove("full_until", "full_quotas")
FREED = Actions().set(EPOCH, EPOCH.plus(1)) + UNMARK
ROOM_FOR_ONE = EXISTS & COUNT.lt(CAPACITY)
# A condition cannot add: :room is the shard's capacity as guessed or read, less the seats.


def several_seats(event: Event) -> bool:
    """Whether an order may take several seats or a further quota's (docs: the shards)."""
    return bool(event.quotas) or event.max_per_order > 1


def shards_for(event: Event) -> int:
    """A new event's shards per quota: ``SHARDS``, or for orders of one seat one per
    ``BOOKINGS_PER_SHARD`` arrivals a second it expects (``MAX_SHARDS`` at most)."""
    if not event.expected_rate or several_seats(event):
        return SHARDS
    return min(MAX_SHARDS, max(SHARDS, math.ceil(event.expected_rate / BOOKINGS_PER_SHARD)))


def shard_key(event_id: str, shard: int, quota: str = CAPACITY_QUOTA) -> dict:
    """A quota's shard: the capacity's ``<event id>#<n>``, others ``<event id>#<quota>#<n>``."""
    return {"event_id": f"{hint_key(event_id, quota)}#{shard}"}


def marker_key(event_id: str, copy: int = 0) -> dict:  # copy 0: the marker, with the epoch
    return {"event_id": f"{event_id}#meta" + (f"-{copy}" if copy else "")}


def any_marker_key(event_id: str) -> dict:  # at random: rejections spread their reads
    return marker_key(event_id, random.randrange(MARKERS))


def shares(capacity: int, counts: list[int]) -> list[int]:  # count + an even share of the free
    free = capacity - sum(counts)
    return [count + free // len(counts) + (1 if n < free % len(counts) else 0)
            for n, count in enumerate(counts)]


def new_items(event: Event, count: int, *, empty: bool = False) -> list[dict]:
    """A new event's marker and ``count`` shards per quota, sharing its size (``empty``: none
    of it, for a repair's fix to share); with ``hold_seats`` where holds may be of orders."""
    orders: dict = {"hold_seats": {}} if several_seats(event) and not empty else {}
    return [{**marker_key(event.id), "epoch": 0, **({"shards": count} if count != SHARDS else {})},
            *({**shard_key(event.id, n, quota), "capacity": 0 if empty else share,
               "confirmed_count": 0, "holds": {}, **orders, "version": 1}
              for quota, size in event.quota_capacities().items()
              for n, share in enumerate(shares(size, [0] * count)))]


def take_op(locks: Table, event_id: str, quota: str, n: int, taken: int,
            capacity: int) -> Update:
    """The update taking ``taken`` seats of a shard whose capacity was guessed or read."""
    room = ROOM_FOR_ONE if taken == 1 else (
        EXISTS & CAPACITY.ge(capacity) & COUNT.le(capacity - taken))
    return Update(locks, shard_key(event_id, n, quota),
                  Actions().set(COUNT, COUNT.plus(taken)) + BUMP, room)


def take_over_op(locks: Table, event_id: str, shard: int, holder: str, now: float) -> Update:
    """The update taking the seat of ``holder``'s lapsed hold of one seat (the count stays)."""
    lapsed = attr("holds", holder)
    return Update(locks, shard_key(event_id, shard), Actions().remove(lapsed) + BUMP,
                  lapsed.le(now))


def member(quota: str, shard: int) -> str:
    return f"shard:{quota}:{shard}"  # a shard's name among a transaction's members


def shard_of(name: str) -> tuple[str, int]:
    _, quota, shard = name.split(":")  # ``member``'s reverse
    return quota, int(shard)


def freed_ops(locks: Table, event_id: str) -> list[tuple[str, Member]]:
    """The marker's epoch bumped (only while the event exists) and every mark removed."""
    return [("marker", Update(locks, marker_key(event_id), FREED, EXISTS)),
            *[(f"marker:{copy}", Update(locks, marker_key(event_id, copy), UNMARK))
              for copy in range(1, MARKERS)]]


def mark_update(marks: dict[str, int], marker: dict) -> Actions:
    """The update marking ``marks`` (quota -> until when sold out; 0: it is not), keeping
    the ``marker``'s others."""
    further = {q: until for q, until in marks.items() if q != CAPACITY_QUOTA}
    return (Actions().set("full_until", marks.get(CAPACITY_QUOTA, marker.get("full_until", 0)))
            .set("full_quotas", {**(marker.get("full_quotas") or {}), **further}))


def marked(marker: dict, quota: str) -> int:  # until when the quota is sold out (0: not)
    if quota == CAPACITY_QUOTA:
        return marker.get("full_until", 0)
    return (marker.get("full_quotas") or {}).get(quota, 0)


@dataclass(frozen=True)
class Snapshot:
    """The marker and every shard of one quota as one TransactGetItems read them."""

    marker: dict | None
    shards: list[dict | None]

    @property
    def complete(self) -> bool:  # else the event does not exist, or not whole
        return self.marker is not None and None not in self.shards

    def room(self) -> dict[int, int]:  # shard -> its free seats, for shards with any
        return {n: item["capacity"] - item["confirmed_count"] for n, item in enumerate(self.shards)
                if item and item["capacity"] > item["confirmed_count"]}

    def dry(self) -> list[int]:
        return [n for n, item in enumerate(self.shards)
                if item and item["confirmed_count"] >= item["capacity"]]

    def expired_hold(self, now: float) -> tuple[int, str] | None:
        """(shard, e-mail) of a lapsed hold of one seat (a seat a write may take over)."""
        return next(((n, holder) for n, item in enumerate(self.shards)
                     if (holder := expired_holder(item, now)) is not None), None)

    def full_until(self) -> int:
        """How long a sold-out mark from this read may hold: until the first hold lapses."""
        return min((until for item in self.shards
                    for until in ((item or {}).get("holds") or {}).values()), default=FOREVER)


def snapshots(strategy: ShardCounts, event_id: str, quotas: list[str]) -> dict[str, Snapshot]:
    """The marker and every shard of ``quotas`` in one TransactGetItems (one instant)."""
    count = strategy.shard_count(event_id)
    found = strategy.store.transact_get([(strategy.locks, marker_key(event_id)), *(
        (strategy.locks, shard_key(event_id, n, quota))
        for quota in quotas for n in range(count))])
    return {quota: Snapshot(found[0], found[1 + i * count:1 + (i + 1) * count])
            for i, quota in enumerate(quotas)}


def settled_snapshots(strategy: ShardCounts, event_id: str,
                      quotas: list[str]) -> dict[str, Snapshot]:
    """``snapshots``, read again while a write transaction is landing on one of its items."""
    for _ in strategy.retry.attempts():
        try:
            return snapshots(strategy, event_id, quotas)
        except TransactionCancelled as cancelled:
            if not cancelled.conflict:
                raise
    raise AssertionError("unreachable: attempts() raises when spent")


def quota_shard_items(strategy: ShardCounts,
                      wanted: dict[str, list[str]]) -> dict[str, dict[str, list]]:
    """Event id -> quota -> its shards, for ``wanted`` (event id -> quotas), in one batch;
    events without shards left out."""
    counts = strategy.shard_counts(list(wanted))
    keys = [(event_id, quota, shard_key(event_id, n, quota)) for event_id, quotas in wanted.items()
            for quota in quotas for n in range(counts[event_id])]
    found = strategy.locks.batch_get([key for _, _, key in keys], projection=SEATS)
    by_event: dict[str, dict[str, list[dict]]] = {}
    for (event_id, quota, _), item in zip(keys, found):
        by_event.setdefault(event_id, {}).setdefault(quota, []).extend([item] if item else [])
    return {event_id: quotas for event_id, quotas in by_event.items() if quotas[CAPACITY_QUOTA]}


def as_counter(shards: list[dict]) -> dict:
    """A quota's shards summed into one counter item (``holds.availability_of``'s shape)."""
    holds: dict = {}
    hold_seats: dict = {}
    for item in shards:
        holds.update(item.get("holds") or {})
        for email, part in (item.get("hold_seats") or {}).items():
            hold_seats[email] = dict(Counter(hold_seats.get(email)) + Counter(part))
    return {"capacity": sum(i["capacity"] for i in shards),
            "confirmed_count": sum(i["confirmed_count"] for i in shards), "holds": holds,
            "hold_seats": hold_seats}


# --- where an order's seats go: quota -> shard -> (seats, the shard's capacity) -------
Plan = dict[str, dict[int, tuple[int, int]]]


def place(order: Order, seen: dict[str, Snapshot]) -> Plan:
    """The order over the shards as read: per quota, one shard with room for its seats
    (weighted by free seats: bookings that read together spread out), else the shards
    with the most room; ``EventFull`` naming the first quota whose shards lack room."""
    plan: Plan = {}
    for quota in quota_order(order):
        room, need = seen[quota].room(), order.seats[quota]
        fits = [n for n in room if room[n] >= need]
        parts = ({random.choices(fits, weights=[room[n] for n in fits])[0]: need} if fits
                 else split(need, room))
        if parts is None:
            raise order_full(order, quota)
        capacity = {n: item["capacity"] for n, item in enumerate(seen[quota].shards) if item}
        plan[quota] = {n: (taken, capacity[n]) for n, taken in parts.items()}
    return plan


def split(need: int, room: dict[int, int],
          by: Callable[[int], SupportsRichComparison] | None = None) -> dict[int, int] | None:
    """``need`` seats over the shards with the most ``room`` (or in the order ``by``
    sorts them); None when there is not enough of it."""
    parts = {}
    for n in sorted(room, key=by or (lambda n: (-room[n], random.random()))):
        if need and room[n]:
            parts[n], need = min(need, room[n]), need - min(need, room[n])
    return None if need else parts


def taken(plan: Plan) -> dict[str, dict[int, int]]:  # quota -> shard -> seats
    return {quota: {n: part[0] for n, part in shards.items()} for quota, shards in plan.items()}


def stored(placed: dict[str, dict[int, int]], key: str = "shard_seats") -> dict:
    """As stored: ``{"shard": n}`` for one seat of the capacity (its hold may be taken over
    once lapsed), else ``{key: seat_map(placed)}``."""
    if list(placed) == [CAPACITY_QUOTA] and list(placed[CAPACITY_QUOTA].values()) == [1]:
        return {"shard": next(iter(placed[CAPACITY_QUOTA]))}
    return {key: seat_map(placed)}


def seat_map(placed: dict[str, dict[int, int]]) -> dict:
    """Quota -> shard (as text) -> seats, the shards without seats left out."""
    return {quota: {str(n): seats for n, seats in shards.items() if seats}
            for quota, shards in placed.items() if any(shards.values())}


def placed_on(item: dict, key: str = "shard_seats") -> dict[str, dict[int, int]]:
    """Quota -> shard -> seats of a stored placement (``stored``'s reverse)."""
    if item.get("shard") is not None:
        return {CAPACITY_QUOTA: {int(item["shard"]): 1}}
    return {quota: {int(n): int(seats) for n, seats in shards.items()}
            for quota, shards in (item.get(key) or {}).items()}


@dataclass(frozen=True)
class Hint:
    """Shards this process saw dry lately: where a first try should not go."""

    dry: frozenset = frozenset()
    turn: int | None = None  # this booking's turn in the process's rotation over shards

    def pick(self, among: list[int]) -> int:
        """The shard of ``among`` whose turn it is (at random without a turn)."""
        return random.choice(among) if self.turn is None else among[self.turn % len(among)]


@dataclass
class DryShards:
    """Per hint key, the shards this process saw dry in the last ``seconds``: a hint that
    spares a dry shard's refused write, never an answer."""

    seconds: float = 5.0
    seen: dict = field(default_factory=dict)  # key -> (frozenset of shards, when)
    turns: dict = field(default_factory=dict)  # key -> its rotation (from a random start)

    def get(self, key: str) -> Hint:
        dry, when = self.seen.get(key, (frozenset(), 0.0))
        return Hint(dry if time.monotonic() - when < self.seconds else frozenset())

    def next_turn(self, key: str) -> Hint:
        """``get`` with this booking's turn (each process starts at a random point)."""
        if key not in self.turns:
            if len(self.turns) > 1000:
                self.turns.clear()
            self.turns.setdefault(key, itertools.count(random.randrange(1 << 16)))
        return Hint(self.get(key).dry, turn=next(self.turns[key]))

    def note(self, key: str, shards: Iterable[int], *, replace: bool = False) -> None:
        earlier = frozenset() if replace else self.get(key).dry
        self.seen[key] = (earlier | frozenset(shards), time.monotonic())


class SharedReads(Generic[R]):
    """One snapshot in flight per key in this process: a booking joins a read that started
    after its refusal instead of sending its own; a read that failed is not shared."""

    def __init__(self, clock: Callable[[], float] = time.monotonic,
                 wait_seconds: float = 5.0) -> None:
        self.clock, self.wait_seconds = clock, wait_seconds
        self._lock = threading.Lock()
        self._flights: dict[Hashable, tuple[float, Future[R]]] = {}  # key -> (started, its result)

    def read(self, key: Hashable, since: float, read: Callable[[], R]) -> R:
        """``read()``'s result from a call started at or after ``since`` (own or joined)."""
        with self._lock:
            started, found = self._flights.get(key, (-math.inf, None))
            flight = found if found is not None and started >= since else Future()
            if flight is not found:
                self._flights[key] = (self.clock(), flight)
        if flight is found:
            try:
                return flight.result(self.wait_seconds)
            except Exception:  # the shared read failed or is late: read for this booking
                return read()
        try:
            flight.set_result(read())
        except BaseException as error:
            flight.set_exception(error)
            raise
        finally:
            with self._lock:
                if self._flights.get(key, (0, None))[1] is flight:
                    del self._flights[key]
        return flight.result()
