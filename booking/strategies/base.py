"""What every strategy shares: the transaction loop, retries, write tokens, order helpers,
the registration item's put, and the per-process hints of a sell-out.

``Strategy`` is the contract (``contract.py``) plus the loop that writes named ``Members``
with their ``Riders``: docs/development/adding-a-strategy.md.
"""
import dataclasses
import hashlib
import random
import threading
import time
from contextlib import suppress
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass, field
from typing import Any, NotRequired, Protocol, TypedDict, TypeVar, Unpack, overload

from booking.dynamo import items
from booking.dynamo.access import PastDeadline, Store, Throttled, TransactionCancelled, time_left
from booking.dynamo.tables import EVENTS, REGISTRATIONS, TableSpec
from booking.errors import (BookingContention, EventFull, EventNotFound, InvalidBooking,
                            NotRegistered)
from booking.dynamo.expressions import (Actions, Condition, Delete, Members, Put, Refusal, Update,
                                        attr, projection)
from booking.exactly_once.request_log import Request, RequestLog
from booking.exactly_once.riders import Riders
from booking.models import CAPACITY_QUOTA, Availability, Event, Order, Registration
from booking.strategies.contract import Audited, Seats

EVENT_CAPACITY = projection("event_id", "capacity")
NOT_REGISTERED = attr("email").not_exists()  # a registration item's put or absence

T = TypeVar("T")  # what a write answers when it applied
D = TypeVar("D")  # what a refusal's decode answers


def now_ms() -> int:
    """Epoch milliseconds: waiting-list holds keep their times as integers."""
    return int(time.time() * 1000)


def client_token(registration_id: str, purpose: str) -> str:
    """A ClientRequestToken (36 chars) fixed by the registration and the write's purpose."""
    return hashlib.sha256(f"{registration_id}:{purpose}".encode()).hexdigest()[:36]


class WriteTokens:
    """How a strategy recognises its own write when the answer to it was lost."""

    def client_token(self, registration_id: str, purpose: str) -> str | None:
        return client_token(registration_id, purpose)

    def is_mine(self, stored: dict | None, registration: Registration) -> bool:
        """True when a refused write found this very registration: a resend that applied."""
        return stored is not None and stored.get("registration_id") == registration.registration_id


@dataclass(frozen=True)
class RetryPolicy:
    """Bounded retries with exponential backoff and full jitter, within the thread's
    deadline (``booking.dynamo.access.deadline``)."""

    max_attempts: int = 10
    base_delay: float = 0.01
    max_delay: float = 0.5

    def attempts(self) -> Iterator[int]:
        """Yield attempt numbers, sleeping before each retry; raise ``BookingContention``
        when all are spent, ``PastDeadline`` when the pause would end past the deadline."""
        for attempt in range(self.max_attempts):
            if attempt:
                pause = random.uniform(0, min(self.max_delay, self.base_delay * 2**attempt))
                left = time_left()
                if left is not None and pause >= left:
                    raise PastDeadline()
                time.sleep(pause)
            yield attempt
        raise BookingContention()


def expired_holder(item: dict | None, now: float, prefer: str | None = None) -> str | None:
    """An e-mail whose hold in ``item``'s ``holds`` map has expired (``prefer``'s own
    first), or None: the seat a write may take over with ``holds.#h <= :now``."""
    holds, orders = (item or {}).get("holds") or {}, (item or {}).get("hold_seats") or {}
    # A hold of an order is never taken over (its seats differ): it is released instead.
    expired = [email for email, until in sorted(holds.items())
               if until <= now and email not in orders]
    return prefer if prefer in expired else (expired[0] if expired else None)


def quota_order(order: Order) -> list[str]:
    """The quotas an order touches in a fixed order: the capacity first, then by name (as
    pretix locks quotas sorted), so every strategy reads and reports them alike."""
    return sorted(order.seats, key=lambda quota: (quota != CAPACITY_QUOTA, quota))


def checked_order(order: Order, found: dict[str, tuple[int, int]]) -> Order:
    """What a refused order learns from the quotas' stored (capacity, taken): raises
    ``EventFull`` naming the first quota without room for its seats, else returns the
    order with the stored capacities (its guess was stale: write again with these)."""
    for quota in (q for q in quota_order(order) if q in found):
        capacity, taken = found[quota]
        if taken + order.seats[quota] > capacity:
            raise order_full(order, quota)
    for quota, (capacity, _) in found.items():
        order = order.with_capacity(quota, capacity)
    return order


