"""The slots strategy's items: one slot item per seat, the expressions that claim and free
one, and what a registration or a hold stores of its slots (docs/strategies/slots.md)."""
import random
from collections.abc import Iterator
from typing import Any

from booking.dynamo.access import Table
from booking.dynamo.expressions import Actions, Condition, attr
from booking.dynamo.expressions import Member, Update
from booking.models import CAPACITY_QUOTA, Registration

SHUFFLE_RANGE = 2**31
HOLDER, HELD_UNTIL, FREE_IN = attr("holder"), attr("held_until"), attr("free_in")
ABSENT = attr("event_id").not_exists()
IS_FREE = FREE_IN.exists()
KEEP = Actions().remove(HELD_UNTIL)  # a hold's slot becomes its registration's


class Free:
    """The update that lists a slot free again (at a new random place of the index)."""


FREE = Free()
SlotUpdate = Actions | Free


def claimable(now: float) -> Condition:
    """A slot a booking or a hold may take: free, or held by a hold that has lapsed."""
    return IS_FREE | HELD_UNTIL.le(now)


def claim(email: str) -> Actions:
    return Actions().set(HOLDER, email).remove(FREE_IN, HELD_UNTIL)


def hold(email: str, until: float) -> Actions:
    return Actions().set(HOLDER, email).set(HELD_UNTIL, until).remove(FREE_IN)


def keep_for(person: str) -> Actions:
    """A slot held under another key kept, as ``person``'s."""
    return Actions().set(HOLDER, person).remove(HELD_UNTIL)


def held_by(email: str) -> Condition:
    return HOLDER.eq(email)


def held_until(email: str, until: float) -> Condition:
    return HOLDER.eq(email) & HELD_UNTIL.eq(until)


def unexpired(email: str, now: float) -> Condition:
    return HOLDER.eq(email) & HELD_UNTIL.gt(now)


def partition(event_id: str, quota: str) -> str:
    """The partition of a quota's slot items: the event's own for the capacity."""
    return event_id if quota == CAPACITY_QUOTA else f"{event_id}#{quota}"


def slots_of(slots: Table, part: str, **query: Any) -> Iterator[dict]:
    """A partition's slot items, page by page (``query``: further Query arguments)."""
    return slots.query(key_condition=attr("event_id").eq(part), **query)


def free_slot(part: str, number: int) -> dict:
    """A new free slot item (listed in the sparse free-slot index by ``free_in``)."""
    return {"event_id": part, "slot": number, "free_in": part,
            "shuffle": random.randrange(SHUFFLE_RANGE)}


def slot_name(quota: str, number: int) -> str:
    """A slot's member name in a transaction."""
    return f"slot:{quota}:{number}"


def claimed(item: dict) -> dict[str, list[int]]:
    """The slots a registration item or an offer's ``ref`` names, per quota."""
    if "slot" in item:
        return {CAPACITY_QUOTA: [int(item["slot"])]}
    return {quota: [int(n) for n in numbers]
            for quota, numbers in (item.get("slots") or {}).items()}


def slots_value(registration: Registration, claims: dict[str, list[int]]) -> dict:
    """What a registration item stores of ``claims``: a plain booking's as a hold's."""
    return hold_ref(claims) if registration.ticket_counts is None else {"slots": claims}


def hold_ref(claims: dict[str, list[int]]) -> dict:
    """What an offer stores of its held slots: one capacity slot as ``slot``, else
    ``slots`` per quota (read back by ``claimed``; docs/strategies/slots.md)."""
    if list(claims) == [CAPACITY_QUOTA] and len(claims[CAPACITY_QUOTA]) == 1:
        return {"slot": claims[CAPACITY_QUOTA][0]}
    return {"slots": claims}


def slot_op(slots: Table, event_id: str, quota: str, number: int, update: SlotUpdate, *,
            condition: Condition) -> Update:
    """An update of slot ``number`` of ``quota``; ``FREE`` lists it in the free-slot index
    again, at a new random place."""
    part = partition(event_id, quota)
    if isinstance(update, Free):
        update = (Actions().set(FREE_IN, part).set("shuffle", random.randrange(SHUFFLE_RANGE))
                  .remove(HOLDER, HELD_UNTIL))
    return Update(slots, {"event_id": part, "slot": number}, update, condition)


def slot_members(slots: Table, event_id: str, claims: dict[str, list[int]],
                 update: SlotUpdate, *, condition: Condition) -> list[tuple[str, Member]]:
    """``slot_op`` of every slot of ``claims`` (quota -> numbers), under its member name."""
    return [(slot_name(quota, n), slot_op(slots, event_id, quota, n, update,
                                          condition=condition))
            for quota, numbers in claims.items() for n in numbers]
