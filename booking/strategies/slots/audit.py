"""Audit and repair for the slots strategy: in every quota, slot holders and the
registrations naming slots agree one to one (docs/strategies/slots.md, "Audit")."""
from __future__ import annotations


from collections.abc import Callable

from booking.dynamo.access import ConditionFailed, TransactionCancelled
from booking.dynamo.expressions import Actions, Condition, attr, projection
from booking.dynamo.expressions import ConditionCheck, Delete, Put
from booking.models import CAPACITY_QUOTA, Event
from booking.strategies import audit, event_edits
from booking.strategies.slots import freed
from booking.strategies.slots.capacity import SIZES
from booking.strategies.slots.seats import (ABSENT, FREE, FREE_IN, HELD_UNTIL, HOLDER, IS_FREE,
                                            claim, claimed, free_slot, held_by, partition,
                                            slot_op, slots_of)
from booking.strategies.parts import SlotsParts

TRANSACTION_WRITES = 99  # plus the ConditionCheck: DynamoDB allows 100 per transaction
STORED = projection("email", "tickets", "slot", "slots")
LOST = attr("event_id").exists() & HOLDER.not_exists() & FREE_IN.not_exists()
UNCLAIMED = HOLDER.not_exists()


def names_slot(quota: str, number: int) -> Condition:
    """A registration item names slot ``number`` of ``quota`` (one seat's ``slot``, an
    order's ``slots``)."""
    return attr("slot").eq(number) | attr("slots", quota).contains(number)


def orphan(holder: str) -> Condition:
    """Claimed by ``holder``, not held for an offer."""
    return held_by(holder) & HELD_UNTIL.not_exists()


def read_slots(strategy: SlotsParts, part: str) -> dict[int, dict]:
    """A partition's slots by number (at most ``max_capacity`` of them), page by page."""
    return {int(item["slot"]): item for item in slots_of(strategy.slots, part)}


def read_named(strategy: SlotsParts, event_id: str) -> dict[str, dict]:
    """E-mail -> the stored registration's tickets and slots per quota (``claimed``)."""
    return {item["email"]: {"tickets": item.get("tickets"), "slots": claimed(item)}
            for item in strategy.registrations_table.query(
                key_condition=attr("event_id").eq(event_id), projection=STORED)}


def where(quota: str, number: int) -> str:
    return f"slot {number}" if quota == CAPACITY_QUOTA else f"quota {quota} slot {number}"


def audit_event(strategy: SlotsParts, event: Event) -> list[audit.Violation]:
    stored = read_named(strategy, event.id)
    seats = audit.seats_taken(event, (item["tickets"] for item in stored.values()))
    found, counted = [], {}
    for quota, capacity in event.quota_capacities().items():
        slots = read_slots(strategy, partition(event.id, quota))
        held = sum(1 for slot in slots.values() if "held_until" in slot)  # waiting-list holds
        seats[quota] += held
        if len(slots) != capacity:
            found.append(audit.Violation(event.id, audit.SLOT_COUNT, capacity, len(slots),
                                         "" if quota == CAPACITY_QUOTA else f"quota {quota}"))
        named = {(email, n) for email, item in stored.items()
                 for n in item["slots"].get(quota, [])}
        counted[quota] = len(named) + held
        for number, slot in sorted(slots.items()):
            holder, free = slot.get("holder"), "free_in" in slot
            if (holder is None) == (not free):
                state = "held and listed as free" if free else "neither held nor listed as free"
                found.append(audit.Violation(event.id, audit.SLOT_STATE, "free xor held", state,
                                             where(quota, number)))
            if holder is not None and (holder, number) not in named and "held_until" not in slot:
                found.append(audit.Violation(
                    event.id, audit.CLAIM_HAS_REGISTRATION,
                    f"a registration of {holder} naming it",
                    "none" if holder not in stored else f"it names {stored[holder]['slots']}",
                    where(quota, number)))
        for email, number in sorted(named):
            holder = slots.get(number, {}).get("holder")
            if holder != email:
                found.append(audit.Violation(event.id, audit.REGISTRATION_HOLDS_SLOT,
                                             f"held by {email}", f"held by {holder}",
                                             where(quota, number)))
    return (audit.seat_violations(event, seats, counted, "slots named vs seats booked",
                                  checks=found) + audit.person_violations(event.id, stored))


