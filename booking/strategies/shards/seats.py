"""The shards strategy's seats: shard and marker items, their keys, and how seats are read.

An event's seats live in its shards: lock items of the lock table, keyed ``<event id>#<n>``,
each with its share of the capacity (``capacity``), ``confirmed_count`` (its attendees and
its waiting-list holds), ``holds`` and ``version``. The shares add up to the event's
capacity. How many an event has is chosen when it is created, from the arrivals a second
its organizer expects (``shards_for``: ``SHARDS`` at least, one more per
``BOOKINGS_PER_SHARD``), and kept on its marker (``shards``; an event stored before the
count was chosen has none there and ``SHARDS`` shards). The event's marker item,
``<event id>#meta``, carries ``epoch`` (bumped by every
write that frees a seat) and, while the event is sold out, ``full_until``: the epoch
milliseconds until which the mark holds (the earliest hold's expiry, or ``FOREVER``).

Every rejection of a sold-out event reads a mark, and one item gives at most 3,000 read
units a second. So the mark is kept on ``MARKERS`` items: the marker and its copies,
``<event id>#meta-<n>``. The mark is written to all of them in one transaction, only if
the marker's ``epoch`` is still the one read (``mark_ops``), and every write that frees a
seat bumps the epoch and removes the mark from all of them in its own transaction
(``freed_ops``): transactions are serializable, so a mark stands on a copy only while it
stands on the marker, and a reader may pick any copy (``any_marker_key``). A copy is
made by the first mark (a missing copy reads as "not marked": the booking writes).

An event with orders (``orders.py``) always has ``SHARDS`` shards, and as many per further quota,
keyed ``<event id>#<quota>#<n>`` (``quota_shard_key``; the capacity quota's are the
event's own), and its marker carries ``full_quotas`` (quota -> until) beside
``full_until``: every freeing write removes both. A shard holding its part of an order's
waiting-list hold stores it in ``hold_seats`` (e-mail key -> {quota: seats}; ``holds.py``),
which an event with orders' shards have from the start.
"""
import itertools
import math
import random
import threading
import time
from collections import Counter
from dataclasses import dataclass, field

from booking.dynamo.access import TransactionCancelled
from booking.models import CAPACITY_QUOTA
from booking.strategies.base import CAPACITY_NAMES

SHARDS = 8  # an event's shards unless it expects more arrivals (and any event with orders)
# A shard takes a booking's transactional write (2 WCU of its 1,000 a second): at 80% of it,
# 400 bookings a second. An event gets one shard per 400 arrivals a second it expects.
BOOKINGS_PER_SHARD = 400
MAX_SHARDS = 64  # a snapshot reads the marker and every shard in one TransactGetItems (100)
MARKERS = 4  # the marker and its copies: 4 x 3,000 rejections a second read from them
FOREVER = 2**62
BUMP = "version = version + :one"  # every write of a shard: the repair's check
SEATS = "event_id, #capacity, confirmed_count, holds, hold_seats"  # a shard's seats, as read
FREED = "SET epoch = epoch + :one REMOVE full_until, full_quotas"  # the marker, on every freed seat
UNMARK = "REMOVE full_until, full_quotas"  # its copies, on every freed seat


def shards_for(event) -> int:
    """The shards a new event gets: ``SHARDS``, or for a plain event expecting more arrivals
    a second than ``SHARDS`` shards carry, one per ``BOOKINGS_PER_SHARD`` (``MAX_SHARDS``
    at most)."""
    rate = getattr(event, "expected_rate", None)
    if not rate or not event.is_plain:
        return SHARDS
    return min(MAX_SHARDS, max(SHARDS, math.ceil(rate / BOOKINGS_PER_SHARD)))


def shard_key(event_id: str, shard: int) -> dict:
    return {"event_id": f"{event_id}#{shard}"}


def quota_shard_key(event_id: str, quota: str, shard: int) -> dict:
    """A quota's shard: the capacity quota's are the event's own (``shard_key``)."""
    if quota == CAPACITY_QUOTA:
        return shard_key(event_id, shard)
    return {"event_id": f"{event_id}#{quota}#{shard}"}


def marker_key(event_id: str, copy: int = 0) -> dict:
    """The marker (``copy`` 0: it carries the epoch), or one of its copies."""
    return {"event_id": f"{event_id}#meta" + (f"-{copy}" if copy else "")}


def any_marker_key(event_id: str) -> dict:
    """The marker or a copy, at random: rejections spread their reads over them."""
    return marker_key(event_id, random.randrange(MARKERS))


def shares(capacity: int, counts: list[int]) -> list[int]:
    """Each shard's capacity: its count, plus an even share of the free seats."""
    free = capacity - sum(counts)
    return [count + free // len(counts) + (1 if n < free % len(counts) else 0)
            for n, count in enumerate(counts)]


