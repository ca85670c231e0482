"""Audit and repair for the slots strategy: in every quota, slot holders and the
registrations naming slots agree one to one (docs/strategies/slots.md, "Audit")."""
from booking.dynamo.access import ConditionFailed, TransactionCancelled
from booking.models import CAPACITY_QUOTA
from booking.strategies import audit, event_edits
from booking.strategies.base import CAPACITY_NAMES
from booking.strategies.slots import freed
from booking.strategies.slots.capacity import SIZES
from booking.strategies.slots.seats import (ABSENT, CLAIM, FREE, HOLDER, IS_FREE, PART,
                                            SLOT_NAMES, claimed, free_slot, partition, slot_op,
                                            slots_of)

TRANSACTION_WRITES = 99  # plus the ConditionCheck: DynamoDB allows 100 per transaction
STORED = "email, tickets, #slot, slots"
# A registration item names slot :n of quota #q (one seat's ``slot``, an order's ``slots``).
NAMES = "#slot = :n OR contains(slots.#q, :n)"
NAMES_NOT = "attribute_not_exists(email) OR NOT (#slot = :n OR contains(slots.#q, :n))"
ORPHAN = "holder = :email AND attribute_not_exists(held_until)"
UNLIST = "REMOVE free_in"
LOST = "attribute_exists(event_id) AND attribute_not_exists(holder) AND " \
       "attribute_not_exists(free_in)"
UNCLAIMED = "attribute_not_exists(holder)"


def read_slots(strategy, part: str) -> dict[int, dict]:
    """A partition's slots by number (at most ``max_capacity`` of them), page by page."""
    return {int(item["slot"]): item for item in slots_of(strategy.slots, part)}


def read_named(strategy, event_id: str) -> dict[str, dict]:
    """E-mail -> the stored registration's tickets and slots per quota (``claimed``)."""
    return {item["email"]: {"tickets": item.get("tickets"), "slots": claimed(item)}
            for item in strategy.registrations_table.query(
                key_condition=PART, values={":e": event_id}, projection=STORED,
                names=SLOT_NAMES)}


def where(quota: str, number: int) -> str:
    return f"slot {number}" if quota == CAPACITY_QUOTA else f"quota {quota} slot {number}"


def audit_event(strategy, event) -> list[audit.Violation]:
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


def repair_event(strategy, event) -> list[str]:
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
                    slot_op(strategy.slots, event.id, quota, number, FREE, condition=ORPHAN,
                            email=holder),
                    _names(strategy, event.id, holder, quota, number, NAMES_NOT))
            elif holder is not None and "free_in" in slot:
                done += _attempt(f"removed held slot {number} from the free list",
                                 strategy.slots.update, {"event_id": part, "slot": number},
                                 UNLIST, condition=HOLDER, values={":email": holder})
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
                                     slot_op(strategy.slots, event.id, quota, number, CLAIM,
                                             condition=UNCLAIMED, email=email),
                                     _names(strategy, event.id, email, quota, number, NAMES)])
        done += _match_slot_count(strategy, event, read_slots(strategy, part), quota)
        fixed += [what if quota == CAPACITY_QUOTA else f"quota {quota}: {what}" for what in done]
    return fixed


def _names(strategy, event_id, email, quota, number, condition) -> tuple:
    """A ConditionCheck on ``email``'s registration (naming slot ``number`` of ``quota``, or
    not): a ConditionCheck member has exactly a Delete member's shape."""
    return ("ConditionCheck", strategy.registrations_table.delete_op(
        {"event_id": event_id, "email": email}, condition=condition,
        names={**SLOT_NAMES, "#q": quota}, values={":n": number}))


def _attempt(done: str, write, *args, **kwargs) -> list[str]:
    """``[done]`` once ``write(*args, **kwargs)`` applied."""
    try:
        write(*args, **kwargs)
    except (ConditionFailed, TransactionCancelled):
        return []  # the data moved since the audit read it: leave it to the next check
    return [done]


def _match_slot_count(strategy, event, slots, quota):
    """Create missing slots; delete surplus free ones (held ones stay, and are reported).
    Each write rides with a check that the quota's size and the event's version are what
    this repair read, so a concurrent capacity edit is never undone."""
    key, part = {"event_id": event.id}, partition(event.id, quota)
    current = strategy.events.get(key, projection=SIZES, names=CAPACITY_NAMES)
    if current is None:
        return []
    size = current["capacity"] if quota == CAPACITY_QUOTA else current["quota_capacities"][quota]
    difference = size - len(slots)
    if difference > 0:
        start = max(slots, default=-1) + 1
        writes = [("Put", strategy.slots.put_op(free_slot(part, n), condition=ABSENT))
                  for n in range(start, start + difference)]
        done = "created {} missing free slot(s)"
    else:
        free = sorted((n for n, s in slots.items() if "holder" not in s), reverse=True)
        writes = [("Delete", strategy.slots.delete_op({"event_id": part, "slot": n},
                                                      condition=IS_FREE))
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
