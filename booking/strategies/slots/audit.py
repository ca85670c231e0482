"""Audit and repair for the slots strategy: slot holders and registrations agree 1:1.

Every claimed slot names a holder whose registration names that slot; every registration's
slot is claimed by its e-mail; a slot is either free (``free_in`` set, so the free-slot
index lists it) or held, never both or neither; there are ``capacity`` slots.

Repairs are conditional writes that re-check, atomically, what the audit saw: an orphaned
claim is freed in a transaction with a ConditionCheck that the holder still has no
registration naming the slot, so a booking that lands meanwhile is never undone.

An event with orders (docs/orders.md) is repaired the same way in every quota's partition
of slot items, an order naming its slots per quota (``slots.<quota>``): a claim no order
names is freed only if the holder's order still does not name it (``NOT contains``), a
slot an order names is claimed for it only if the order still names it, and a quota's
slot count follows its size only while the event item's size and version are as read.

A repair that makes a slot free (freeing an orphaned claim, listing a free slot again,
creating missing slots) adds 1 to the event's freed epoch in the same transaction
(``freed.py``), as every freeing write does.
"""
import random

from booking.models import CAPACITY_QUOTA
from booking.strategies import audit
from booking.dynamo.access import ConditionFailed, TransactionCancelled

from booking.strategies.base import CAPACITY_NAMES
from booking.strategies.slots import freed
from booking.strategies.slots.capacity import SHUFFLE_RANGE, free_slot
from booking.strategies.slots.orders import partition

SLOT_NAMES = {"#slot": "slot"}
TRANSACTION_WRITES = 99  # plus the ConditionCheck: DynamoDB allows 100 per transaction


def read_slots(strategy, event_id) -> dict[int, dict]:
    """The event's slots by number (at most ``max_capacity`` of them), read page by page."""
    return {item["slot"]: item for item in strategy.slots.query(
        key_condition="event_id = :e", values={":e": event_id})}


def read_registrations(strategy, event_id) -> dict[str, int | None]:
    """E-mail -> slot number of every stored registration, read page by page."""
    return {item["email"]: item.get("slot") for item in strategy.registrations_table.query(
        key_condition="event_id = :e", values={":e": event_id},
        projection="email, #slot", names=SLOT_NAMES)}


def audit_event(strategy, event) -> list[audit.Violation]:
    if not event.is_plain:
        return audit_orders(strategy, event)
    slots, registrations = read_slots(strategy, event.id), read_registrations(strategy, event.id)
    held = sum(1 for slot in slots.values() if "held_until" in slot)  # waiting-list holds
    found = audit.capacity_violation(event.id, event.capacity, len(registrations) + held)
    if len(slots) != event.capacity:
        found.append(audit.Violation(event.id, audit.SLOT_COUNT, event.capacity, len(slots)))
    for number, slot in sorted(slots.items()):
        holder, free = slot.get("holder"), "free_in" in slot
        if (holder is None) == (not free):
            state = "held and listed as free" if free else "neither held nor listed as free"
            found.append(audit.Violation(event.id, audit.SLOT_STATE, "free xor held", state,
                                         f"slot {number}"))
        if (holder is not None and registrations.get(holder, "none") != number
                and "held_until" not in slot):  # a seat held for an offer has none yet
            found.append(audit.Violation(event.id, audit.CLAIM_HAS_REGISTRATION,
                                         f"registration of {holder} naming slot {number}",
                                         _registration_state(registrations, holder),
                                         f"slot {number}"))
    for email, number in sorted(registrations.items(), key=lambda kv: kv[0]):
        holder = slots.get(number, {}).get("holder")
        if holder != email:
            found.append(audit.Violation(event.id, audit.REGISTRATION_HOLDS_SLOT,
                                         f"slot {number} held by {email}", f"held by {holder}",
                                         email))
    return found + audit.person_violations(event.id, registrations)