def shard_item(event_id: str, shard: int, capacity: int, count: int = 0, *,
               orders: bool = False) -> dict:
    """A new shard; of an event with orders, with the ``hold_seats`` its offers' holds of
    orders write (else the first such hold on it makes sure of the map first)."""
    return {**shard_key(event_id, shard), "capacity": capacity, "confirmed_count": count,
            "holds": {}, **({"hold_seats": {}} if orders else {}), "version": 1}


def freed_ops(locks, event_id: str) -> list[tuple[str, dict]]:
    """The marker's and its copies' updates for a write that frees a seat (a sold-out mark
    would lie): the marker first, only while the event exists."""
    return [("Update", locks.update_op(marker_key(event_id), FREED,
                                       condition="attribute_exists(event_id)",
                                       values={":one": 1})),
            *[("Update", locks.update_op(marker_key(event_id, copy), UNMARK))
              for copy in range(1, MARKERS)]]


def mark_ops(locks, event_id: str, expression: str, values: dict,
             epoch: int) -> list[tuple[str, dict]]:
    """The mark (``expression``: SET ``full_until`` or ``full_quotas``) on the marker, only
    at ``epoch`` (no seat freed since the read), and on every copy."""
    return [("Update", locks.update_op(marker_key(event_id), expression,
                                       condition="epoch = :epoch",
                                       values={**values, ":epoch": epoch})),
            *[("Update", locks.update_op(marker_key(event_id, copy), expression, values=values))
              for copy in range(1, MARKERS)]]


@dataclass(frozen=True)
class Snapshot:
    """The marker and every shard as one TransactGetItems read them (one instant)."""

    marker: dict | None
    shards: list[dict | None]

    @property
    def complete(self) -> bool:
        """The marker and every shard exist (else the event does not, or not whole)."""
        return self.marker is not None and None not in self.shards

    def free(self) -> list[int]:
        """Shards with a free seat, each listed once per free seat (a weighted pick)."""
        return [n for n, item in enumerate(self.shards) if item
                for _ in range(max(0, item["capacity"] - item["confirmed_count"]))]

    def dry(self) -> list[int]:
        return [n for n, item in enumerate(self.shards)
                if item and item["confirmed_count"] >= item["capacity"]]

    def expired_hold(self, now: float) -> tuple[int, str] | None:
        """(shard, e-mail) of a waiting-list hold that has expired, or None."""
        for n, item in enumerate(self.shards):
            for email, until in sorted(((item or {}).get("holds") or {}).items()):
                if until <= now:
                    return n, email
        return None

    def full_until(self) -> int:
        """How long a sold-out mark made from this read may hold: until a hold lapses."""
        untils = [until for item in self.shards for until in ((item or {}).get("holds") or {}).values()]
        return min(untils, default=FOREVER)


def snapshot(strategy, event_id: str) -> Snapshot:
    return quota_snapshots(strategy, event_id, [CAPACITY_QUOTA])[CAPACITY_QUOTA]


def quota_snapshots(strategy, event_id: str, quotas: list[str]) -> dict[str, Snapshot]:
    """The marker and every shard of each of ``quotas`` in one TransactGetItems (one
    instant; at most 1 + 8 x 11 = 89 of its 100 items with orders, 1 + ``MAX_SHARDS``
    without), as a ``Snapshot`` per quota."""
    count = strategy.shard_count(event_id)
    found = strategy.store.transact_get(
        [(strategy.locks, marker_key(event_id))]
        + [(strategy.locks, quota_shard_key(event_id, quota, n))
           for quota in quotas for n in range(count)])
    return {quota: Snapshot(found[0], found[1 + i * count:1 + (i + 1) * count])
            for i, quota in enumerate(quotas)}


def settled_snapshot(strategy, event_id: str, quotas: list[str] | None = None):
    """``snapshot`` (or, for ``quotas``, ``quota_snapshots``), read again while a write
    transaction is landing on one of its items."""
    for _ in strategy.retry.attempts():
        try:
            if quotas is None:
                return snapshot(strategy, event_id)
            return quota_snapshots(strategy, event_id, quotas)
        except TransactionCancelled as cancelled:
            if not cancelled.conflict:
                raise


def shard_items(strategy, event_ids: list[str]) -> dict[str, list[dict]]:
    """Every shard of each event (one consistent read per item, batched); events without
    shards left out."""
    counts = strategy.shard_counts(event_ids)
    keys = [shard_key(e, n) for e in event_ids for n in range(counts[e])]
    found = strategy.locks.batch_get(keys, projection=SEATS, names=CAPACITY_NAMES)
    by_event: dict[str, list[dict]] = {}
    for item in found:
        if item is not None:
            by_event.setdefault(item["event_id"].rsplit("#", 1)[0], []).append(item)
    return by_event


