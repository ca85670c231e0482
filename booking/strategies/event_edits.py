"""Version-checked edits of an event item: every strategy's ``change_capacity`` builds its
write here, so a stale edit is refused the same way everywhere (docs/orders.md#resizing-a-quota).
"""
from dataclasses import dataclass
from typing import Any

from booking.dynamo.access import ConditionFailed, Table
from booking.dynamo.expressions import Actions, Condition, all_of, attr
from booking.dynamo.expressions import ConditionCheck
from booking.errors import EventNotFound, InvalidBooking, StaleEdit
from booking.models import CAPACITY_QUOTA, Event

VERSION = attr("version")


@dataclass(frozen=True)
class EventUpdate:
    """UpdateItem arguments: set the capacity and ``changes``, only at ``expected_version``."""

    expression: Actions
    condition: Condition

    def kwargs(self) -> dict[str, Any]:
        return {"condition": self.condition}


def event_update(*, expected_version: int, capacity: int, changes: dict[str, Any],
                 extra_condition: Condition | None = None,
                 quotas: dict[str, int] | None = None) -> EventUpdate:
    """Build the write; ``changes`` maps attribute names to values (None removes one),
    ``quotas`` further quotas to their new sizes; ``extra_condition`` adds to the version
    check."""
    actions = Actions().set("capacity", capacity).set(VERSION, VERSION.plus(1))
    for quota in sorted(quotas or {}):
        actions = actions.set(attr("quota_capacities", quota), (quotas or {})[quota])
    for attribute, value in sorted(changes.items()):
        actions = actions.remove(attribute) if value is None else actions.set(attribute, value)
    condition = attr("event_id").exists() & VERSION.eq(expected_version)
    return EventUpdate(actions, condition if extra_condition is None
                       else condition & extra_condition)


def size_as_read(events: Table, event_id: str, quota: str, size: int,
                 version: int) -> ConditionCheck:
    """A ConditionCheck: the event item still gives ``quota`` ``size`` seats at ``version``
    (a repair's writes ride with it, so a concurrent capacity edit is never undone)."""
    stored = attr("capacity") if quota == CAPACITY_QUOTA else attr("quota_capacities", quota)
    return ConditionCheck(events, {"event_id": event_id},
                          stored.eq(size) & VERSION.eq(version))


def change_counted_event(strategy: Any, event: Event, *, expected_version: int, capacity: int,
                         changes: dict[str, Any], quotas: dict[str, int] | None = None) -> None:
    """``change_capacity`` where the event item also counts the seats (aggregate, streams):
    one conditional update, the version check and "no fewer seats than confirmed" (and
    held) together, for the capacity and every quota resized."""
    room = [attr("confirmed_count").le(capacity), *(
        attr("quota_counts", quota).le(size) for quota, size in sorted((quotas or {}).items()))]
    update = event_update(expected_version=expected_version, capacity=capacity,
                          changes=changes, extra_condition=all_of(room), quotas=quotas)
    try:
        strategy.events.update({"event_id": event.id}, update.expression, **update.kwargs())
    except ConditionFailed as refused:
        old = refused.old_item
        refusal = stale_or_missing(old, expected_version)
        if refusal is not None or old is None:  # (no item: stale_or_missing said so)
            raise refusal or EventNotFound() from None
        if int(old["confirmed_count"]) > capacity:
            raise below_confirmed(old["confirmed_count"]) from None
        raise quota_below_taken(old.get("quota_counts") or {}, quotas) from None


def quota_below_taken(taken: dict, quotas: dict | None) -> InvalidBooking:
    """The error for the first quota whose new size is below its seats ``taken``."""
    sizes = quotas or {}
    return next(below_taken(quota, int(taken.get(quota, 0))) for quota in sorted(sizes)
                if int(taken.get(quota, 0)) > sizes[quota])


def stale_or_missing(old_item: dict | None,
                     expected_version: int) -> EventNotFound | StaleEdit | None:
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
