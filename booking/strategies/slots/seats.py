"""The slots strategy's items: one slot item per seat, the expressions that claim and free
one, and what a registration or a hold stores of its slots (docs/strategies/slots.md)."""
import random
from collections.abc import Iterator

from booking.dynamo.access import Table
from booking.dynamo.transaction import Op
from booking.models import CAPACITY_QUOTA, Registration

SHUFFLE_RANGE = 2**31
PART = "event_id = :e"
ABSENT = "attribute_not_exists(event_id)"
IS_FREE = "attribute_exists(free_in)"
# A slot a booking or a hold may take: free, or held by a hold that has lapsed.
CLAIMABLE = "attribute_exists(free_in) OR held_until <= :now"
CLAIM = "SET holder = :email REMOVE free_in, held_until"
HOLD = "SET holder = :email, held_until = :until REMOVE free_in"
HELD_UNTIL = "holder = :email AND held_until = :until"
UNEXPIRED = "holder = :email AND held_until > :now"
KEEP = "REMOVE held_until"  # a hold's slot becomes its registration's
KEEP_FOR = "SET holder = :person REMOVE held_until"  # ... held under another key
HOLDER = "holder = :email"
FREE = "SET free_in = :e, shuffle = :r REMOVE holder, held_until"
SLOT_NAMES = {"#slot": "slot"}


def partition(event_id: str, quota: str) -> str:
    """The partition of a quota's slot items: the event's own for the capacity."""
    return event_id if quota == CAPACITY_QUOTA else f"{event_id}#{quota}"


def slots_of(slots: Table, part: str, **query) -> Iterator[dict]:
    """A partition's slot items, page by page (``query``: further Query arguments)."""
    return slots.query(key_condition=PART, values={":e": part}, **query)


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


def slot_op(slots: Table, event_id: str, quota: str, number: int, update: str, *,
            condition: str, **values) -> Op:
    """An update of slot ``number`` of ``quota`` (values given without their colon); ``FREE``
    lists it in the free-slot index again, at a new random place."""
    if update == FREE:
        values |= {"e": partition(event_id, quota), "r": random.randrange(SHUFFLE_RANGE)}
    return ("Update", slots.update_op(
        {"event_id": partition(event_id, quota), "slot": number}, update, condition=condition,
        values={f":{name}": value for name, value in values.items()}))


def slot_members(slots: Table, event_id: str, claims: dict[str, list[int]], update: str, *,
                 condition: str, **values) -> list[tuple[str, Op]]:
    """``slot_op`` of every slot of ``claims`` (quota -> numbers), under its member name."""
    return [(slot_name(quota, n), slot_op(slots, event_id, quota, n, update,
                                          condition=condition, **values))
            for quota, numbers in claims.items() for n in numbers]
