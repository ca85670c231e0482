"""Audit and repair for the shards strategy: each shard must count the seats placed and
held on it, and a quota's shards add up to its size. docs/strategies/shards.md#audit.
"""
from __future__ import annotations

from collections import Counter
from contextlib import suppress

from booking.dynamo.access import ConditionFailed, TransactionCancelled
from booking.dynamo.expressions import Actions, attr, projection
from booking.dynamo.expressions import Members, Op, Update
from booking.models import CAPACITY_QUOTA, Event
from booking.strategies import audit, event_edits
from booking.strategies.holds import held_seats
from booking.strategies.shards import seats
from booking.strategies.shards.seats import (NEW, SHARDS, marker_key, member, placed_on, shard_key,
                                            shards_for)
from booking.strategies.parts import ShardsParts

PLACEMENT = projection("email", "shard", "tickets", "shard_seats")
SIZES = projection("capacity", "version", "quota_capacities")


def stored(strategy: ShardsParts, event_id: str) -> dict[str, tuple]:
    """E-mail key -> (tickets, quota -> shard -> seats) of every registration, page by page."""
    return {item["email"]: (item.get("tickets"), placed_on(item))
            for item in strategy.registrations_table.query(
                key_condition=attr("event_id").eq(event_id), projection=PLACEMENT)}


def expected_counts(people: dict, quota: str, shards: list) -> list[int]:
    """Each shard's count: the seats placed on it, plus those its holds take (every hold,
    a lapsed one too, until it is released: an order's, its part of the order)."""
    on_shard: Counter = Counter()
    for _, placed in people.values():
        on_shard.update(placed.get(quota, {}))
    return [on_shard[n] + held_seats(item, quota=quota)[quota] for n, item in enumerate(shards)]


def quota_shards(strategy: ShardsParts, event_id: str, quota: str) -> list[dict | None]:
    """The quota's shards (None: missing), read consistently in one batch."""
    return strategy.locks.batch_get([shard_key(event_id, n, quota)
                                     for n in range(strategy.shard_count(event_id))])


def audit_event(strategy: ShardsParts, event: Event) -> list[audit.Violation]:
    people, found = stored(strategy, event.id), []
    placed: Counter = Counter()
    held: Counter = Counter()
    if strategy.locks.get(marker_key(event.id)) is None:
        found.append(audit.Violation(event.id, audit.LOCK_PRESENT, "present", "missing",
                                     "the sold-out marker item"))
    for quota, size in _quotas(event).items():
        shards = quota_shards(strategy, event.id, quota)
        counts = expected_counts(people, quota, shards)
        placed[quota] = sum(counts)
        for item in shards:
            held += held_seats(item, quota=quota)
        found += _shard_violations(event.id, quota, size, shards, counts)
    # the seats placed on the further quotas' shards are what the tickets and holds take
    taken = audit.seats_taken(event, [tickets for tickets, _ in people.values()]) + held
    return (audit.capacity_violation(event.id, event.capacity, placed[CAPACITY_QUOTA]) + found
            + audit.quota_violations(event, taken, dict(placed))
            + audit.person_violations(event.id, list(people)))


def _quotas(event: Event) -> dict[str, int]:
    """Every quota's size, the capacity first, then by name."""
    return {CAPACITY_QUOTA: event.capacity, **dict(sorted(event.quotas.items()))}


def _where(quota: str) -> str:
    return "" if quota == CAPACITY_QUOTA else f"quota {quota} "