def order_full(order: Order, quota: str) -> EventFull:
    """``EventFull`` naming ``quota``; for several seats, says the order did not fit (in
    the capacity too: "the event is full" would be untrue while seats are left)."""
    if quota == CAPACITY_QUOTA and order.seats[quota] > 1:
        return EventFull("Sorry, the event has not enough seats left for this order.",
                         quota=quota)
    return EventFull(quota=quota)


def tickets_left(stored: Registration, release: dict[str, int]) -> dict[str, int]:
    """The tickets an order keeps when ``release`` is cancelled ({}: all of them);
    ``InvalidBooking`` when it asks to cancel seats the order does not hold."""
    held = stored.tickets
    for ticket_type, quantity in release.items():
        if quantity > held.get(ticket_type, 0):
            raise InvalidBooking(f"Your order holds {held.get(ticket_type, 0)} "
                                 f"{ticket_type!r} ticket(s): you cannot cancel {quantity}.",
                                 field="tickets")
    left = {t: n - release.get(t, 0) for t, n in held.items()}
    return {t: n for t, n in left.items() if n}


def part_of(stored: Registration, tickets: dict[str, int], request: Request) -> Registration:
    """``stored`` holding only ``tickets``: the answer of ``request``, a cancellation of
    part of the order (its notice is an e-mail of its own)."""
    return dataclasses.replace(stored, ticket_counts=dict(tickets),
                               part_request_id=request.request_id)


def cancellation(stored: Registration, release: dict[str, int] | None,
                 request: Request) -> tuple[dict[str, int], dict[str, int], Registration]:
    """What cancelling ``release`` of ``stored`` (None: all of it) keeps ({}: nothing),
    frees and answers (``part_of`` for a part); raises as ``tickets_left``."""
    if release is None or not (keep := tickets_left(stored, release)):
        return {}, stored.tickets, stored
    return keep, release, part_of(stored, release, request)


# --- where a booking was lately refused "full": a hint picking the read path (sold_out.py) --
def hint_key(event_id: str, quota: str = CAPACITY_QUOTA) -> str:
    """The hint of an event's capacity is the event's own; a further quota's names it."""
    return event_id if quota == CAPACITY_QUOTA else f"{event_id}#{quota}"


class SoldOutMark(Protocol):
    """What a strategy notes with a hint to verify "full" by a later read (slots:
    ``freed.Seen``)."""

    def holds(self, epoch_item: dict, now: float) -> bool: ...


@dataclass
class SoldOutHints:
    """Keys (``hint_key``) a booking in this process was lately refused "full" for."""

    # key -> the strategy's mark (None: it keeps none)
    marks: dict[str, SoldOutMark | None] = field(default_factory=dict)
    lock: threading.Lock = field(default_factory=threading.Lock)

    def note(self, key: str, mark: SoldOutMark | None = None) -> None:
        with self.lock:
            if mark is not None or key not in self.marks:
                self.marks[key] = mark

    def clear(self, key: str) -> None:
        with self.lock:
            self.marks.pop(key, None)

    def mark(self, key: str) -> SoldOutMark | None:
        """The mark noted with ``key`` (None: none)."""
        with self.lock:
            return self.marks.get(key)

    def any_of(self, keys: Iterable[str]) -> bool:
        return any(key in self.marks for key in keys)

    def any_for(self, event_id: str) -> bool:
        """Whether the event or one of its quotas is hinted."""
        with self.lock:
            return any(key == event_id or key.startswith(f"{event_id}#") for key in self.marks)


class WriteAgain:
    """An attempt's answer that is not a result: write again (a conflict, or a refusal a
    new attempt can settle). ``transact`` tries again itself; ``AGAIN`` is the one value."""

    __slots__ = ()

    def __repr__(self) -> str:
        return "AGAIN"


class ReadAgain:
    """A ``decode``'s answer that is not a result: what the write relied on changed since
    it was read; the caller reads again (``remove_as_read``). ``READ_AGAIN`` is the one
    value."""

    __slots__ = ()

    def __repr__(self) -> str:
        return "READ_AGAIN"


