"""The shards strategy's event-wide writes: the sold-out mark, capacity edits (seed 001)
and deletes.

A capacity edit reads every shard, gives each its count plus an even share of the new free
seats, and writes the event item (only at the version the organizer read, bumping it),
every shard (each only if its count still fits its new share) and the marker (a raised
capacity frees seats) in one TransactWriteItems. A booking that lands in between refuses
the write, which is then redone from a new read.
"""
from booking.dynamo.access import ConditionFailed
from booking.errors import EventNotFound

from booking.strategies import event_edits
from booking.strategies.base import AGAIN, CAPACITY_NAMES, refused_at
from booking.strategies.shards import seats
from booking.strategies.shards.seats import SHARDS, marker_key, shard_key


def mark_sold_out(strategy, event_id: str, seen: seats.Snapshot) -> None:
    """Mark the event sold out, as ``seen`` (no seat anywhere), unless a seat was freed
    since: every freeing write bumps the epoch, so the mark is refused then."""
    try:
        strategy.locks.update(marker_key(event_id), "SET full_until = :until",
                              condition="epoch = :epoch",
                              values={":until": seen.full_until(), ":epoch": seen.marker["epoch"]})
    except ConditionFailed:
        pass  # a seat was freed (or the mark moved on): the next rejection reads again


def change_capacity(strategy, event_id, *, expected_version, capacity, changes):
    update = event_edits.event_update(expected_version=expected_version, capacity=capacity,
                                      changes=changes)

    def decode(cancelled):
        if refused_at(cancelled, 0):
            old = cancelled.reasons[0].old_item
            raise event_edits.stale_or_missing(old, expected_version) from None
        if refused_at(cancelled, 1):
            raise EventNotFound() from None
        return AGAIN  # a shard's count moved since it was read: read again

    for _ in strategy.retry.attempts():
        seen = seats.settled_snapshot(strategy, event_id)
        if not seen.complete:
            event = strategy.events.get({"event_id": event_id}, projection="version")
            raise event_edits.stale_or_missing(event, expected_version) or EventNotFound()
        counts = [item["confirmed_count"] for item in seen.shards]
        if sum(counts) > capacity:
            raise event_edits.below_confirmed(sum(counts))
        operations = [
            ("Update", strategy.events.update_op({"event_id": event_id}, update.expression,
                                                 **update.kwargs())),
            seats.freed_op(strategy.locks, event_id),
            *[("Update", strategy.locks.update_op(
                shard_key(event_id, n), f"SET #capacity = :capacity, {seats.BUMP}",
                condition="confirmed_count <= :capacity", names=CAPACITY_NAMES,
                values={":capacity": share, ":one": 1}))
              for n, share in enumerate(seats.shares(capacity, counts))],
        ]
        if strategy.transact_once(operations, written=None, decode=decode) is not AGAIN:
            return


def delete(strategy, event_id):
    # The shards first: without them every booking fails, so nothing new arrives.
    for shard in range(SHARDS):
        strategy.locks.delete(shard_key(event_id, shard))
    strategy.registrations_table.delete_partition(event_id)
    strategy.locks.delete(marker_key(event_id))
    strategy.events.delete({"event_id": event_id})
