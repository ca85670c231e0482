""""Full" from a read: how a sold-out event (or quota) refuses people without a write.

A booking's write on a full event is refused by the hot item's condition, and a refused
transaction is charged as a write: on ``lock_table`` 8 WCU (2 on the lock item), on
``aggregate`` twice the event item's size. Once an event is sold out, almost every request
is a rejection, so the hot item's 1,000 WCU a second would bound how many people a second
can be told "full". A consistent read says "full" just as truly, for read units.

Each process remembers, per event (or event and quota), that a booking was lately refused
"full" (``SoldOutHints``). The hint only picks the path: with it set, a booking first reads,
in one consistent BatchGetItem (``read_first``), the counter items it would write, the
person's registration and the request row. That read decides:

- the request already booked, or the person is registered: answered as the write would;
- no seat at that instant, as the write's condition would judge it (a lapsed waiting-list
  hold the write could take over counts as a seat): "full", true at the instant of the read;
- a seat: the hint is cleared and the booking writes, as without a hint.

A process that never saw the refusal pays one refused write first. The hint is never an
answer: a seat freed by another process is seen by the next read.

A strategy whose "full" is not a refused write (``slots``: no counter item) keeps a mark
with the hint (``note(key, mark)``): what its read must still find for "full" to hold
(``slots/freed.py``: the freed epoch it verified the sell-out at).
"""
import threading
from dataclasses import dataclass, field

from booking.dynamo import items
from booking.dynamo.access import Table
from booking.errors import AlreadyRegistered, EventNotFound
from booking.exactly_once.request_log import Request
from booking.models import CAPACITY_QUOTA, Registration


def hint_key(event_id: str, quota: str = CAPACITY_QUOTA) -> str:
    """The hint of an event's capacity is the event's own; a further quota's names it."""
    return event_id if quota == CAPACITY_QUOTA else f"{event_id}#{quota}"


@dataclass
class SoldOutHints:
    """Keys (``hint_key``) a booking in this process was lately refused "full" for."""

    keys: set = field(default_factory=set)
    marks: dict = field(default_factory=dict)  # key -> the strategy's mark, if it keeps one
    lock: threading.Lock = field(default_factory=threading.Lock)

    def note(self, key: str, mark=None) -> None:
        with self.lock:
            self.keys.add(key)
            if mark is not None:
                self.marks[key] = mark

    def clear(self, key: str) -> None:
        with self.lock:
            self.keys.discard(key)
            self.marks.pop(key, None)

    def mark(self, key: str):
        """The mark noted with ``key`` (None: none)."""
        with self.lock:
            return self.marks.get(key)

    def any_of(self, keys) -> bool:
        return any(key in self.keys for key in keys)

    def any_for(self, event_id: str) -> bool:
        """Whether the event or one of its quotas is hinted."""
        with self.lock:
            return any(key == event_id or key.startswith(f"{event_id}#") for key in self.keys)


@dataclass(frozen=True)
class FirstRead:
    """What ``read_first`` found: the counter items (None where absent), and this
    request's registration when it had already booked (or a resend of it applied)."""

    counters: list
    answered: Registration | None = None


def read_first(strategy, counters: list[tuple[Table, dict]], registration: Registration,
               request: Request, *, registrations: Table | None = None,
               projections: dict | None = None) -> FirstRead:
    """One consistent BatchGetItem of ``counters``, the person's registration item (in
    ``registrations``, when the strategy keeps one) and the request row. Raises
    ``AlreadyRegistered`` for a registered person; ``EventNotFound`` when the first
    counter is absent."""
    mine = [(registrations, {"event_id": registration.event_id, "email": registration.email})
            ] if registrations is not None else []
    found = strategy.store.batch_get([*counters, *mine, *strategy.requests.reads(request)],
                                     projections=projections)
    counted, rest = found[:len(counters)], found[len(counters):]
    row = rest[len(mine)] if len(rest) > len(mine) else None
    answered = strategy.requests.answer(request, row) if row is not None else None
    if answered is not None:
        return FirstRead(counted, answered)
    if counted[0] is None:
        raise EventNotFound()
    if mine:
        stored = rest[0]
        if strategy.tokens.is_mine(stored, registration):
            return FirstRead(counted, registration)
        if stored is not None:
            raise AlreadyRegistered(existing=items.registration_from_item(stored))
    return FirstRead(counted)
