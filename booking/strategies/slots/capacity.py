"""The slots strategy's seats (one item per seat): what a free slot item is, and
capacity edits and deletes (version-checked).

A free slot has ``free_in`` set (the sparse free-slot index lists it only then) and a
random ``shuffle`` key that spreads bookings over the index. The seats are the slot items, so the event item's capacity must always equal the number
of slots. Each step of an edit is one TransactWriteItems that changes the capacity on the
event item (only at the version the organizer read, bumping it) together with the slots:

- raising puts new free slots (new slot numbers, never reused keys), and adds 1 to the
  event's freed epoch (``freed.py``) in the same transaction;
- lowering deletes free slots, each only if it is still free (``attribute_exists
  (free_in)``). A booking that claims one of them in the meantime cancels the whole step,
  which is then retried with other free slots. A held slot is never removed, so no
  registration is ever dropped, and there are never fewer slots than registrations.

A step moves at most ``STEP`` slots (a transaction holds at most 100 writes). Larger edits
chain steps, each conditional on the version the previous step wrote; if another edit
slips in between, the rest is refused as stale, and what was done stays consistent.

A further quota (docs/orders.md) is resized the same way, in its own partition of slot
items (``<event id>#<quota>``), each step setting its entry of ``quota_capacities`` on
the event item; the capacity's steps come first, then each quota's in name order.
"""
import random

from booking.models import CAPACITY_QUOTA
from booking.strategies import event_edits
from booking.strategies.base import AGAIN, CAPACITY_NAMES, refused_at
from booking.strategies.slots import freed

STEP = 25
SHUFFLE_RANGE = 2**31


def free_slot(event_id, number) -> dict:
    """A new free slot item."""
    return {"event_id": event_id, "slot": number, "free_in": event_id,
            "shuffle": random.randrange(SHUFFLE_RANGE)}


def partition(event_id: str, quota: str) -> str:
    """The partition of a quota's slot items: the event's own for the capacity."""
    return event_id if quota == CAPACITY_QUOTA else f"{event_id}#{quota}"


def change_capacity(strategy, event_id, *, expected_version, capacity, changes, quotas=None):
    event = strategy.events.get({"event_id": event_id},
                                projection="#capacity, version, quota_capacities",
                                names=CAPACITY_NAMES)
    refusal = event_edits.stale_or_missing(event, expected_version)
    if refusal:
        raise refusal
    sizes = {quota: int(event["quota_capacities"][quota]) for quota in sorted(quotas or {})}
    if capacity < event["capacity"]:
        _refuse_below_confirmed(strategy, event_id, capacity)
    for quota, target in sorted((quotas or {}).items()):
        if target < sizes[quota]:
            _refuse_below_taken(strategy, event_id, quota, target)
    resizes = [(quota, sizes[quota], target) for quota, target in sorted((quotas or {}).items())
               if target != sizes[quota]]
    if capacity != event["capacity"] or not resizes:  # at least one write, with ``changes``
        resizes.insert(0, (CAPACITY_QUOTA, event["capacity"], capacity))
    version = expected_version
    for quota, current, target in resizes:
        version = _resize(strategy, event_id, quota, current, target,
                          version=version, capacity=capacity, changes=changes)
        changes = {}


def _resize(strategy, event_id, quota, current, target, *, version, capacity, changes) -> int:
    """Steps from ``current`` to ``target`` slots of ``quota`` (at least one write, which
    carries ``changes``); the version the last step wrote."""
    while True:
        step = max(-STEP, min(STEP, target - current))
        current += step
        sizes = {"capacity": current} if quota == CAPACITY_QUOTA else \
            {"capacity": capacity, "quotas": {quota: current}}
        _apply_step(strategy, event_id, version, step, changes, quota=quota, **sizes)
        version, changes = version + 1, {}
        if current == target:
            return version


def _refuse_below_confirmed(strategy, event_id, capacity):
    confirmed = strategy.registrations_table.count(
        key_condition="event_id = :e", values={":e": event_id})
    if confirmed > capacity:
        raise event_edits.below_confirmed(confirmed)


def _taken(strategy, part) -> int:
    """The slots of a partition that are not free: claimed by an order or held."""
    return sum(1 for item in strategy.slots.query(
        key_condition="event_id = :e", values={":e": part}, projection="free_in")
        if "free_in" not in item)


def _refuse_below_taken(strategy, event_id, quota, size):
    taken = _taken(strategy, partition(event_id, quota))
    if taken > size:
        raise event_edits.below_taken(quota, taken)


def _apply_step(strategy, event_id, version, step, changes, *, quota, capacity, quotas=None):
    update = event_edits.event_update(expected_version=version, capacity=capacity,
                                      changes=changes, quotas=quotas)
    event_write = ("Update", strategy.events.update_op(
        {"event_id": event_id}, update.expression, **update.kwargs()))

    def decode(cancelled):
        if refused_at(cancelled, 0):
            old = cancelled.reasons[0].old_item
            raise event_edits.stale_or_missing(old, version) from None
        return AGAIN  # a slot was claimed since we listed it (or a conflict): list again

    part = partition(event_id, quota)
    for _ in strategy.retry.attempts():
        slot_writes = _new_slots(strategy, part, step) if step >= 0 else \
            _free_slot_deletes(strategy, event_id, quota, -step)
        if step > 0:  # new free slots: a booking verified "full" must look again
            slot_writes += strategy.freed_ops(event_id)
        strategy.between_read_and_write()  # test hook: bookings may claim listed slots here
        if strategy.transact_once([event_write, *slot_writes], written=True,
                                  decode=decode) is True:
            return


def _new_slots(strategy, part, count):
    highest = list(strategy.slots.query(
        key_condition="event_id = :e", values={":e": part}, forward=False, limit=1,
        projection="#slot", names={"#slot": "slot"}))
    first = highest[0]["slot"] + 1 if highest else 0
    return [("Put", strategy.slots.put_op(
        free_slot(part, number), condition="attribute_not_exists(event_id)"))
        for number in range(first, first + count)]


def _free_slot_deletes(strategy, event_id, quota, count):
    part = partition(event_id, quota)
    free = list(strategy.slots.query(
        index="free_slots", key_condition="free_in = :e", values={":e": part}, limit=count))
    if len(free) < count:
        # Bookings took the seats since the count was checked.
        if quota != CAPACITY_QUOTA:
            raise event_edits.below_taken(quota, _taken(strategy, part))
        confirmed = strategy.registrations_table.count(
            key_condition="event_id = :e", values={":e": event_id})
        raise event_edits.below_confirmed(confirmed)
    return [("Delete", strategy.slots.delete_op(
        {"event_id": part, "slot": item["slot"]}, condition="attribute_exists(free_in)"))
        for item in free]


def delete(strategy, event_id):
    # Slots first: with no slot left, no booking can succeed; then registrations, event.
    strategy.slots.delete_partition(event_id)
    freed.delete_epoch(strategy.locks, event_id)  # a rejection read now finds no event
    strategy.registrations_table.delete_partition(event_id)
    strategy.events.delete({"event_id": event_id})