def quota_shard_items(strategy, event_id: str, quotas) -> dict[str, list[dict]]:
    """Quota -> its shards that exist (one consistent read per item, batched)."""
    count = strategy.shard_count(event_id)
    keys = [(quota, quota_shard_key(event_id, quota, n)) for quota in quotas for n in range(count)]
    found = strategy.locks.batch_get([key for _, key in keys], projection=SEATS,
                                     names=CAPACITY_NAMES)
    by_quota: dict[str, list[dict]] = {quota: [] for quota in quotas}
    for (quota, _), item in zip(keys, found):
        if item is not None:
            by_quota[quota].append(item)
    return by_quota


def as_counter(shards: list[dict]) -> dict:
    """One quota's shards summed into one counter item (``holds.availability_of``'s shape:
    an order's hold holds the seats of all its parts)."""
    holds, hold_seats = {}, {}
    for item in shards:
        holds.update(item.get("holds") or {})
        for email, part in (item.get("hold_seats") or {}).items():
            hold_seats[email] = dict(Counter(hold_seats.get(email)) + Counter(part))
    return {"capacity": sum(i["capacity"] for i in shards),
            "confirmed_count": sum(i["confirmed_count"] for i in shards), "holds": holds,
            "hold_seats": hold_seats}


@dataclass(frozen=True)
class Hint:
    """Shards this process saw dry lately (of ``shards``): where a booking's first try
    should not go."""

    dry: frozenset = frozenset()
    shards: int = SHARDS
    turn: int | None = None  # this booking's turn in the process's rotation over shards

    def every(self) -> bool:
        return len(self.dry) >= self.shards

    def pick(self, avoid: int | None = None) -> int:
        """The shard whose turn it is among those not seen dry (nor ``avoid``), or any
        when there is none; at random without a turn. Taking turns spreads a process's
        bookings evenly (at random, some shards would take twice their share in a second)."""
        wanted = [n for n in range(self.shards) if n not in self.dry and n != avoid]
        wanted = wanted or [n for n in range(self.shards) if n != avoid] or [0]
        return random.choice(wanted) if self.turn is None else wanted[self.turn % len(wanted)]


@dataclass
class DryShards:
    """Per event, the shards this process saw dry in the last ``seconds`` (a sold-out
    answer from the marker renews it): a hint that spares a booking a dry shard's refused
    write, never an answer (a stale hint costs one refused write or one read; every answer
    still comes from a write or a consistent read)."""

    seconds: float = 5.0
    seen: dict = field(default_factory=dict)  # event id -> (frozenset of shards, when)
    turns: dict = field(default_factory=dict)  # event id -> its rotation (from a random start)

    def get(self, event_id: str, shards: int = SHARDS) -> Hint:
        dry, when = self.seen.get(event_id, (frozenset(), 0.0))
        return Hint(dry if time.monotonic() - when < self.seconds else frozenset(), shards)

    def next_turn(self, event_id: str, shards: int = SHARDS) -> Hint:
        """``get`` with this booking's turn: a process's bookings of an event take the
        shards in turn, each process starting at its own random point."""
        if event_id not in self.turns:
            if len(self.turns) > 1000:
                self.turns.clear()
            self.turns.setdefault(event_id, itertools.count(random.randrange(1 << 16)))
        hint = self.get(event_id, shards)
        return Hint(hint.dry, hint.shards, turn=next(self.turns[event_id]))

    def note(self, event_id: str, shards, *, replace: bool = False) -> None:
        earlier = frozenset() if replace else self.get(event_id).dry
        self.seen[event_id] = (earlier | frozenset(shards), time.monotonic())


class SharedReads:
    """One snapshot in flight per event in this process: a booking that met a dry shard
    joins a snapshot that started after its refusal instead of sending its own. At the
    sell-out every booking in flight meets a dry shard at once, and each snapshot reads
    the marker and every shard (2 read units an item): shared, one process sends one.

    Joining is sound: the shared read started after this booking's refusal and ended
    before its answer, so what it saw held at an instant during the booking, as its own
    read would have. A read that failed is not shared (each booking reads for itself)."""

    def __init__(self, clock=time.monotonic, wait_seconds: float = 5.0):
        self.clock, self.wait_seconds = clock, wait_seconds
        self._lock = threading.Lock()
        self._flights: dict[str, _Flight] = {}

    def read(self, event_id: str, since: float, read):
        """``read()``'s result from a call that started at or after ``since`` (this
        process's clock), this thread's own call or one it joined."""
        with self._lock:
            flight = self._flights.get(event_id)
            joined = flight is not None and flight.started >= since
            if not joined:
                flight = self._flights[event_id] = _Flight(self.clock())
        if joined:
            if flight.done.wait(self.wait_seconds) and flight.failed is None:
                return flight.result
            return read()  # the shared read failed or is late: read for this booking
        try:
            flight.result = read()
        except BaseException as error:
            flight.failed = error
            raise
        finally:
            with self._lock:
                if self._flights.get(event_id) is flight:
                    del self._flights[event_id]
            flight.done.set()
        return flight.result


class _Flight:
    def __init__(self, started: float):
        self.started, self.done = started, threading.Event()
        self.result, self.failed = None, None