def audit_orders(strategy, event) -> list[audit.Violation]:
    """An event with orders: every quota's slots, claimed by exactly the orders that name
    them (``slots``: quota -> slot numbers), as many as each order's seats in that quota."""
    orders = {item["email"]: item for item in strategy.registrations_table.query(
        key_condition="event_id = :e", values={":e": event.id},
        projection="email, tickets, slots")}
    seats = audit.seats_taken(event, (item.get("tickets") for item in orders.values()))
    quota_slots = {quota: read_slots(strategy, partition(event.id, quota))
                   for quota in event.quota_capacities()}
    for quota, slots in quota_slots.items():  # seats held for waiting-list offers are taken
        seats[quota] += sum(1 for slot in slots.values() if "held_until" in slot)
    found = audit.capacity_violation(event.id, event.capacity, seats["capacity"])
    counted = {}
    for quota, capacity in event.quota_capacities().items():
        slots = quota_slots[quota]
        if len(slots) != capacity:
            found.append(audit.Violation(event.id, audit.SLOT_COUNT, capacity, len(slots),
                                         f"quota {quota}"))
        counted[quota] = sum(1 for slot in slots.values() if "holder" in slot)
        named = {(email, n) for email, item in orders.items()
                 for n in (item.get("slots") or {}).get(quota, [])}
        for number, slot in sorted(slots.items()):
            holder = slot.get("holder")
            if (holder is None) != ("free_in" in slot):
                found.append(audit.Violation(event.id, audit.SLOT_STATE, "free xor held",
                                             str(sorted(slot)), f"quota {quota} slot {number}"))
            if holder is not None and (holder, number) not in named and "held_until" not in slot:
                found.append(audit.Violation(event.id, audit.CLAIM_HAS_REGISTRATION,
                                             f"an order of {holder} naming it", "none",
                                             f"quota {quota} slot {number}"))
        for email, number in sorted(named):
            if slots.get(number, {}).get("holder") != email:
                found.append(audit.Violation(event.id, audit.REGISTRATION_HOLDS_SLOT,
                                             f"held by {email}", slots.get(number, {}).get("holder"),
                                             f"quota {quota} slot {number}"))
    if counted["capacity"] != seats["capacity"]:
        found.append(audit.Violation(event.id, audit.COUNTER, seats["capacity"],
                                     counted["capacity"], "claimed slots vs orders' seats"))
    found += audit.quota_violations(event, seats, counted)
    return found + audit.person_violations(event.id, orders)


def _registration_state(registrations, holder):
    if holder not in registrations:
        return "no registration"
    return f"registration names slot {registrations[holder]}"


def repair_event(strategy, event) -> list[str]:
    if not event.is_plain:
        return repair_orders(strategy, event)
    slots, registrations = read_slots(strategy, event.id), read_registrations(strategy, event.id)
    fixed = []
    for number, slot in sorted(slots.items()):
        holder = slot.get("holder")
        if "held_until" in slot:
            continue  # held for a waiting-list offer: time releases it
        if holder is not None and registrations.get(holder, "none") != number:
            fixed += _free_orphan(strategy, event.id, number, holder)
        elif holder is not None and "free_in" in slot:
            fixed += _unlist(strategy, event.id, number, holder)
        elif holder is None and "free_in" not in slot:
            fixed += _relist(strategy, event.id, event.id, number)
    slots = read_slots(strategy, event.id)
    for email, number in sorted(registrations.items()):
        if number in slots and "holder" not in slots[number]:
            fixed += _claim_for(strategy, event.id, number, email)
    return fixed + _match_slot_count(strategy, event, read_slots(strategy, event.id))


def repair_orders(strategy, event) -> list[str]:
    """Every quota's slot claims matched to the orders that name them (``audit_orders``)."""
    fixed = []
    for quota in event.quota_capacities():
        part, done = partition(event.id, quota), []
        orders = strategy.registrations_table.query(
            key_condition="event_id = :e", values={":e": event.id}, projection="email, slots")
        named = {(item["email"], n) for item in orders
                 for n in (item.get("slots") or {}).get(quota, [])}
        for number, slot in sorted(read_slots(strategy, part).items()):
            holder = slot.get("holder")
            if "held_until" in slot:
                continue  # held for a waiting-list offer: time releases it
            if holder is not None and (holder, number) not in named:
                done += _free_unnamed(strategy, event.id, quota, number, holder)
            elif holder is not None and "free_in" in slot:
                done += _unlist(strategy, part, number, holder)
            elif holder is None and "free_in" not in slot:
                done += _relist(strategy, event.id, part, number)
        slots = read_slots(strategy, part)
        for email, number in sorted(named):
            if number in slots and "holder" not in slots[number]:
                done += _claim_for_order(strategy, event.id, quota, number, email)
        done += _match_slot_count(strategy, event, read_slots(strategy, part), quota)
        fixed += [f"quota {quota}: {what}" for what in done]
    return fixed


def _order_names(strategy, event_id, email, quota, number, *, names: bool) -> tuple:
    """A ConditionCheck: ``email``'s order names (or, ``names=False``, does not name) slot
    ``number`` of ``quota``."""
    condition = ("contains(slots.#q, :n)" if names
                 else "attribute_not_exists(email) OR NOT contains(slots.#q, :n)")
    return ("ConditionCheck", _condition_check(
        strategy.registrations_table, {"event_id": event_id, "email": email},
        condition=condition, names={"#q": quota}, values={":n": number}))


def _free_unnamed(strategy, event_id, quota, number, holder):
    part = partition(event_id, quota)
    free = strategy.slots.update_op(
        {"event_id": part, "slot": number}, "SET free_in = :e, shuffle = :r REMOVE holder",
        condition="holder = :h AND attribute_not_exists(held_until)",
        values={":e": part, ":r": random.randrange(SHUFFLE_RANGE), ":h": holder})
    check = _order_names(strategy, event_id, holder, quota, number, names=False)
    return _attempt(lambda: strategy.store.transact_write(
        [("Update", free), check, *strategy.freed_ops(event_id)]),
        f"freed slot {number} (claimed by {holder} without an order naming it)")


