"""The one interface every write-skew guard strategy implements.

A strategy owns how one event's seats are guarded in DynamoDB. The service has already
validated and normalized every argument (e-mails trimmed and case-folded, capacities in
range) and knows the event's strategy, so a strategy never needs to re-check input.

Contract
--------
``provision(event)``
    Write everything the event needs (its item in the events table, plus counters, slots
    or lock items) so that afterwards the event is bookable. Must not leave a bookable
    half-made event behind if it fails.
``book(event_id, registration) -> Registration``
    Confirm ``registration`` if, atomically, the event exists, has a free seat, and the
    person holds no registration for it. Raises ``EventNotFound``, ``EventFull``,
    ``AlreadyRegistered`` (with ``existing`` set to the stored registration when the
    refusal returned it), or ``BookingContention`` once bounded retries are spent.
    Guarded strategies must keep invariants 1 and 2 under any interleaving.
    The write carries the request: ``self.requests.ops(Request.booking(registration),
    registration)`` (the request row and the confirmation's outbox row) go into the same
    conditional transaction, so a repeat of a request that booked answers with the
    registration it made (even after that was cancelled) and a reused id with other
    content is ``InvalidBooking`` (``booking/request_log.py``).
``cancel(event_id, email, registration_id=None, *, request, known=None) -> Registration``
    Remove the person's registration and free its seat in one atomic step, returning what
    was removed; with ``registration_id``, only if that is the registration stored (an old
    cancellation link must not cancel a newer booking). The request row and the
    cancellation notice's outbox row ride in the same transaction; a repeat of a
    cancellation that applied answers with what it removed. ``known`` is the whole
    registration when a signed link names it: a strategy whose write needs nothing else
    removes it in that one write, without reading it first. Raises ``EventNotFound`` or
    ``NotRegistered``.
``find(event_id, email) -> Registration | None``
    The person's registration, read consistently, or None. Raises ``EventNotFound``.
``availability(event_id) -> Availability``
    Capacity and confirmed count from the strategy's own authoritative data, read
    consistently.
``availabilities(event_ids) -> dict[str, Availability]``
    The same for several events, events not found left out. The default asks
    ``availability`` per event; a strategy whose counts live in items reads them in one
    batch (``aggregate``, ``lock_table``).
``registrations(event_id) -> Iterator[Registration]``
    Every confirmed registration, read consistently, page by page.
``change_capacity(event_id, *, expected_version, capacity, changes)``
    Set the event's capacity and the other event attributes in ``changes`` (attribute
    name -> value, None removes it) and bump its version, in one step that happens only
    if the event item's version is still ``expected_version`` (seed 001). Raises
    ``StaleEdit`` when the version moved, ``EventNotFound``, or
    ``InvalidBooking(field="capacity")`` when more people hold seats than ``capacity``.
    Never drops a registration; guarded strategies keep confirmed <= capacity while
    bookings run.
``delete(event_id)``
    Remove the event and everything the strategy stored for it. The event becomes
    unbookable first, so an interrupted delete never leaves a bookable event with missing
    pieces; running it again finishes the job.

Every strategy is given the ``store`` (``booking.dynamo.access.Store``): its tables are
``store.table(SPEC)``, its transactions ``store.transact_write``.

Waiting-list holds (seed 003: a seat held for one person until a time)
----------------------------------------------------------------------
A waiting-list offer holds a seat in the strategy's own terms, so a concurrent ``book``
cannot take it, and time releases it: every write that could take a held seat states in
its condition that the hold's ``until`` (epoch milliseconds) has passed. Nobody has to act when
an offer expires; clean-up (``release_expired``) only tidies. The waiting list
(``booking/waitlist/engine.py``) runs the transactions; a strategy builds its members, which
always come first in the transaction:

``hold_ops(event_id, email, *, until, now, refused=None) -> (ops, ref)`` (times in epoch ms)
    Members that take one free seat, or one whose hold has expired, for ``email`` until
    ``until``, only if the person is not registered. ``refused`` is the previous
    attempt's ``TransactionCancelled`` (its evidence chooses the next try). ``ref`` is
    what the strategy needs later (the slot number), stored with the offer. Raises
    ``EventFull`` (no seat), ``AlreadyRegistered`` or ``EventNotFound``.
``accept_ops(event_id, registration, *, now, ref) -> ops``
    Members that turn the person's hold into ``registration``, only while it is unexpired.
``release_ops(event_id, email, *, until, ref) -> ops``
    Members that free exactly the hold that lasts until ``until`` (a person leaving).
``release_expired(event_id, *, now) -> int``
    Free the seats of holds expired before ``now`` (each conditional on still being so).
``holds(event_id) -> dict[str, float]``
    Every stored hold: e-mail key -> until (expired ones included).
``registration_absent_op(event_id, email)``
    A ConditionCheck member: the person holds no registration for the event.

``book`` counts unexpired holds as taken seats, and takes a seat whose hold has expired
when no other is free.

Class attributes: ``name`` (the registry key), ``max_capacity`` (largest capacity the
pattern supports), ``guarded`` (False only for the control strategy), ``holds_seats``
(True when it implements the waiting-list holds above; events of other strategies have
no waiting list), ``decides_at_once`` (False for ``streams``: ``book`` returns a
``pending`` registration that a decider confirms or rejects later; ``registrations`` then
yields every status).

``between_read_and_write`` is a test hook: strategies that read before they write call it
in between, so a test can force two callers to both read before either writes.

Exactly-once: the request row is written by the strategy's own write, never beside it.
Under retries: botocore re-sends a write whose response was lost, so a
write that did apply can come back refused. ``client_token`` names a transaction after the
registration it writes (DynamoDB answers a repeat with success), and ``is_mine`` tells
"this refusal found my own registration" from "someone else's" (docs/exactly-once-retries.md).
Both come from ``self.tokens`` (``WriteTokens``), a collaborator: the product always builds
the real one; only tests and harnesses build the blind control (``harness/controls.py``).
"""
import hashlib
import time
from abc import ABC, abstractmethod
from collections.abc import Iterator

