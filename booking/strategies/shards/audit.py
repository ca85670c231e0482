"""Audit and repair for the shards strategy: each shard must count what is stored on it.

A registration names its shard, so each shard's ``confirmed_count`` must be the number of
registrations naming it plus its holds, and the shards' capacities must add up to the
event's. Every booking, cancellation and hold write bumps its shard's ``version``; the
repair counts page by page, then rewrites every shard in one transaction, each only if its
version is unchanged and the event's capacity too: if a booking landed while counting, the
write is refused and the count is redone.
"""
from collections import Counter

from booking.dynamo.access import ConditionFailed, TransactionCancelled
from booking.strategies import audit
from booking.strategies.base import CAPACITY_NAMES
from booking.strategies.shards import seats
from booking.strategies.shards.seats import SHARDS, marker_key, shard_key

FIX = "SET confirmed_count = :count, #capacity = :capacity, version = version + :one"


def stored(strategy, event_id) -> list[tuple[str, int | None]]:
    """(e-mail key, shard) of every stored registration, read page by page."""
    return [(item["email"], item.get("shard")) for item in strategy.registrations_table.query(
        key_condition="event_id = :e", values={":e": event_id}, projection="email, #shard",
        names={"#shard": "shard"})]  # a reserved word


def expected_counts(strategy, event_id, shards) -> list[int]:
    on_shard = Counter(shard for _, shard in stored(strategy, event_id))
    return [on_shard.get(n, 0) + len((item or {}).get("holds") or {})
            for n, item in enumerate(shards)]


def audit_event(strategy, event) -> list[audit.Violation]:
    shards = [strategy.locks.get(shard_key(event.id, n)) for n in range(SHARDS)]
    people = stored(strategy, event.id)
    counts = expected_counts(strategy, event.id, shards)
    found = audit.capacity_violation(event.id, event.capacity, sum(counts))
    if strategy.locks.get(marker_key(event.id)) is None:
        found.append(audit.Violation(event.id, audit.LOCK_PRESENT, "present", "missing",
                                     "the sold-out marker item"))
    for n, (item, count) in enumerate(zip(shards, counts)):
        if item is None:
            found.append(audit.Violation(event.id, audit.LOCK_PRESENT, "present", "missing",
                                         f"shard {n}: bookings on it fail until it exists"))
            continue
        found += audit.version_violation(event.id, item, f"shard {n}")
        if item.get("confirmed_count") != count:
            found.append(audit.Violation(event.id, audit.COUNTER, count,
                                         item.get("confirmed_count"), f"shard {n} count"))
    shared = sum((item or {}).get("capacity", 0) for item in shards)
    if shared != event.capacity:
        found.append(audit.Violation(event.id, audit.LOCK_CAPACITY, event.capacity, shared,
                                     "the shards' capacities add up to"))
    return found + audit.person_violations(event.id, [email for email, _ in people])


def repair_event(strategy, event) -> list[str]:
    key = {"event_id": event.id}
    if strategy.events.get(key, projection="event_id") is None:
        return []
    fixed = _recreate_missing(strategy, event.id)
    for _ in strategy.retry.attempts():
        current = strategy.events.get(key, projection="#capacity, version", names=CAPACITY_NAMES)
        shards = [strategy.locks.get(shard_key(event.id, n)) for n in range(SHARDS)]
        if current is None or None in shards:
            return fixed
        bad = [n for n, item in enumerate(shards) if not _numeric(item.get("version"))]
        for n in bad:
            audit.fix_version(strategy.locks, shard_key(event.id, n), shards[n])
        if bad:
            continue
        counts = expected_counts(strategy, event.id, shards)
        capacities = (seats.shares(current["capacity"], counts)
                      if sum(counts) <= current["capacity"] else counts)
        if ([i["confirmed_count"] for i in shards] == counts
                and [i["capacity"] for i in shards] == capacities):
            return fixed
        try:
            strategy.store.transact_write(_fix(strategy, event.id, shards, counts, capacities,
                                               current))
        except TransactionCancelled:
            continue  # a booking, cancellation or edit landed while counting: again
        return fixed + [f"shard counts {[i['confirmed_count'] for i in shards]} -> {counts}, "
                        f"capacities {[i['capacity'] for i in shards]} -> {capacities}"]
    return fixed


def _numeric(version) -> bool:
    return isinstance(version, int) and not isinstance(version, bool)


def _fix(strategy, event_id, shards, counts, capacities, current) -> list:
    """Every shard's write, valid only if no shard and not the event changed since read."""
    return [
        *[("Update", strategy.locks.update_op(
            shard_key(event_id, n), FIX, condition="version = :version", names=CAPACITY_NAMES,
            values={":count": count, ":capacity": capacity, ":one": 1,
                    ":version": item["version"]}))
          for n, (item, count, capacity) in enumerate(zip(shards, counts, capacities))],
        seats.freed_op(strategy.locks, event_id),
        # A ConditionCheck member has exactly the shape of a Delete member.
        ("ConditionCheck", strategy.events.delete_op(
            {"event_id": event_id}, condition="#capacity = :c AND version = :v",
            names=CAPACITY_NAMES, values={":c": current["capacity"], ":v": current["version"]})),
    ]


def _recreate_missing(strategy, event_id) -> list[str]:
    """Put a missing marker or shard (no capacity yet: the fix gives it its share)."""
    fixed = []
    wanted = [(marker_key(event_id), {"epoch": 0}, "marker item")] + [
        (shard_key(event_id, n), {"capacity": 0, "confirmed_count": 0, "holds": {},
                                  "version": 1}, f"shard {n}") for n in range(SHARDS)]
    for key, item, what in wanted:
        if strategy.locks.get(key) is not None:
            continue
        try:
            strategy.locks.put({**key, **item}, condition="attribute_not_exists(event_id)")
            fixed.append(f"{what} recreated")
        except ConditionFailed:
            pass
    return fixed
