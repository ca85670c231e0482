"""Version-checked edits of an event item (seed 001: write only if ``version = :read``).

Every strategy's ``change_capacity`` builds its write of the event item here, so an edit
based on a stale read is refused the same way everywhere, and bumps ``version``.
"""
from dataclasses import dataclass

from booking.dynamo.access import ConditionFailed, Table
from booking.errors import EventNotFound, InvalidBooking, StaleEdit
from booking.strategies.base import CAPACITY_NAMES


@dataclass(frozen=True)
class EventUpdate:
    """UpdateItem arguments: set the capacity and ``changes``, only at ``expected_version``."""

    expression: str
    condition: str
    names: dict
    values: dict

    def kwargs(self) -> dict:
        return {"condition": self.condition, "names": self.names, "values": self.values}


def event_update(*, expected_version: int, capacity: int, changes: dict,
                 extra_condition: str = "") -> EventUpdate:
    """Build the write; ``changes`` maps attribute names to values (None removes one)."""
    names = dict(CAPACITY_NAMES)
    values = {":capacity": capacity, ":expected": expected_version, ":one": 1}
    sets = ["#capacity = :capacity", "version = version + :one"]
    removes = []
    for number, (attribute, value) in enumerate(sorted(changes.items())):
        names[f"#a{number}"] = attribute
        if value is None:
            removes.append(f"#a{number}")
        else:
            values[f":a{number}"] = value
            sets.append(f"#a{number} = :a{number}")
    expression = "SET " + ", ".join(sets) + (" REMOVE " + ", ".join(removes) if removes else "")
    condition = "attribute_exists(event_id) AND version = :expected"
    if extra_condition:
        condition += f" AND {extra_condition}"
    return EventUpdate(expression, condition, names, values)


def change_counted_event(events: Table, event_id: str, *, expected_version: int, capacity: int,
                         changes: dict) -> None:
    """``change_capacity`` of a strategy whose event item also counts the confirmed seats
    (``aggregate``, ``streams``): one conditional update, the version check and "no fewer
    seats than confirmed" together."""
    update = event_update(expected_version=expected_version, capacity=capacity,
                          changes=changes, extra_condition="confirmed_count <= :capacity")
    try:
        events.update({"event_id": event_id}, update.expression, **update.kwargs())
    except ConditionFailed as refused:
        old = refused.old_item
        raise (stale_or_missing(old, expected_version)
               or below_confirmed(old["confirmed_count"])) from None


def stale_or_missing(old_item: dict | None, expected_version: int):
    """The error for a refused event write, or None when the version still matched."""
    if old_item is None:
        return EventNotFound()
    if int(old_item.get("version", -1)) != expected_version:
        return StaleEdit()
    return None


def below_confirmed(confirmed: int) -> InvalidBooking:
    people = "person is" if confirmed == 1 else "people are"
    return InvalidBooking(
        f"{confirmed} {people} registered for this event, so the capacity cannot be lower "
        "than that. Cancel registrations first if you need fewer seats.",
        field="capacity",
    )