def _claim_for_order(strategy, event_id, quota, number, email):
    claim = strategy.slots.update_op(
        {"event_id": partition(event_id, quota), "slot": number},
        "SET holder = :h REMOVE free_in", condition="attribute_not_exists(holder)",
        values={":h": email})
    check = _order_names(strategy, event_id, email, quota, number, names=True)
    return _attempt(lambda: strategy.store.transact_write([("Update", claim), check]),
                    f"slot {number} claimed for {email}'s order")


def _condition_check(table, key, **expression) -> dict:
    # A ConditionCheck member has exactly the shape of a Delete member: table, key, condition.
    return table.delete_op(key, **expression)


def _attempt(operation, done: str) -> list[str]:
    try:
        operation()
    except (ConditionFailed, TransactionCancelled):
        return []  # the data moved since the audit read it: leave it to the next check
    return [done]


def _free_orphan(strategy, event_id, number, holder):
    free = strategy.slots.update_op(
        {"event_id": event_id, "slot": number}, "SET free_in = :e, shuffle = :r REMOVE holder",
        condition="holder = :h AND attribute_not_exists(held_until)",
        values={":e": event_id, ":r": random.randrange(SHUFFLE_RANGE), ":h": holder})
    no_claim = _condition_check(strategy.registrations_table,
        {"event_id": event_id, "email": holder},
        condition="attribute_not_exists(email) OR #slot <> :n", names=SLOT_NAMES,
        values={":n": number})
    return _attempt(lambda: strategy.store.transact_write(
        [("Update", free), ("ConditionCheck", no_claim),
         *strategy.freed_ops(event_id)]),
        f"freed slot {number} (claimed by {holder} without a registration)")


def _unlist(strategy, event_id, number, holder):
    return _attempt(lambda: strategy.slots.update(
        {"event_id": event_id, "slot": number}, "REMOVE free_in",
        condition="holder = :h", values={":h": holder}),
        f"removed held slot {number} from the free list")


def _relist(strategy, event_id, part, number):
    relist = strategy.slots.update_op(
        {"event_id": part, "slot": number}, "SET free_in = :e, shuffle = :r",
        condition="attribute_exists(event_id) AND attribute_not_exists(holder) "
                  "AND attribute_not_exists(free_in)",
        values={":e": part, ":r": random.randrange(SHUFFLE_RANGE)})
    return _attempt(lambda: freed.freed_together(strategy, event_id, ("Update", relist)),
                    f"listed free slot {number} as free")


def _claim_for(strategy, event_id, number, email):
    claim = strategy.slots.update_op(
        {"event_id": event_id, "slot": number}, "SET holder = :h REMOVE free_in",
        condition="attribute_not_exists(holder)", values={":h": email})
    still_names = _condition_check(strategy.registrations_table,
        {"event_id": event_id, "email": email}, condition="#slot = :n", names=SLOT_NAMES,
        values={":n": number})
    return _attempt(lambda: strategy.store.transact_write([("Update", claim), ("ConditionCheck", still_names)]),
                    f"slot {number} claimed for {email}'s registration")


def _match_slot_count(strategy, event, slots, quota=CAPACITY_QUOTA):
    """Create missing slots; delete surplus free ones (held ones stay, and are reported).

    Each write rides in a transaction with a check that the event item's size of the
    quota (its capacity, or its entry of ``quota_capacities``) and version are what this
    repair read, so a concurrent capacity edit is never undone.
    """
    key, part = {"event_id": event.id}, partition(event.id, quota)
    current = strategy.events.get(key, projection="#capacity, version, quota_capacities",
                                  names=CAPACITY_NAMES)
    if current is None:
        return []
    if quota == CAPACITY_QUOTA:
        size, path, names = current["capacity"], "#capacity", CAPACITY_NAMES
    else:
        size, path, names = current["quota_capacities"][quota], "quota_capacities.#q", {"#q": quota}
    difference = size - len(slots)
    if difference > 0:
        start = max(slots, default=-1) + 1
        writes = [("Put", strategy.slots.put_op(free_slot(part, n),
                                                condition="attribute_not_exists(event_id)"))
                  for n in range(start, start + difference)]
        done = "created {} missing free slot(s)"
    else:
        free = sorted((n for n, s in slots.items() if "holder" not in s), reverse=True)
        writes = [("Delete", strategy.slots.delete_op(
            {"event_id": part, "slot": n}, condition="attribute_exists(free_in)"))
            for n in free[:-difference]]
        done = "deleted {} surplus free slot(s)"
    unchanged = ("ConditionCheck", _condition_check(
        strategy.events, key, condition=f"{path} = :c AND version = :v", names=names,
        values={":c": size, ":v": current["version"]}))
    bump = strategy.freed_ops(event.id) if difference > 0 else []  # new free slots
    fixed, per_step = [], TRANSACTION_WRITES - len(bump)
    for start in range(0, len(writes), per_step):
        chunk = writes[start:start + per_step]
        fixed += _attempt(lambda c=chunk: strategy.store.transact_write([unchanged, *c, *bump]),
                          done.format(len(chunk)))
    return fixed
