"""Capacity and quota edits of the slots strategy, and deleting an event: slot items put
or deleted in version-checked steps (docs/strategies/slots.md, "Capacity edits")."""
from __future__ import annotations


from typing import Any

from booking.dynamo.expressions import attr, projection
from booking.dynamo.expressions import Delete, Members, Put, Refusal, Update
from booking.errors import EventNotFound
from booking.models import CAPACITY_QUOTA, Event
from booking.strategies import event_edits
from booking.strategies.base import AGAIN, WriteAgain
from booking.strategies.slots import freed
from booking.strategies.slots.seats import ABSENT, IS_FREE, free_slot, partition, slots_of
from booking.strategies.parts import SlotsParts

STEP = 25  # slots put or deleted per step (a transaction holds at most 100 members)
SIZES = projection("capacity", "version", "quota_capacities")


def change_capacity(strategy: SlotsParts, event: Event, *, expected_version: int, capacity: int,
                    changes: dict[str, Any], quotas: dict[str, int] | None = None) -> None:
    """Refused below the slots taken (claimed or held) in a quota; then the capacity's
    steps (at least one, carrying ``changes``), then each resized quota's, by name."""
    stored = strategy.events.get({"event_id": event.id}, projection=SIZES)
    refusal = event_edits.stale_or_missing(stored, expected_version)
    if refusal is not None or stored is None:  # (no item: stale_or_missing said so)
        raise refusal or EventNotFound()
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


def _resize(strategy: SlotsParts, event_id: str, quota: str, current: int, target: int, *,
            version: int, capacity: int, changes: dict[str, Any]) -> int:
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


def _apply_step(strategy: SlotsParts, event_id: str, quota: str, step: int, version: int,
                update: event_edits.EventUpdate) -> None:
    """One step: ``update`` of the event item with ``step`` slots put (or free ones deleted)."""
    event_write = Update(strategy.events, {"event_id": event_id}, update.expression,
                         update.condition)

    def decode(refusal: Refusal) -> WriteAgain:
        if refusal.refused("event"):
            # The event refused only for a moved version or a missing item: never None.
            raise event_edits.stale_or_missing(  # type: ignore[misc]
                refusal.old("event"), version) from None
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


def _new_slots(strategy: SlotsParts, part: str, count: int) -> list[tuple[str, Put]]:
    highest = list(slots_of(strategy.slots, part, forward=False, limit=1,
                            projection=projection("slot")))
    first = highest[0]["slot"] + 1 if highest else 0
    return [(f"slot:{number}", Put(strategy.slots, free_slot(part, number), ABSENT))
            for number in range(first, first + count)]


def _free_slot_deletes(strategy: SlotsParts, event_id: str, quota: str,
                       count: int) -> list[tuple[str, Delete]]:
    part = partition(event_id, quota)
    free = list(strategy.slots.query(
        index="free_slots", key_condition=attr("free_in").eq(part), limit=count))
    if len(free) < count:  # bookings took the seats since the count was checked
        raise event_edits.below_taken(quota, _taken(strategy, part))
    return [(f"slot:{item['slot']}",
             Delete(strategy.slots, {"event_id": part, "slot": item["slot"]}, IS_FREE))
            for item in free]


def _taken(strategy: SlotsParts, part: str) -> int:
    """The slots of a partition that are not free: claimed or held."""
    return sum(1 for item in slots_of(strategy.slots, part, projection=projection("free_in"))
               if "free_in" not in item)


def delete(strategy: SlotsParts, event: Event) -> None:
    # Slots first: with no slot left, no booking can succeed; then registrations, event.
    for quota in event.quota_capacities():
        strategy.slots.delete_partition(partition(event.id, quota))
    for copy in range(freed.EPOCHS):  # a rejection read now finds no event
        strategy.locks.delete(freed.epoch_key(event.id, copy))
    strategy.registrations_table.delete_partition(event.id)
    strategy.events.delete({"event_id": event.id})