from booking.dynamo.access import Store
from booking.errors import EventNotFound, NotRegistered
from booking.models import Availability, Event, Registration
from booking.exactly_once.request_log import Request, RequestLog

from booking.strategies.retry import RetryPolicy

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


class Strategy(ABC):
    name: str = ""
    max_capacity: int = 0
    guarded: bool = True
    holds_seats: bool = False
    decides_at_once: bool = True
    description: str = ""

    def __init__(self, *, store: Store, retry: RetryPolicy | None = None,
                 requests: RequestLog | None = None, tokens: WriteTokens | None = None):
        self.store = store
        self.retry = retry or RetryPolicy()
        self.requests = requests or RequestLog(store)
        self.tokens = tokens or WriteTokens()

    def _not_registered(self, request: Request, require_event) -> Registration:
        """Nothing to cancel: an earlier run of this very request may have cancelled it."""
        answered = self.requests.recall(request)
        if answered is not None:
            return answered
        require_event()
        raise NotRegistered()

    def between_read_and_write(self) -> None:
        """Hook between a read and the write that depends on it (tests replace it)."""

    @abstractmethod
    def provision(self, event: Event) -> None: ...

    @abstractmethod
    def book(self, event_id: str, registration: Registration) -> Registration: ...

    @abstractmethod
    def cancel(self, event_id: str, email: str, registration_id: str | None = None, *,
               request: Request, known: Registration | None = None) -> Registration: ...

    @abstractmethod
    def find(self, event_id: str, email: str) -> Registration | None: ...

    @abstractmethod
    def availability(self, event_id: str) -> Availability: ...

    def availabilities(self, event_ids: list[str]) -> dict[str, Availability]:
        """Availability of several events (missing ones left out); strategies whose counts
        live in items override this with one batch read."""
        found = {}
        for event_id in event_ids:
            try:
                found[event_id] = self.availability(event_id)
            except EventNotFound:
                pass
        return found

    @abstractmethod
    def registrations(self, event_id: str) -> Iterator[Registration]: ...

    @abstractmethod
    def change_capacity(self, event_id: str, *, expected_version: int, capacity: int,
                        changes: dict) -> None: ...

    @abstractmethod
    def delete(self, event_id: str) -> None: ...

    # --- waiting-list holds (see the module docstring) ----------------------------
    def hold_ops(self, event_id: str, email: str, *, until: float, now: float,
                 refused=None) -> tuple[list, dict]:
        raise NotImplementedError(f"{self.name} cannot hold seats for a waiting list")

    def accept_ops(self, event_id: str, registration: Registration, *, now: float,
                   ref: dict) -> list:
        raise NotImplementedError

    def release_ops(self, event_id: str, email: str, *, until: float, ref: dict) -> list:
        raise NotImplementedError

    def release_expired(self, event_id: str, *, now: float) -> int:
        return 0

    def holds(self, event_id: str) -> dict[str, float]:
        return {}

    def registration_absent_op(self, event_id: str, email: str) -> tuple[str, dict]:
        raise NotImplementedError

    def audit(self, event: Event) -> list:
        """Violations (``booking.strategies.audit.Violation``) of the invariants this strategy relies on.

        Reads the event's data consistently, page by page. The event item's own version
        is checked by the service; a strategy checks what it stores and derives.
        """
        return []

    def repair(self, event: Event) -> list[str]:
        """Fix derived data (counters, lock items, slot claims); return what was changed.

        Never deletes or invents a registration. Every write is conditional on what was
        read, so a booking that lands meanwhile is never undone or miscounted.
        """
        return []
