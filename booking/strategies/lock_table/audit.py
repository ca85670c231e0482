"""Audit and repair for the lock-table strategy: the lock item must count what is stored.

Every booking and cancellation bumps the lock item's ``version`` in the same transaction
as the registration write. Repair therefore reads the lock item (and its version), counts
the registrations page by page, and writes the count only if the version is unchanged:
if a booking landed while counting, the write is refused and the count is redone.
"""
from booking.strategies import audit
from booking.dynamo.access import (CONDITION_FAILED as CCF, ConditionFailed,
                                   TransactionCancelled)
from booking.strategies.base import CAPACITY_NAMES
from booking.strategies.holds import held_seats
from booking.strategies.lock_table.orders import lock_key

FIX = "SET confirmed_count = :count, #capacity = :capacity, version = version + :one"


def stored_orders(strategy, event_id) -> dict:
    """E-mail key -> stored tickets (None: one seat) of every registration, page by page."""
    return {item["email"]: item.get("tickets") for item in strategy.registrations_table.query(
        key_condition="event_id = :e", values={":e": event_id}, projection="email, tickets")}


def audit_event(strategy, event) -> list[audit.Violation]:
    lock = strategy.locks.get({"event_id": event.id})
    quota_locks = _quota_locks(strategy, event)
    orders = stored_orders(strategy, event.id)
    emails, seats = list(orders), audit.seats_taken(event, orders.values())
    seats += held_seats(lock)  # waiting-list holds take seats, in every quota's lock item
    for quota, item in quota_locks.items():
        seats += held_seats(item, quota=quota)
    taken = seats["capacity"]
    found = audit.capacity_violation(event.id, event.capacity, taken)
    if lock is None:
        found.append(audit.Violation(event.id, audit.LOCK_PRESENT, "present", "missing",
                                     "bookings and cancellations fail until it exists"))
    else:
        found += audit.version_violation(event.id, lock, "lock item")
        if lock.get("capacity") != event.capacity:
            found.append(audit.Violation(event.id, audit.LOCK_CAPACITY, event.capacity,
                                         lock.get("capacity"), "lock item capacity"))
        if lock.get("confirmed_count") != taken:
            found.append(audit.Violation(event.id, audit.COUNTER, taken,
                                         lock.get("confirmed_count"), "lock item count"))
    for quota, item in quota_locks.items():
        if item is not None and item.get("capacity") != event.quotas[quota]:
            found.append(audit.Violation(event.id, audit.LOCK_CAPACITY, event.quotas[quota],
                                         item.get("capacity"), f"quota {quota} lock item capacity"))
    counted = {q: (item or {}).get("confirmed_count") for q, item in quota_locks.items()}
    found += audit.quota_violations(event, seats, counted)
    return found + audit.person_violations(event.id, emails)


def _quota_locks(strategy, event) -> dict:
    """Quota -> its lock item (None: missing), for the event's further quotas."""
    return {quota: strategy.locks.get(lock_key(event.id, quota)) for quota in sorted(event.quotas)}


def repair_quota_locks(strategy, event) -> list[str]:
    """Recount each further quota's lock item from the stored orders, only if the item is
    unchanged since read (its version, bumped by every order and cancellation)."""
    fixed = []
    for quota in sorted(event.quotas):
        key = lock_key(event.id, quota)
        for _ in strategy.retry.attempts():
            lock = strategy.locks.get(key)  # first: its version guards the count after it
            count = (audit.seats_taken(event, stored_orders(strategy, event.id).values())[quota]
                     + held_seats(lock, quota=quota)[quota])  # holds take seats too
            want = {"capacity": event.quotas[quota], "confirmed_count": count}
            try:
                if lock is None:
                    strategy.locks.put({**key, **want, "version": 1},
                                       condition="attribute_not_exists(event_id)")
                elif {k: lock.get(k) for k in want} != want:
                    strategy.locks.update(key, FIX, condition="version = :version",
                                          names=CAPACITY_NAMES,
                                          values={":count": count, ":capacity": want["capacity"],
                                                  ":one": 1, ":version": lock.get("version")})
                else:
                    break
            except ConditionFailed:
                continue  # an order or cancellation landed while counting: count again
            fixed.append(f"quota {quota} lock item confirmed_count "
                         f"{(lock or {}).get('confirmed_count')} -> {count}")
            break
    return fixed


def repair_event(strategy, event) -> list[str]:
    return _repair_capacity_lock(strategy, event) + repair_quota_locks(strategy, event)


def _repair_capacity_lock(strategy, event) -> list[str]:
    key = {"event_id": event.id}
    for _ in strategy.retry.attempts():
        lock = strategy.locks.get(key)  # read first: its version guards everything after
        current = strategy.events.get(key, projection="#capacity, version", names=CAPACITY_NAMES)
        count = audit.seats_taken(event, stored_orders(strategy, event.id).values())["capacity"]
        count += held_seats(lock)["capacity"]  # holds take seats too
        if lock is None or current is None:
            return _recreate_lock(strategy, current, event.id, count) if current else []
        version = lock.get("version")
        if not isinstance(version, int) or isinstance(version, bool):
            audit.fix_version(strategy.locks, key, lock)
            continue
        if lock.get("confirmed_count") == count and lock.get("capacity") == current["capacity"]:
            return []
        try:
            strategy.store.transact_write(_fix_lock(strategy, key, version, count, current))
        except TransactionCancelled as cancelled:
            if cancelled.conflict or CCF in (cancelled.code(0), cancelled.code(1)):
                continue  # a booking, cancellation or edit landed while counting: again
            raise
        return [f"lock item confirmed_count {lock.get('confirmed_count')} -> {count}, "
                f"capacity {lock.get('capacity')} -> {current['capacity']}"]


def _fix_lock(strategy, key, version, count, current):
    """The lock write, valid only if neither the lock nor the event changed since read."""
    return [
        ("Update", strategy.locks.update_op(
            key, FIX, condition="version = :version", names=CAPACITY_NAMES,
            values={":count": count, ":capacity": current["capacity"], ":one": 1,
                    ":version": version})),
        # A ConditionCheck member has exactly the shape of a Delete member.
        ("ConditionCheck", strategy.events.delete_op(
            key, condition="#capacity = :c AND version = :v", names=CAPACITY_NAMES,
            values={":c": current["capacity"], ":v": current["version"]})),
    ]


def _recreate_lock(strategy, current, event_id, count) -> list[str]:
    # Without a lock item every booking and cancellation fails, so the count cannot move.
    lock = {"event_id": event_id, "capacity": current["capacity"], "confirmed_count": count,
            "version": 1}
    try:
        strategy.locks.put(lock, condition="attribute_not_exists(event_id)")
    except ConditionFailed:
        return []
    return [f"lock item recreated with confirmed_count {count}"]
