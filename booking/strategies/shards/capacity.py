"""The shards strategy's event-wide writes: the sold-out mark, the order shape it can keep,
capacity and quota edits (version-checked) and deletes. docs/strategies/shards.md.
"""
from __future__ import annotations


from booking.dynamo.access import TransactionCancelled
from booking.exactly_once.riders import MOST_RIDER_MEMBERS
from booking.dynamo.expressions import Actions, projection
from booking.dynamo.expressions import MOST_MEMBERS, Members, Refusal, Update
from booking.errors import EventNotFound, InvalidBooking
from booking.models import CAPACITY_QUOTA, Event
from booking.strategies import event_edits
from booking.strategies.base import AGAIN, WriteAgain
from booking.strategies.shards import seats
from booking.strategies.shards.seats import (BUMP, COUNT, EPOCH, MARKERS, marker_key, member,
                                            shard_key)
from booking.strategies.parts import ShardsParts
# The registration, the marker and its copies, and the riders' members.
OTHER_MEMBERS = 1 + MARKERS + MOST_RIDER_MEMBERS


def check_order_shape(event: Event) -> None:
    """An order writes up to one shard per seat per quota it draws on, with the other
    members, in one transaction of at most ``MOST_MEMBERS``."""
    touched = 1 + len({quota for quotas in event.ticket_types.values() for quota in quotas})
    shards = seats.shards_for(event)
    if touched * min(shards, event.max_per_order) + OTHER_MEMBERS > MOST_MEMBERS:
        # Why (for developers): up to ``shards`` items per quota, in one transaction.
        raise InvalidBooking(f"Let each ticket type count against fewer quotas: an event set "
                             f"up for a ticket drop writes every quota of an order {shards} "
                             f"times in one write, which holds at most {MOST_MEMBERS}.",
                             field="ticket_types")


def mark_sold_out(strategy: ShardsParts, event_id: str, marks: dict[str, int],
                  marker: dict) -> None:
    """Mark ``marks`` (quota -> until) sold out on the marker and its copies, unless a seat
    was freed since ``marker`` was read: every freeing write bumps its epoch."""
    mark = seats.mark_update(marks, marker)
    try:
        strategy.store.transact_write([
            Update(strategy.locks, marker_key(event_id), mark, EPOCH.eq(marker["epoch"])),
            *[Update(strategy.locks, marker_key(event_id, copy), mark)
              for copy in range(1, MARKERS)]])
    except TransactionCancelled:
        pass  # a seat was freed (or a write was landing): the next rejection reads again


def change_capacity(strategy: ShardsParts, event: Event, *, expected_version: int, capacity: int,
                    changes: dict, quotas: dict[str, int] | None = None) -> None:
    """Every shard of the quotas resized in one transaction (docs: Capacity edits)."""
    unknown = sorted(set(quotas or {}) - set(event.quotas))  # an event's quotas never change
    if unknown:
        raise InvalidBooking(f"This event has no quota {unknown[0]!r}.", field="quotas")
    sizes = {CAPACITY_QUOTA: capacity, **(quotas or {})}
    update = event_edits.event_update(expected_version=expected_version, capacity=capacity,
                                      changes=changes, quotas=quotas)

    def decode(refusal: Refusal) -> WriteAgain:
        if refusal.refused("event") or refusal.refused("marker"):
            raise event_edits.stale_or_missing(refusal.old("event"), expected_version) or \
                EventNotFound() from None
        return AGAIN  # a shard's count moved since it was read: read again

    for _ in strategy.retry.attempts():
        seen = seats.settled_snapshots(strategy, event.id, sorted(sizes))
        if not all(snapshot.complete for snapshot in seen.values()):
            stored = strategy.events.get({"event_id": event.id}, projection=projection("version"))
            raise event_edits.stale_or_missing(stored, expected_version) or EventNotFound()
        members = Members([("event", Update(strategy.events, {"event_id": event.id},
                                            update.expression, update.condition)),
            *seats.freed_ops(strategy.locks, event.id)])
        for quota, size in sorted(sizes.items()):
            counts = [item["confirmed_count"] for item in seen[quota].shards if item]
            if sum(counts) > size:
                raise event_edits.below_taken(quota, sum(counts))
            for n, share in enumerate(seats.shares(size, counts)):
                members.add(member(quota, n), Update(
                    strategy.locks, shard_key(event.id, n, quota),
                    Actions().set("capacity", share) + BUMP, COUNT.le(share)))
        if strategy.transact_once(members, written=None, decode=decode) is not AGAIN:
            return


def delete(strategy: ShardsParts, event: Event) -> None:
    # The shards first: without them every booking fails, so nothing new arrives.
    count = strategy.shard_count(event.id)
    for quota in event.quota_capacities():
        for shard in range(count):
            strategy.locks.delete(shard_key(event.id, shard, quota))
    strategy.registrations_table.delete_partition(event.id)
    for copy in range(MARKERS):
        strategy.locks.delete(marker_key(event.id, copy))
    strategy.events.delete({"event_id": event.id})
