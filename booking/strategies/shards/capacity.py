"""The shards strategy's event-wide writes: the sold-out mark, capacity edits (version-checked)
and deletes.

A capacity edit reads every shard, gives each its count plus an even share of the new free
seats, and writes the event item (only at the version the organizer read, bumping it),
every shard (each only if its count still fits its new share) and the marker (a raised
capacity frees seats) in one TransactWriteItems. A booking that lands in between refuses
the write, which is then redone from a new read. An event with orders resizes its
further quotas the same way, in the same transaction (``quotas``: name -> seats).
"""
import dataclasses

from booking.dynamo.access import TransactionCancelled
from booking.errors import EventNotFound, InvalidBooking
from booking.models import CAPACITY_QUOTA

from booking.strategies import event_edits
from booking.strategies.base import AGAIN, CAPACITY_NAMES, refused_at
from booking.strategies.shards import seats
from booking.strategies.shards.seats import marker_key, quota_shard_key


def mark_sold_out(strategy, event_id: str, seen: seats.Snapshot) -> None:
    """Mark the event sold out, as ``seen`` (no seat anywhere), on the marker and its
    copies, unless a seat was freed since: every freeing write bumps the epoch, so the mark
    is refused then."""
    try:
        strategy.store.transact_write(seats.mark_ops(
            strategy.locks, event_id, "SET full_until = :until", {":until": seen.full_until()},
            seen.marker["epoch"]))
    except TransactionCancelled:
        pass  # a seat was freed (or a write was landing): the next rejection reads again


def change_capacity(strategy, event_id, *, expected_version, capacity, changes, quotas=None):
    """Resize the capacity quota, and each of ``quotas`` (name -> seats) of an event with
    orders, in one transaction with the version check; never below a quota's seats taken."""
    sizes = {CAPACITY_QUOTA: capacity, **(quotas or {})}
    update = _event_update(expected_version, capacity, changes, quotas or {})

    def decode(cancelled):
        if refused_at(cancelled, 0):
            old = cancelled.reasons[0].old_item
            raise (event_edits.stale_or_missing(old, expected_version)
                   or _unknown_quota(old, quotas)) from None
        if refused_at(cancelled, 1):
            raise EventNotFound() from None
        return AGAIN  # a shard's count moved since it was read: read again

    for _ in strategy.retry.attempts():
        seen = seats.settled_snapshot(strategy, event_id, sorted(sizes))
        if not all(snapshot.complete for snapshot in seen.values()):
            event = strategy.events.get({"event_id": event_id},
                                        projection="version, quota_capacities")
            raise (event_edits.stale_or_missing(event, expected_version)
                   or _unknown_quota(event, quotas) or EventNotFound())
        operations = [
            ("Update", strategy.events.update_op({"event_id": event_id}, update.expression,
                                                 **update.kwargs())),
            *seats.freed_ops(strategy.locks, event_id),
        ]
        for quota, size in sorted(sizes.items()):
            counts = [item["confirmed_count"] for item in seen[quota].shards]
            if sum(counts) > size:
                raise (event_edits.below_confirmed(sum(counts)) if quota == CAPACITY_QUOTA
                       else _below_taken(quota, sum(counts)))
            operations += [("Update", strategy.locks.update_op(
                quota_shard_key(event_id, quota, n), f"SET #capacity = :capacity, {seats.BUMP}",
                condition="confirmed_count <= :capacity", names=CAPACITY_NAMES,
                values={":capacity": share, ":one": 1}))
                for n, share in enumerate(seats.shares(size, counts))]
        if strategy.transact_once(operations, written=None, decode=decode) is not AGAIN:
            return


def _event_update(expected_version, capacity, changes, quotas) -> event_edits.EventUpdate:
    """The version-checked event write, also setting each resized quota's size (only a
    quota the event has)."""
    update = event_edits.event_update(expected_version=expected_version, capacity=capacity,
                                      changes=changes)
    names, values, sets, exists = dict(update.names), dict(update.values), [], []
    for number, (quota, size) in enumerate(sorted(quotas.items())):
        names[f"#q{number}"], values[f":q{number}"] = quota, size
        sets.append(f"quota_capacities.#q{number} = :q{number}")
        exists.append(f"attribute_exists(quota_capacities.#q{number})")
    if not sets:
        return update
    return dataclasses.replace(
        update, expression=update.expression.replace("SET ", "SET " + ", ".join(sets) + ", ", 1),
        condition=" AND ".join([update.condition, *exists]), names=names, values=values)


def _unknown_quota(event: dict | None, quotas: dict | None) -> InvalidBooking | None:
    unknown = sorted(set(quotas or {}) - set((event or {}).get("quota_capacities") or {}))
    if event is None or not unknown:
        return None
    return InvalidBooking(f"This event has no quota {unknown[0]!r}.", field="quotas")


def _below_taken(quota: str, taken: int) -> InvalidBooking:
    return InvalidBooking(f"{taken} seat(s) of {quota!r} are taken, so it cannot be lower than "
                          "that. Cancel orders first if you need fewer.", field="quotas")


def delete(strategy, event_id, quotas=()):
    # The shards first: without them every booking fails, so nothing new arrives.
    count = strategy.shard_count(event_id)
    for quota in (CAPACITY_QUOTA, *quotas):
        for shard in range(count):
            strategy.locks.delete(quota_shard_key(event_id, quota, shard))
    strategy.registrations_table.delete_partition(event_id)
    for copy in range(seats.MARKERS):
        strategy.locks.delete(marker_key(event_id, copy))
    strategy.events.delete({"event_id": event_id})
