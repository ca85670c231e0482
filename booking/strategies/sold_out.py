""""Full" from a read: where a booking was lately refused "full" (``SoldOutHints``), the
next first reads (``read_first``). docs/strategies/lock_table.md#full-from-a-read
"""
import threading
from dataclasses import dataclass, field

from booking.dynamo import items
from booking.dynamo.access import Table
from booking.errors import AlreadyRegistered, EventNotFound
from booking.exactly_once.riders import Riders
from booking.models import CAPACITY_QUOTA, Registration


def hint_key(event_id: str, quota: str = CAPACITY_QUOTA) -> str:
    """The hint of an event's capacity is the event's own; a further quota's names it."""
    return event_id if quota == CAPACITY_QUOTA else f"{event_id}#{quota}"


@dataclass
class SoldOutHints:
    """Keys (``hint_key``) a booking in this process was lately refused "full" for."""

    marks: dict = field(default_factory=dict)  # key -> the strategy's mark (None: it keeps none)
    lock: threading.Lock = field(default_factory=threading.Lock)

    def note(self, key: str, mark=None) -> None:
        with self.lock:
            if mark is not None or key not in self.marks:
                self.marks[key] = mark

    def clear(self, key: str) -> None:
        with self.lock:
            self.marks.pop(key, None)

    def mark(self, key: str):
        """The mark noted with ``key`` (None: none)."""
        with self.lock:
            return self.marks.get(key)

    def any_of(self, keys) -> bool:
        return any(key in self.marks for key in keys)

    def any_for(self, event_id: str) -> bool:
        """Whether the event or one of its quotas is hinted."""
        with self.lock:
            return any(key == event_id or key.startswith(f"{event_id}#") for key in self.marks)


@dataclass(frozen=True)
class FirstRead:
    """What ``read_first`` found: the counter items (None where absent), and this
    request's registration when it had already booked (or a resend of it applied)."""

    counters: list
    answered: Registration | None = None


def read_first(strategy, counters: list[tuple[Table, dict]], registration: Registration,
               riders: Riders, *, registrations: Table) -> FirstRead:
    """One consistent BatchGetItem of ``counters``, the person's item in ``registrations``
    and the riders' reads (the request row). Raises ``AlreadyRegistered`` for a registered
    person; ``EventNotFound`` when the first counter is absent."""
    mine = (registrations, {"event_id": registration.event_id, "email": registration.email})
    found = strategy.store.batch_get([*counters, mine, *riders.reads()])
    counted, stored, rows = found[:len(counters)], found[len(counters)], found[len(counters) + 1:]
    answered = riders.answer_read(rows[0]) if rows and rows[0] is not None else None
    if answered is not None:
        return FirstRead(counted, answered)
    if counted[0] is None:
        raise EventNotFound()
    if strategy.tokens.is_mine(stored, registration):
        return FirstRead(counted, registration)
    if stored is not None:
        raise AlreadyRegistered(existing=items.registration_from_item(stored))
    return FirstRead(counted)