AGAIN = WriteAgain()
READ_AGAIN = ReadAgain()
# An attempt's answer that asks for another: ``transact`` writes again on ``AGAIN``; a
# caller reads again on either (``remove_as_read``).
TryAgain = WriteAgain | ReadAgain


@dataclass(frozen=True)
class Rewrite:
    """``decode``'s answer to write other members instead (take an expired hold's seat,
    or the order again with the capacities its refusal showed)."""

    members: Members
    token: str | None = None


class StrategyOptions(TypedDict):
    """``Strategy.__init__``'s arguments, as a subclass's ``__init__`` passes them on."""

    store: Store
    retry: NotRequired[RetryPolicy | None]
    requests: NotRequired[RequestLog | None]
    tokens: NotRequired[WriteTokens | None]


class Strategy(Seats, Audited):
    """A strategy: the contract's ``Seats`` and ``Audited`` (``contract.py``), and the
    transaction loop they share. A strategy whose seats can be held for the waiting list's
    offers is a ``Holds`` too (every product strategy; the unguarded control is not)."""

    name: str = ""
    max_capacity: int = 0
    guarded: bool = True
    description: str = ""

    def __init__(self, *, store: Store, retry: RetryPolicy | None = None,
                 requests: RequestLog | None = None, tokens: WriteTokens | None = None):
        self.store = store
        self.retry = retry or RetryPolicy()
        self.requests = requests or RequestLog(store)
        self.tokens = tokens or WriteTokens()
        # Per process: where a booking was lately refused "full" (a hint picking the read
        # path, never an answer: ``sold_out.py``).
        self.sold_out = SoldOutHints()

    def sold_out_lately(self, event_id: str) -> bool:
        return self.sold_out.any_for(event_id)

    def availabilities(self, events: list[Event]) -> dict[str, Availability]:
        """One by one (strategies whose counts live in items read them in one batch)."""
        found = {}
        for event in events:
            with suppress(EventNotFound):
                found[event.id] = self.availability(event)
        return found

    def between_read_and_write(self) -> None:
        """Hook between a read and the write that depends on it (tests replace it)."""

    # --- the shared "transaction, retry, decode the refusal" loop -----------------
    @overload
    def transact(self, members: Members, *, written: T,
                 decode: Callable[[Refusal], D | Rewrite | None], token: str | None = None,
                 riders: None = None) -> T | D: ...

    @overload
    def transact(self, members: Members, *, written: T,
                 decode: Callable[[Refusal], D | Rewrite | None], token: str | None = None,
                 riders: Riders) -> T | D | Registration: ...

    def transact(self, members: Members, *, written: T,
                 decode: Callable[[Refusal], D | Rewrite | None], token: str | None = None,
                 riders: Riders | None = None) -> T | D | Registration:
        """Write ``members`` in one transaction and return ``written``, retrying
        conflicts with ``self.retry`` (``BookingContention`` once spent, caused by the last
        refusal: a throttle stays visible). A refusal is answered by ``transact_once``; a
        ``Rewrite`` replaces the members and token."""
        refusals: list[TransactionCancelled] = []

        def noted(refusal: Refusal) -> D | Rewrite | None:
            refusals[:] = [refusal.cancelled]
            return decode(refusal)

        try:
            for _ in self.retry.attempts():
                outcome = self.transact_once(members, written=written, decode=noted,
                                             token=token, riders=riders)
                if isinstance(outcome, Rewrite):
                    members, token = outcome.members, outcome.token
                elif not isinstance(outcome, WriteAgain):
                    # T | D | Registration: mypy joins the union it infers for
                    # ``transact_once``'s D (D | Rewrite) to ``object``.
                    return outcome  # type: ignore[return-value]
            raise BookingContention()  # not reached: ``attempts`` raises it once spent
        except Throttled:
            raise  # the store's own: its cause is botocore's error
        except BookingContention as spent:
            raise spent from (refusals[0] if refusals else None)

    @overload
    def transact_once(self, members: Members, *, written: T,
                      decode: Callable[[Refusal], D | TryAgain | None], token: str | None = None,
                      riders: None = None) -> T | D | TryAgain: ...

    @overload
    def transact_once(self, members: Members, *, written: T,
                      decode: Callable[[Refusal], D | TryAgain | None], token: str | None = None,
                      riders: Riders) -> T | D | TryAgain | Registration: ...

    def transact_once(self, members: Members, *, written: T,
                      decode: Callable[[Refusal], D | TryAgain | None], token: str | None = None,
                      riders: Riders | None = None) -> T | D | TryAgain | Registration:
        """One attempt: ``written``, or for a refusal, in order: the riders' answer, else
        ``decode(refusal)`` (a result, ``AGAIN``, ``READ_AGAIN``, a ``Rewrite``, or it
        raises the domain error), else ``AGAIN`` for a conflict; anything else is raised as
        it came."""
        try:
            self.store.transact_write(members.operations, token=token)
            return written
        except TransactionCancelled as cancelled:
            refusal = members.refusal(cancelled)
            answered = riders.answer(refusal) if riders is not None else None
            if answered is not None:
                return answered  # this request already wrote (or a resend of ours)
            outcome = decode(refusal)
            if outcome is not None:
                return outcome
            if refusal.conflict:
                return AGAIN
            raise

    def remove_as_read(self, read: Callable, remove: Callable, *, riders: Riders,
                       require_event: Callable) -> Registration:
        """The cancel loop: ``read()`` the registration (None: nothing to cancel), then
        ``remove(stored)``, reading again while it answers ``AGAIN`` or ``READ_AGAIN``."""
        for _ in self.retry.attempts():
            stored = read()
            if stored is None:  # an earlier run of this very request may have cancelled it
                answered = riders.recall()
                if answered is not None:
                    return answered
                require_event()
                raise NotRegistered()
            try:
                removed = remove(stored)
            except InvalidBooking:
                # Part of an order the order no longer holds: an earlier run of this very
                # request may have freed it (its repeat answers as it did), else refused.
                answered = riders.recall()
                if answered is None:
                    raise
                return answered
            if not isinstance(removed, (WriteAgain, ReadAgain)):
                return removed
        raise BookingContention()