def repair_event(strategy: SlotsParts, event: Event) -> list[str]:
    """Per quota: claims nobody names freed, lost claims and lost free marks restored, the
    slot count matched to the size; each write conditional on what the audit read."""
    fixed = []
    for quota in event.quota_capacities():
        part, done = partition(event.id, quota), []
        named = {(email, n) for email, item in read_named(strategy, event.id).items()
                 for n in item["slots"].get(quota, [])}
        for number, slot in sorted(read_slots(strategy, part).items()):
            holder = slot.get("holder")
            if "held_until" in slot:
                continue  # held for a waiting-list offer: time releases it
            if holder is not None and (holder, number) not in named:
                done += _attempt(
                    f"freed slot {number} (claimed by {holder} without a registration naming it)",
                    freed.freed_together, strategy, event.id,
                    slot_op(strategy.slots, event.id, quota, number, FREE,
                            condition=orphan(holder)),
                    _names(strategy, event.id, holder,
                           attr("email").not_exists() | ~names_slot(quota, number)))
            elif holder is not None and "free_in" in slot:
                done += _attempt(f"removed held slot {number} from the free list",
                                 strategy.slots.update, {"event_id": part, "slot": number},
                                 Actions().remove(FREE_IN), condition=held_by(holder))
            elif holder is None and "free_in" not in slot:
                done += _attempt(f"listed free slot {number} as free", freed.freed_together,
                                 strategy, event.id,
                                 slot_op(strategy.slots, event.id, quota, number, FREE,
                                         condition=LOST))
        slots = read_slots(strategy, part)
        for email, number in sorted(named):
            if number in slots and "holder" not in slots[number]:
                done += _attempt(f"slot {number} claimed for {email}'s order",
                                 strategy.store.transact_write, [
                                     slot_op(strategy.slots, event.id, quota, number,
                                             claim(email), condition=UNCLAIMED),
                                     _names(strategy, event.id, email,
                                            names_slot(quota, number))])
        done += _match_slot_count(strategy, event, read_slots(strategy, part), quota)
        fixed += [what if quota == CAPACITY_QUOTA else f"quota {quota}: {what}" for what in done]
    return fixed


def _names(strategy: SlotsParts, event_id: str, email: str, condition: Condition) -> ConditionCheck:
    """A ConditionCheck on ``email``'s registration (naming a slot, or not)."""
    return ConditionCheck(strategy.registrations_table, {"event_id": event_id, "email": email},
                          condition)


def _attempt(done: str, write: Callable[..., object], *args: object,
             **kwargs: object) -> list[str]:
    """``[done]`` once ``write(*args, **kwargs)`` applied."""
    try:
        write(*args, **kwargs)
    except (ConditionFailed, TransactionCancelled):
        return []  # the data moved since the audit read it: leave it to the next check
    return [done]


def _match_slot_count(strategy: SlotsParts, event: Event, slots: dict[int, dict],
                      quota: str) -> list[str]:
    """Create missing slots; delete surplus free ones (held ones stay, and are reported).
    Each write rides with a check that the quota's size and the event's version are what
    this repair read, so a concurrent capacity edit is never undone."""
    key, part = {"event_id": event.id}, partition(event.id, quota)
    current = strategy.events.get(key, projection=SIZES)
    if current is None:
        return []
    size = current["capacity"] if quota == CAPACITY_QUOTA else current["quota_capacities"][quota]
    difference = size - len(slots)
    if difference > 0:
        start = max(slots, default=-1) + 1
        writes: list[Put | Delete] = [Put(strategy.slots, free_slot(part, n), ABSENT)
                                      for n in range(start, start + difference)]
        done = "created {} missing free slot(s)"
    else:
        free = sorted((n for n, s in slots.items() if "holder" not in s), reverse=True)
        writes = [Delete(strategy.slots, {"event_id": part, "slot": n}, IS_FREE)
                  for n in free[:-difference]]
        done = "deleted {} surplus free slot(s)"
    check = event_edits.size_as_read(strategy.events, event.id, quota, size, current["version"])
    bump = [op for _, op in strategy.freed_ops(event.id)] if difference > 0 else []
    fixed, per_step = [], TRANSACTION_WRITES - len(bump)
    for start in range(0, len(writes), per_step):
        chunk = writes[start:start + per_step]
        fixed += _attempt(done.format(len(chunk)), strategy.store.transact_write,
                          [check, *chunk, *bump])
    return fixed