def _shard_violations(event_id: str, quota: str, size: int, shards: list[dict | None],
                      counts: list[int]) -> list[audit.Violation]:
    """Each shard present, numbered, counting what is placed on it; the shares add up."""
    found, where = [], _where(quota)
    counter = audit.COUNTER if quota == CAPACITY_QUOTA else audit.QUOTA_COUNTER
    for n, (item, count) in enumerate(zip(shards, counts)):
        if item is None:
            found.append(audit.Violation(event_id, audit.LOCK_PRESENT, "present", "missing",
                                         f"{where}shard {n}: bookings on it fail until it exists"))
            continue
        found += audit.version_violation(event_id, item, f"{where}shard {n}")
        if item.get("confirmed_count") != count:
            found.append(audit.Violation(event_id, counter, count, item.get("confirmed_count"),
                                         f"{where}shard {n} count"))
    shared = sum((item or {}).get("capacity", 0) for item in shards)
    if shared != size:
        found.append(audit.Violation(event_id, audit.LOCK_CAPACITY, size, shared,
                                     f"the {where}shards' capacities add up to"))
    return found


def repair_event(strategy: ShardsParts, event: Event) -> list[str]:
    if strategy.events.get({"event_id": event.id}, projection=projection("event_id")) is None:
        return []
    fixed = _recreate_missing(strategy, event)
    for quota in _quotas(event):
        fixed += _repair_quota(strategy, event.id, quota)
    return fixed


def _repair_quota(strategy: ShardsParts, event_id: str, quota: str) -> list[str]:
    """Every shard's count from the registrations and holds, and its share of the size."""
    for _ in strategy.retry.attempts():
        current = strategy.events.get({"event_id": event_id}, projection=SIZES)
        read = quota_shards(strategy, event_id, quota)
        shards = [item for item in read if item is not None]
        if current is None or len(shards) < len(read):
            return []
        bad = [n for n, item in enumerate(shards) if audit.version_violation(event_id, item)]
        for n in bad:
            audit.fix_version(strategy.locks, shard_key(event_id, n, quota), shards[n])
        if bad:
            continue
        size = current["capacity"] if quota == CAPACITY_QUOTA else (
            current.get("quota_capacities") or {}).get(quota)
        if size is None:
            return []
        counts = expected_counts(stored(strategy, event_id), quota, shards)
        capacities = seats.shares(size, counts) if sum(counts) <= size else counts
        before = ([i["confirmed_count"] for i in shards], [i["capacity"] for i in shards])
        if before == (counts, capacities):
            return []
        try:
            strategy.store.transact_write(_fix(strategy, event_id, quota, shards, counts,
                                               capacities, current, size))
        except TransactionCancelled:
            continue  # a booking, cancellation or edit landed while counting: again
        return [f"{_where(quota)}shard counts {before[0]} -> {counts}, "
                f"capacities {before[1]} -> {capacities}"]
    return []


def _fix(strategy: ShardsParts, event_id: str, quota: str, shards: list[dict], counts: list[int],
         capacities: list[int], current: dict, size: int) -> list[Op]:
    """Every shard's write, valid only if no shard and not the event changed since read."""
    return Members([
        *[(member(quota, n), Update(
            strategy.locks, shard_key(event_id, n, quota),
            Actions().set("confirmed_count", count).set("capacity", capacity) + seats.BUMP,
            attr("version").eq(item["version"])))
          for n, (item, count, capacity) in enumerate(zip(shards, counts, capacities))],
        *seats.freed_ops(strategy.locks, event_id),
        ("event", event_edits.size_as_read(strategy.events, event_id, quota, size,
                                           current["version"])),
    ]).operations


def _recreate_missing(strategy: ShardsParts, event: Event) -> list[str]:
    """Put a missing marker or shard (no capacity yet: the fix gives it its share). The
    event's shards: as its marker says, or, the marker lost, as chosen at its creation."""
    marker = strategy.locks.get(marker_key(event.id))
    count = int(marker.get("shards", SHARDS)) if marker else shards_for(event)
    wanted = seats.new_items(event, count, empty=True)
    present = strategy.locks.batch_get([{"event_id": item["event_id"]} for item in wanted])
    fixed = []
    for item in (item for item, found in zip(wanted, present) if found is None):
        with suppress(ConditionFailed):  # put meanwhile
            strategy.locks.put(item, condition=NEW)
            fixed.append(f"{item['event_id']} recreated")
    return fixed
