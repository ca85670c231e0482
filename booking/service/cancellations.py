"""Cancellations per event: the rider every cancellation carries, and its counts read back.

The counting itself is ``booking/exactly_once/cancellations.py`` (inside each
cancellation's own write); this module hands out the rider, reads an event's counter
items (one BatchGetItem for many events) and deletes them with the event.
"""
from dataclasses import dataclass

from booking.dynamo.access import Store
from booking.dynamo.tables import EVENT_LOCKS
from booking.exactly_once.cancellations import (ORDERS, SEATS, SHARDS, CancellationCount,
                                                shard_key)

BATCH_KEYS = 100  # keys one BatchGetItem reads at most


@dataclass(frozen=True)
class Cancelled:
    """An event's cancellations so far: whole ``orders``, and ``seats`` (a part's too)."""

    orders: int = 0
    seats: int = 0


class Cancellations:
    """The events' cancellation counts, kept on ``SHARDS`` items each in the event-locks
    table (beside the strategies' per-event counts)."""

    def __init__(self, store: Store) -> None:
        self.table = store.table(EVENT_LOCKS)
        self.store = store

    def rider(self, request_id: str) -> CancellationCount:
        """The member a cancellation with ``request_id`` adds to its write."""
        return CancellationCount(self.table, request_id)

    def counts(self, event_ids: list[str]) -> dict[str, Cancelled]:
        """Each event's cancellations (``Cancelled()`` for none yet), read consistently in
        one BatchGetItem per ``BATCH_KEYS`` counter items."""
        event_ids = list(dict.fromkeys(event_ids))  # a key twice in a batch is refused
        keys = [(self.table, shard_key(event_id, shard))
                for event_id in event_ids for shard in range(SHARDS)]
        found: dict[str, Cancelled] = {event_id: Cancelled() for event_id in event_ids}
        for start in range(0, len(keys), BATCH_KEYS):
            batch = keys[start:start + BATCH_KEYS]
            for (_, key), item in zip(batch, self.store.batch_get(batch)):
                if item is not None:
                    event_id = key["event_id"].rsplit("#", 1)[0]
                    old = found[event_id]
                    found[event_id] = Cancelled(old.orders + int(item.get(ORDERS, 0)),
                                                old.seats + int(item.get(SEATS, 0)))
        return found

    def forget_event(self, event_id: str) -> None:
        """Delete the event's counter items (with the event)."""
        for shard in range(SHARDS):
            self.table.delete(shard_key(event_id, shard))
