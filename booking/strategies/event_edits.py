"""Version-checked edits of an event item: every strategy's ``change_capacity`` builds its
write here, so a stale edit is refused the same way everywhere (docs/orders.md#resizing-a-quota).
"""
from dataclasses import dataclass

from booking.dynamo.access import ConditionFailed, Table
from booking.dynamo.transaction import Op
from booking.errors import EventNotFound, InvalidBooking, StaleEdit
from booking.models import CAPACITY_QUOTA, Event
from booking.strategies.base import CAPACITY_NAMES

SET_CAPACITY = ["#capacity = :capacity", "version = version + :one"]
AT_VERSION = "attribute_exists(event_id) AND version = :expected"
NOT_BELOW_CONFIRMED = "confirmed_count <= :capacity"
SIZE_AS_READ = "#capacity = :c AND version = :v"
QUOTA_SIZE_AS_READ = "quota_capacities.#q = :c AND version = :v"


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
                 extra_condition: str = "", quotas: dict | None = None) -> EventUpdate:
    """Build the write; ``changes`` maps attribute names to values (None removes one),
    ``quotas`` further quotas to their new sizes (``#u<n>``/``:u<n>`` in the expression,
    numbered in name order, so ``extra_condition`` may name them: ``quota_size_names``)."""
    quotas = quotas or {}
    names = dict(CAPACITY_NAMES)
    values = {":capacity": capacity, ":expected": expected_version, ":one": 1}
    sets = list(SET_CAPACITY)
    for quota, (name, value) in quota_size_names(quotas).items():
        names[name], values[value] = quota, quotas[quota]
        sets.append(f"quota_capacities.{name} = {value}")
    removes = []
    for number, (attribute, value) in enumerate(sorted(changes.items())):
        names[f"#a{number}"] = attribute
        if value is None:
            removes.append(f"#a{number}")
        else:
            values[f":a{number}"] = value
            sets.append(f"#a{number} = :a{number}")
    expression = "SET " + ", ".join(sets) + (" REMOVE " + ", ".join(removes) if removes else "")
    condition = f"{AT_VERSION} AND {extra_condition}" if extra_condition else AT_VERSION
    return EventUpdate(expression, condition, names, values)


def size_as_read(events: Table, event_id: str, quota: str, size: int, version: int) -> Op:
    """A ConditionCheck: the event item still gives ``quota`` ``size`` seats at ``version``
    (a repair's writes ride with it, so a concurrent capacity edit is never undone)."""
    condition, names = ((SIZE_AS_READ, CAPACITY_NAMES) if quota == CAPACITY_QUOTA
                        else (QUOTA_SIZE_AS_READ, {"#q": quota}))
    # A ConditionCheck member has exactly the shape of a Delete member.
    return ("ConditionCheck", events.delete_op({"event_id": event_id}, condition=condition,
                                               names=names, values={":c": size, ":v": version}))


def quota_size_names(quotas: dict | None) -> dict[str, tuple[str, str]]:
    """Each further quota's (attribute name, value name) in an ``event_update``."""
    return {quota: (f"#u{number}", f":u{number}")
            for number, quota in enumerate(sorted(quotas or {}))}


def change_counted_event(strategy, event: Event, *, expected_version: int, capacity: int,
                         changes: dict, quotas: dict | None = None) -> None:
    """``change_capacity`` where the event item also counts the seats (aggregate, streams):
    one conditional update, the version check and "no fewer seats than confirmed" (and
    held) together, for the capacity and every quota resized."""
    room = [NOT_BELOW_CONFIRMED] + [
        f"quota_counts.{name} <= {value}" for name, value in quota_size_names(quotas).values()]
    update = event_update(expected_version=expected_version, capacity=capacity,
                          changes=changes, extra_condition=" AND ".join(room), quotas=quotas)
    try:
        strategy.events.update({"event_id": event.id}, update.expression, **update.kwargs())
    except ConditionFailed as refused:
        old = refused.old_item
        refusal = stale_or_missing(old, expected_version)
        if refusal is None and int(old["confirmed_count"]) > capacity:
            refusal = below_confirmed(old["confirmed_count"])
        raise refusal or quota_below_taken(old.get("quota_counts") or {}, quotas) from None


def quota_below_taken(taken: dict, quotas: dict | None) -> InvalidBooking:
    """The error for the first quota whose new size is below its seats ``taken``."""
    sizes = quotas or {}
    return next(below_taken(quota, int(taken.get(quota, 0))) for quota in sorted(sizes)
                if int(taken.get(quota, 0)) > sizes[quota])


def stale_or_missing(old_item: dict | None, expected_version: int):
    """The error for a refused event write, or None when the version still matched."""
    if old_item is None:
        return EventNotFound()
    if int(old_item.get("version", -1)) != expected_version:
        return StaleEdit()
    return None


def below_taken(quota: str, taken: int) -> InvalidBooking:
    """A quota resized below the seats it has confirmed or held (the capacity's error is
    ``below_confirmed``)."""
    if quota == CAPACITY_QUOTA:
        return below_confirmed(taken)
    seats = "seat is" if taken == 1 else "seats are"
    return InvalidBooking(
        f"{taken} {seats} confirmed or held in quota {quota!r}, so its size cannot be lower "
        "than that. Cancel orders first if you need fewer seats.", field="quotas")


def below_confirmed(confirmed: int) -> InvalidBooking:
    people = "person is" if confirmed == 1 else "people are"
    return InvalidBooking(
        f"{confirmed} {people} registered for this event, so the capacity cannot be lower "
        "than that. Cancel registrations first if you need fewer seats.", field="capacity")
