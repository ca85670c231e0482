"""DynamoDB item sizes and write capacity units, by DynamoDB's published rules.

Item size = sum over attributes of (name length in UTF-8 + value size). Strings: UTF-8
length; numbers: about 1 byte per two significant digits plus 1; booleans and nulls: 1;
maps and lists: 3 bytes plus 1 per element plus their contents. A standard write costs
1 WCU per started KB of the larger of the item before and after; transactional writes
cost twice that. Each index entry a write adds or removes costs a standard write on the
index (a registration's ``by_email`` entry; a claimed slot's ``free_slots`` entry), as the
local store's capacity model charges it (localdynamo/capacity.py).
"""
import math
from decimal import Decimal

from booking.dynamo.tables import EVENT_LOCKS, EVENTS, REGISTRATIONS, SLOTS

KB = 1024
# What the strategies stored is read through the strategy's store by the tables'
# definitions: outside callers use a strategy's interface (its name, its store) only.


def value_size(value) -> int:
    if isinstance(value, str):
        return len(value.encode("utf-8"))
    if isinstance(value, bool) or value is None:
        return 1
    if isinstance(value, (int, float, Decimal)):
        digits = Decimal(str(value)).normalize().as_tuple().digits
        return (len(digits) + 1) // 2 + 1
    if isinstance(value, bytes):
        return len(value)
    if isinstance(value, dict):
        return 3 + sum(1 + len(k.encode("utf-8")) + value_size(v) for k, v in value.items())
    if isinstance(value, (list, set, tuple)):
        return 3 + sum(1 + value_size(v) for v in value)
    raise TypeError(f"no DynamoDB size rule for {type(value).__name__}")


def item_size(item: dict) -> int:
    return sum(len(name.encode("utf-8")) + value_size(v) for name, v in item.items())


def wcu(size: int, *, transactional: bool = False) -> int:
    return max(1, math.ceil(size / KB)) * (2 if transactional else 1)


def mean(values) -> float | None:
    values = list(values)
    return sum(values) / len(values) if values else None


def booking_wcu(strategy, event_id: str, capacity: int | None = None) -> dict:
    """Estimated WCU per booking from the items the event's bookings left stored.

    ``capacity`` extrapolates to a full event of that size (the aggregate item grows).
    Every booking's transaction also puts its request row and its e-mail's outbox row
    (two small items, under 1 KB each, transactional: ``ROWS_WCU``).
    Returns ``{"mean": ..., "last_seat": ...}``.
    """
    estimator = next(ESTIMATORS[kind.name] for kind in type(strategy).__mro__
                     if getattr(kind, "name", None) in ESTIMATORS)  # a baseline: its parent's
    estimate = estimator(strategy, event_id, capacity)
    return {key: None if value is None else value + ROWS_WCU for key, value in estimate.items()}


ROWS_WCU = 2 * wcu(1, transactional=True)


def _registrations(strategy, event_id):
    return list(strategy.store.table(REGISTRATIONS).query(
        key_condition="event_id = :e", values={":e": event_id}))


def _aggregate(strategy, event_id, capacity):
    item = strategy.store.table(EVENTS).get({"event_id": event_id})
    attendees = item.pop("attendees", {})
    base = item_size({**item, "attendees": {}})
    entries = [1 + len(email.encode("utf-8")) + value_size(value)
               for email, value in sorted(attendees.items(), key=lambda kv: kv[1]["registered_at"])]
    if capacity and entries:
        entries += [mean(entries)] * max(0, capacity - len(entries))
    costs, size = [], base
    for entry in entries:
        size += entry
        # The larger of before and after: after; in a transaction with the request row.
        costs.append(wcu(math.ceil(size), transactional=True))
    return {"mean": mean(costs), "last_seat": costs[-1] if costs else None}


def _per_registration(other_item, other_index_entries=0):
    """Each booking writes its registration (and its ``by_email`` index entry) in a
    transaction, with ``other_item`` if any (and its index entries, each under 1 KB)."""
    def estimate(strategy, event_id, capacity):
        stored = _registrations(strategy, event_id)
        if not stored:
            return {"mean": None, "last_seat": None}
        extra = wcu(item_size(other_item(strategy, stored[0])), transactional=True) \
            if other_item else 0
        extra += other_index_entries * wcu(1)
        costs = [wcu(item_size(r), transactional=True) + wcu(item_size(r)) + extra
                 for r in stored]
        return {"mean": mean(costs), "last_seat": max(costs)}
    return estimate


def _lock_item(strategy, registration):
    return strategy.store.table(EVENT_LOCKS).get({"event_id": registration["event_id"]})


def _shard_item(strategy, registration):
    key = {"event_id": f"{registration['event_id']}#{registration['shard']}"}
    return strategy.store.table(EVENT_LOCKS).get(key)


def _slot_item(strategy, registration):
    return strategy.store.table(SLOTS).get({"event_id": registration["event_id"], "slot": registration["slot"]})


def _streams(strategy, event_id, capacity):
    """The provisional registration and its request row: no outbox row at booking time
    (the decision writes it), so one of ``ROWS_WCU``'s two rows is taken back."""
    stored = list(strategy.registrations_table.query(key_condition="event_id = :e",
                                                     values={":e": event_id}))
    if not stored:
        return {"mean": None, "last_seat": None}
    costs = [wcu(item_size(r), transactional=True) - wcu(1, transactional=True)
             for r in stored]
    return {"mean": mean(costs), "last_seat": max(costs)}


ESTIMATORS = {
    "streams": _streams,
    "aggregate": _aggregate,
    "lock_table": _per_registration(_lock_item),
    "shards": _per_registration(_shard_item),
    "slots": _per_registration(_slot_item, other_index_entries=1),
    "unguarded": _per_registration(None),
}


def creation_wcu(strategy, event_id: str, capacity: int) -> int:
    """Estimated WCU to create the event (slots: one write per pre-created seat)."""
    event_size = item_size(strategy.store.table(EVENTS).get({"event_id": event_id}))
    event = wcu(event_size)
    if strategy.name == "lock_table":
        lock = strategy.store.table(EVENT_LOCKS).get({"event_id": event_id})
        return wcu(event_size, transactional=True) + wcu(item_size(lock), transactional=True)
    if strategy.name == "slots" and capacity:
        slot = next(iter(strategy.store.table(SLOTS).query(
            key_condition="event_id = :e", values={":e": event_id}, limit=1)))
        return event + capacity * wcu(item_size(slot))
    return event
