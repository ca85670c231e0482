""""Full" from a read: where a booking was lately refused "full" (``base.SoldOutHints``),
the next first reads (``read_first``). docs/strategies/lock_table.md#full-from-a-read
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

from booking.dynamo import items
from booking.dynamo.access import Table
from booking.errors import AlreadyRegistered, EventNotFound
from booking.exactly_once.riders import Riders
from booking.models import Registration

if TYPE_CHECKING:  # the strategies import this module
    from booking.strategies.base import Strategy


@dataclass(frozen=True)
class FirstRead:
    """What ``read_first`` found: the counter items (None where absent), and this
    request's registration when it had already booked (or a resend of it applied)."""

    counters: list
    answered: Registration | None = None


def read_first(strategy: Strategy, counters: list[tuple[Table, dict]], registration: Registration,
               riders: Riders, *, registrations: Table) -> FirstRead:
    """One consistent BatchGetItem of ``counters``, the person's item in ``registrations``
    and the riders' reads (the request row). Raises ``AlreadyRegistered`` for a registered
    person; ``EventNotFound`` when the first counter is absent."""
    mine = (registrations, {"event_id": registration.event_id, "email": registration.email})
    found = strategy.store.batch_get([*counters, mine, *riders.reads()])
    counted, stored, rows = found[:len(counters)], found[len(counters)], found[len(counters) + 1:]
    answered = riders.answer_read(rows)
    if answered is not None:
        return FirstRead(counted, answered)
    if counted[0] is None:
        raise EventNotFound()
    if strategy.tokens.is_mine(stored, registration):
        return FirstRead(counted, registration)
    if stored is not None:
        raise AlreadyRegistered(existing=items.registration_from_item(stored))
    return FirstRead(counted)
