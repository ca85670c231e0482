"""The slots strategy's seats (seed 004 pattern 2-3): what a free slot item is, and
capacity edits and deletes (seed 001).

A free slot has ``free_in`` set (the sparse free-slot index lists it only then) and a
random ``shuffle`` key that spreads bookings over the index. The seats are the slot items, so the event item's capacity must always equal the number
of slots. Each step of an edit is one TransactWriteItems that changes the capacity on the
event item (only at the version the organizer read, bumping it) together with the slots:

- raising puts new free slots (new slot numbers, never reused keys);
- lowering deletes free slots, each only if it is still free (``attribute_exists
  (free_in)``). A booking that claims one of them in the meantime cancels the whole step,
  which is then retried with other free slots. A held slot is never removed, so no
  registration is ever dropped, and there are never fewer slots than registrations.

A step moves at most ``STEP`` slots (a transaction holds at most 100 writes). Larger edits
chain steps, each conditional on the version the previous step wrote; if another edit
slips in between, the rest is refused as stale, and what was done stays consistent.
"""
import random

from booking.strategies import event_edits
from booking.strategies.base import AGAIN, CAPACITY_NAMES, refused_at

STEP = 25
SHUFFLE_RANGE = 2**31


def free_slot(event_id, number) -> dict:
    """A new free slot item."""
    return {"event_id": event_id, "slot": number, "free_in": event_id,
            "shuffle": random.randrange(SHUFFLE_RANGE)}


def change_capacity(strategy, event_id, *, expected_version, capacity, changes):
    event = strategy.events.get({"event_id": event_id}, projection="#capacity, version",
                                names=CAPACITY_NAMES)
    refusal = event_edits.stale_or_missing(event, expected_version)
    if refusal:
        raise refusal
    current, version = event["capacity"], expected_version
    if capacity < current:
        _refuse_below_confirmed(strategy, event_id, capacity)
    while True:
        step = max(-STEP, min(STEP, capacity - current))
        _apply_step(strategy, event_id, version, current + step, step, changes)
        current, version, changes = current + step, version + 1, {}
        if current == capacity:
            return


def _refuse_below_confirmed(strategy, event_id, capacity):
    confirmed = strategy.registrations_table.count(
        key_condition="event_id = :e", values={":e": event_id})
    if confirmed > capacity:
        raise event_edits.below_confirmed(confirmed)


def _apply_step(strategy, event_id, version, capacity, step, changes):
    update = event_edits.event_update(expected_version=version, capacity=capacity, changes=changes)
    event_write = ("Update", strategy.events.update_op(
        {"event_id": event_id}, update.expression, **update.kwargs()))

    def decode(cancelled):
        if refused_at(cancelled, 0):
            old = cancelled.reasons[0].old_item
            raise event_edits.stale_or_missing(old, version) from None
        return AGAIN  # a slot was claimed since we listed it (or a conflict): list again

    for _ in strategy.retry.attempts():
        slot_writes = _new_slots(strategy, event_id, step) if step >= 0 else \
            _free_slot_deletes(strategy, event_id, -step)
        strategy.between_read_and_write()  # test hook: bookings may claim listed slots here
        if strategy.transact_once([event_write, *slot_writes], written=True,
                                  decode=decode) is True:
            return


def _new_slots(strategy, event_id, count):
    highest = list(strategy.slots.query(
        key_condition="event_id = :e", values={":e": event_id}, forward=False, limit=1,
        projection="#slot", names={"#slot": "slot"}))
    first = highest[0]["slot"] + 1 if highest else 0
    return [("Put", strategy.slots.put_op(
        free_slot(event_id, number), condition="attribute_not_exists(event_id)"))
        for number in range(first, first + count)]


def _free_slot_deletes(strategy, event_id, count):
    free = list(strategy.slots.query(
        index="free_slots", key_condition="free_in = :e", values={":e": event_id}, limit=count))
    if len(free) < count:
        # Bookings took the seats since the count was checked.
        confirmed = strategy.registrations_table.count(
            key_condition="event_id = :e", values={":e": event_id})
        raise event_edits.below_confirmed(confirmed)
    return [("Delete", strategy.slots.delete_op(
        {"event_id": event_id, "slot": item["slot"]}, condition="attribute_exists(free_in)"))
        for item in free]


def delete(strategy, event_id):
    # Slots first: with no slot left, no booking can succeed; then registrations, event.
    strategy.slots.delete_partition(event_id)
    strategy.registrations_table.delete_partition(event_id)
    strategy.events.delete({"event_id": event_id})

