"""Capacity and quota edits of the slots strategy, and deleting an event: slot items put
or deleted in version-checked steps (docs/strategies/slots.md, "Capacity edits")."""
from booking.dynamo.transaction import Members, Refusal
from booking.models import CAPACITY_QUOTA, Event
from booking.strategies import event_edits
from booking.strategies.base import AGAIN, CAPACITY_NAMES
from booking.strategies.slots import freed
from booking.strategies.slots.seats import (ABSENT, IS_FREE, SLOT_NAMES, free_slot, partition,
                                            slots_of)

STEP = 25  # slots put or deleted per step (a transaction holds at most 100 members)
SIZES = "#capacity, version, quota_capacities"
FREE_IN = "free_in = :e"


def change_capacity(strategy, event: Event, *, expected_version, capacity, changes,
                    quotas=None):
    """Refused below the slots taken (claimed or held) in a quota; then the capacity's
    steps (at least one, carrying ``changes``), then each resized quota's, by name."""
    stored = strategy.events.get({"event_id": event.id}, projection=SIZES, names=CAPACITY_NAMES)
    refusal = event_edits.stale_or_missing(stored, expected_version)
    if refusal:
        raise refusal
    targets = {CAPACITY_QUOTA: capacity, **dict(sorted((quotas or {}).items()))}
    sizes = {quota: int(stored["capacity"] if quota == CAPACITY_QUOTA else
                        stored["quota_capacities"][quota]) for quota in targets}
    for quota, target in targets.items():
        taken = _taken(strategy, partition(event.id, quota)) if target < sizes[quota] else 0
        if taken > target:
            raise event_edits.below_taken(quota, taken)
    # At least one write (it carries ``changes``): the capacity's, unchanged or not.
    resizes = [quota for quota in targets if targets[quota] != sizes[quota]] or [CAPACITY_QUOTA]
    version = expected_version
    for quota in resizes:
        version = _resize(strategy, event.id, quota, sizes[quota], targets[quota],
                          version=version, capacity=capacity, changes=changes)
        changes = {}


def _resize(strategy, event_id, quota, current, target, *, version, capacity, changes) -> int:
    """Steps from ``current`` to ``target`` slots of ``quota`` (at least one write, which
    carries ``changes``); the version the last step wrote."""
    while True:
        step = max(-STEP, min(STEP, target - current))
        current += step
        quotas = None if quota == CAPACITY_QUOTA else {quota: current}
        _apply_step(strategy, event_id, quota, step, version, event_edits.event_update(
            expected_version=version, capacity=capacity if quotas else current,
            changes=changes, quotas=quotas))
        version, changes = version + 1, {}
        if current == target:
            return version


def _apply_step(strategy, event_id, quota, step, version, update) -> None:
    """One step: ``update`` of the event item with ``step`` slots put (or free ones deleted)."""
    event_write = ("Update", strategy.events.update_op(
        {"event_id": event_id}, update.expression, **update.kwargs()))

    def decode(refusal: Refusal):
        if refusal.refused("event"):
            raise event_edits.stale_or_missing(refusal.old("event"), version) from None
        return AGAIN  # a slot was claimed since we listed it (or a conflict): list again

    part = partition(event_id, quota)
    for _ in strategy.retry.attempts():
        members = Members([("event", event_write)])
        members.extend(_new_slots(strategy, part, step) if step >= 0 else
                       _free_slot_deletes(strategy, event_id, quota, -step))
        if step > 0:  # new free slots: a booking verified "full" must look again
            members.extend(strategy.freed_ops(event_id))
        strategy.between_read_and_write()  # test hook: bookings may claim listed slots here
        if strategy.transact_once(members, written=True, decode=decode) is True:
            return


def _new_slots(strategy, part, count):
    highest = list(slots_of(strategy.slots, part, forward=False, limit=1, projection="#slot",
                            names=SLOT_NAMES))
    first = highest[0]["slot"] + 1 if highest else 0
    return [(f"slot:{number}", ("Put", strategy.slots.put_op(free_slot(part, number),
                                                              condition=ABSENT)))
            for number in range(first, first + count)]


def _free_slot_deletes(strategy, event_id, quota, count):
    part = partition(event_id, quota)
    free = list(strategy.slots.query(
        index="free_slots", key_condition=FREE_IN, values={":e": part}, limit=count))
    if len(free) < count:  # bookings took the seats since the count was checked
        raise event_edits.below_taken(quota, _taken(strategy, part))
    return [(f"slot:{item['slot']}", ("Delete", strategy.slots.delete_op(
        {"event_id": part, "slot": item["slot"]}, condition=IS_FREE))) for item in free]


def _taken(strategy, part) -> int:
    """The slots of a partition that are not free: claimed or held."""
    return sum(1 for item in slots_of(strategy.slots, part, projection="free_in")
               if "free_in" not in item)


def delete(strategy, event: Event) -> None:
    # Slots first: with no slot left, no booking can succeed; then registrations, event.
    for quota in event.quota_capacities():
        strategy.slots.delete_partition(partition(event.id, quota))
    for copy in range(freed.EPOCHS):  # a rejection read now finds no event
        strategy.locks.delete(freed.epoch_key(event.id, copy))
    strategy.registrations_table.delete_partition(event.id)
    strategy.events.delete({"event_id": event.id})