def availability_from_batch(strategy: Strategy, event: Event) -> Availability:
    """``availability`` of a strategy whose ``availabilities`` reads in one batch."""
    if (found := strategy.availabilities([event]).get(event.id)) is None:
        raise EventNotFound()
    return found


class OneItemPerPerson(Strategy):
    """Registrations as items keyed by (event id, e-mail key) in ``registrations_table``
    (``registrations_spec``), beside the ``events`` table: lock_table, shards, slots, streams."""

    registrations_spec: TableSpec = REGISTRATIONS

    def __init__(self, **kwargs: Unpack[StrategyOptions]) -> None:
        super().__init__(**kwargs)
        self.events = self.store.table(EVENTS)
        self.registrations_table = self.store.table(self.registrations_spec)

    def find(self, event_id: str, email: str) -> Registration | None:
        item = self.registrations_table.get({"event_id": event_id, "email": email})
        if item is None:
            self._require_event(event_id)
        return items.registration_or_none(item)

    def registrations(self, event_id: str) -> Iterator[Registration]:
        for item in self.registrations_table.query(key_condition=attr("event_id").eq(event_id)):
            yield items.registration_from_item(item)

    def registration_put(self, registration: Registration, **stored: Any) -> Put:
        """Put ``registration`` (and ``stored``), only if the person holds none."""
        return Put(self.registrations_table, items.registration_item(registration, **stored),
                   NOT_REGISTERED)

    def _stored(self, event_id: str, email: str,
                registration_id: str | None = None) -> dict | None:
        """The person's registration item, if it is ``registration_id`` (when given)."""
        item = self.registrations_table.get({"event_id": event_id, "email": email})
        if item is None or registration_id not in (None, item["registration_id"]):
            return None
        return item

    def removal_op(self, stored: Registration, keep: dict, condition: Condition, *,
                   kept: Actions | None = None) -> Update | Delete:
        """Delete ``stored``'s item, or with tickets to ``keep`` set them (and ``kept``:
        what else the item keeps), only if ``condition`` holds."""
        key = {"event_id": stored.event_id, "email": stored.email}
        if keep:
            return Update(self.registrations_table, key,
                          Actions().set("tickets", keep) + (kept or Actions()), condition)
        return Delete(self.registrations_table, key, condition)

    def _require_event(self, event_id: str) -> dict:
        """The event item's capacity, or ``EventNotFound``."""
        event = self.events.get({"event_id": event_id}, projection=EVENT_CAPACITY)
        if event is None:
            raise EventNotFound()
        return event
