"""What the strategies' helper modules (audits, capacity changes, seats) reach on the
strategy they are given, as protocols: the helpers live below their strategy's package
module (which imports them), so they name what they use instead of importing the class.
"""
from collections.abc import Callable
from typing import Protocol, TypeVar

from booking.dynamo.access import Store, Table
from booking.dynamo.expressions import Member, Members, Refusal
from booking.strategies.base import RetryPolicy, TryAgain

T = TypeVar("T")
D = TypeVar("D")


class Retries(Protocol):
    store: Store
    retry: RetryPolicy
    events: Table


class Transacts(Retries, Protocol):
    """A strategy's one attempt at a transaction (``base.Strategy.transact_once``)."""

    def between_read_and_write(self) -> None: ...

    def transact_once(self, members: Members, *, written: T,
                      decode: Callable[[Refusal], D | TryAgain | None],
                      token: str | None = None) -> T | D | TryAgain: ...


class FreesSlots(Protocol):
    """What frees a slot: the store, and the epoch's bumps (``slots.freed``)."""

    store: Store

    def freed_ops(self, event_id: str) -> list[tuple[str, Member]]: ...


class SlotsParts(FreesSlots, Transacts, Protocol):
    """``slots.SlotsStrategy`` as its audit, capacity and freed epoch use it."""

    locks: Table
    slots: Table
    registrations_table: Table


class ShardCounts(Protocol):
    store: Store
    retry: RetryPolicy
    locks: Table

    def shard_count(self, event_id: str) -> int: ...

    def shard_counts(self, event_ids: list[str]) -> dict[str, int]: ...


class ShardsParts(ShardCounts, Transacts, Protocol):
    """``shards.ShardsStrategy`` as its audit, capacity and seats use it."""

    registrations_table: Table


class StreamsParts(Retries, Protocol):
    """``streams.StreamsStrategy`` as its audit uses it."""

    registrations_table: Table
    stale_pending_seconds: float

    def decider_running(self, now: float) -> bool: ...
