"""BookingService: the one entry point for the web form, the admin and the commands.

It validates and normalizes input, finds the event's strategy, and lets only domain
errors (``booking.errors``) out.
"""
import random
import threading
import time
import uuid
from collections import Counter, OrderedDict
from datetime import datetime
from datetime import timezone as dt_timezone
from collections.abc import Iterator

from django.utils import timezone

from . import validation
from .dynamo import items
from .dynamo.access import Table
from .dynamo.tables import EVENTS
from .errors import (BookingClosed, BookingContention, BookingError, EventNotFound,
                     InvalidBooking, NotRegistered, OutcomeUnknown, StoreUnavailable)
from .models import Availability, Event, Registration
from .request_log import Request, RequestLog
from .strategies import GUARDED, STRATEGIES, Strategy
from .strategies.base import WriteTokens
from .service_audit import AuditOperations
from .service_organizer import OrganizerOperations
from .strategies.retry import RetryPolicy

_STRATEGY_CACHE_SIZE = 10_000
# A write whose outcome is unknown (after botocore's own attempts) is read back by request
# id and, if absent, re-sent after each of these pauses (with jitter), within
# RESOLVE_SECONDS of the first unknown answer.
RESEND_DELAYS = (0.2, 1.0, 3.0)
RESOLVE_SECONDS = 20.0
CANCEL_UNKNOWN = ("We are confirming your cancellation. Please wait a moment: this page "
                  "checks again by itself.")


class BookingService(OrganizerOperations, AuditOperations):
    """Create events, book and cancel seats, and report availability.

    Organizer operations (paging, edits, deletes) live in ``service_organizer.py`` and
    capacity audits in ``service_audit.py``; this class is the one facade over all of them.
    Built from settings in one place, ``booking.wiring``; tests and harnesses build their
    own (``harness.controls.control_service``).

    ``extra_strategies`` (name -> strategy class or factory) adds strategies beside the
    product's guarded ones: only tests and harnesses pass the unguarded control there.
    ``repair_lease_seconds`` is the default lease of ``repair``.
    """

    def __init__(self, *, default_strategy: str, retry: RetryPolicy | None = None,
                 requests: RequestLog | None = None, tokens: WriteTokens | None = None,
                 extra_strategies: dict | None = None, repair_lease_seconds: float = 300.0):
        self.requests = requests or RequestLog()
        self.strategies: dict[str, Strategy] = {
            name: factory(retry=retry, requests=self.requests, tokens=tokens)
            for name, factory in {**STRATEGIES, **(extra_strategies or {})}.items()
        }
        if default_strategy not in self.strategies:
            raise ValueError(f"Unknown default strategy {default_strategy!r}")
        self.default_strategy = default_strategy
        self.repair_lease_seconds = repair_lease_seconds
        self.events = Table(EVENTS)
        # An event's strategy never changes, so a booking need not re-read it.
        self._strategy_of: OrderedDict[str, str] = OrderedDict()
        # Each event's start as last read here: bookings close when it has passed. The web
        # form reads the event before every booking, so its value is always fresh there.
        self._starts_of: dict[str, datetime | None] = {}
        self._lock = threading.Lock()
        # How often a write's first answer left its outcome unknown, and how that ended
        # ("resolved" by a re-send or the read-back, or "unresolved"): benchmark figures.
        self.unknown_outcomes: Counter = Counter()

    # --- events -------------------------------------------------------------------
    def create_event(self, *, name, capacity, strategy=None, starts_at=None, ends_at=None,
                     time_zone=None, description="", venue="") -> Event:
        """Validate and create an event; return it (with its new ``id``).

        ``starts_at``/``ends_at`` without an offset are read in ``time_zone`` (an IANA
        name, default ``TIME_ZONE``); both are stored in UTC.

        Raises ``InvalidBooking`` for a bad name, start, end, zone, description, venue,
        strategy or capacity (including a capacity beyond what the strategy supports),
        with nothing stored.
        """
        strategy_name = self.default_strategy if strategy in (None, "") else strategy
        if strategy_name not in self.strategies:
            choices = ", ".join(GUARDED)
            raise InvalidBooking(f"Unknown strategy. Choose one of: {choices}.", field="strategy")
        implementation = self.strategies[strategy_name]
        zone_name = validation.clean_time_zone(time_zone)
        start = validation.clean_starts_at(starts_at, time_zone=zone_name)
        event = Event(
            id=uuid.uuid4().hex,
            name=validation.clean_event_name(name),
            capacity=validation.clean_capacity(
                capacity,
                strategy_name=strategy_name,
                max_capacity=implementation.max_capacity,
                suggestion=self._larger_strategy(implementation.max_capacity),
            ),
            strategy=strategy_name,
            starts_at=start,
            created_at=timezone.now(),
            version=1,
            ends_at=validation.clean_ends_at(ends_at, starts_at=start, time_zone=zone_name),
            time_zone=zone_name,
            description=validation.clean_description(description),
            venue=validation.clean_venue(venue),
        )
        implementation.provision(event)
        self._remember(event.id, strategy_name, starts_at=event.starts_at)
        return event

    def _larger_strategy(self, limit: int) -> str:
        larger = [n for n in GUARDED if self.strategies[n].max_capacity > limit]
        return " or ".join(f"'{n}'" for n in larger)

    def get_event(self, event_id) -> Event:
        event_id = validation.clean_event_id(event_id)
        item = self.events.get(
            {"event_id": event_id},
            projection=items.EVENT_PROJECTION,
            names=items.EVENT_PROJECTION_NAMES,
        )
        if item is None:
            raise EventNotFound()
        event = items.event_from_item(item)
        self._remember(event_id, event.strategy, starts_at=event.starts_at)
        return event

    def iter_events(self, *, page_size: int = 100) -> Iterator[Event]:
        """Yield every event, reading the table page by page."""
        for item in self.events.scan(
            projection=items.EVENT_PROJECTION,
            names=items.EVENT_PROJECTION_NAMES,
            page_size=page_size,
        ):
            yield items.event_from_item(item)

    def list_events(self) -> list[Event]:
        """Every event, soonest first (events without a start last)."""
        far = datetime.max.replace(tzinfo=dt_timezone.utc)
        return sorted(self.iter_events(), key=lambda e: (e.starts_at or far, e.name))

    # --- bookings -----------------------------------------------------------------
    def book(self, event_id, *, name, email, request_id=None) -> Registration:
        """Confirm a seat for (name, e-mail) or raise why not.

        ``request_id`` names the submission (the signup form's one-time token; generated
        when None). ``email`` is stored as its key (``validation.normalize_email``). The
        request id travels inside the strategy's own write (``booking/request_log.py``):
        a repeat of a submission that got its seat returns that same registration, at any
        later time, and touches no seat; a repeat of a refused one runs again.

        Raises ``InvalidBooking`` (nothing stored; also for a ``request_id`` already used
        for different content), ``EventNotFound``, ``EventFull``, ``AlreadyRegistered`` (the
        same normalized e-mail holds a seat), ``BookingClosed`` (the event has started),
        ``BookingContention`` or ``StoreUnavailable`` (nothing happened), or
        ``OutcomeUnknown`` when a lost answer could not be resolved (ask again with the
        same ``request_id``).
        """
        registration = Registration(
            event_id=validation.clean_event_id(event_id),
            name=validation.clean_person_name(name),
            email=validation.normalize_email(email),
            registered_at=timezone.now(),
            registration_id=uuid.uuid4().hex,
            request_id=validation.clean_request_id(request_id) or uuid.uuid4().hex,
            contact=_contact(email),
        )
        strategy = self._strategy_for(event_id)
        request = Request.booking(registration)
        starts_at = self._starts_of.get(event_id)
        if starts_at is not None and starts_at <= registration.registered_at:
            # A repeat of a submission that got its seat still answers that seat.
            answered = self.requests.recall(request)
            if answered is None:
                raise BookingClosed()
            return answered
        return self._settle(request,
                            lambda: strategy.book(event_id, registration),
                            OutcomeUnknown.default_message)

    def _settle(self, request: Request, write, unknown_message: str) -> Registration:
        """Run ``write``; when its outcome is unknown, resolve it before answering.

        First read the request row back (one cheap consistent read): present, the write
        applied, answer it. Absent, re-send the same write (the same token, the same
        request row), which applies it now or answers what it did; pause between rounds
        (``RESEND_DELAYS``, with jitter, so an overloaded store is not hammered). Absent
        after the last round: nothing happened (the row commits with the seat), re-raise.
        Unreadable after the last round, past ``RESOLVE_SECONDS``, or at once when the
        store cannot be reached at all: ``OutcomeUnknown``.
        """
        deadline = None
        for delay in (*RESEND_DELAYS, None):
            try:
                answer = write()
            except (StoreUnavailable, BookingContention) as unknown:
                if not (isinstance(unknown, StoreUnavailable) or unknown.maybe_applied):
                    raise  # every attempt was cancelled by a conflict: nothing happened
                self._count_unknown("first_attempt" if deadline is None else None)
                deadline = deadline or time.monotonic() + RESOLVE_SECONDS
                failure = unknown
            except BookingError:
                self._count_unknown("resolved" if deadline is not None else None)
                raise
            else:
                self._count_unknown("resolved" if deadline is not None else None)
                return answer
            try:
                answered, readable = self.requests.recall(request), True
            except BookingError as error:
                answered, readable = None, False
                if getattr(error, "unreachable", False):
                    break  # the store is down: say so now rather than hold the answer
            if answered is not None:
                self._count_unknown("resolved")
                return answered
            if delay is None or time.monotonic() + delay > deadline:
                break
            time.sleep(random.uniform(delay / 2, delay))
        if readable:
            self._count_unknown("resolved")
            raise failure
        self._count_unknown("unresolved")
        raise OutcomeUnknown(unknown_message) from failure

    def _count_unknown(self, what: str | None) -> None:
        if what is not None:
            with self._lock:
                self.unknown_outcomes[what] += 1

    def find_registration(self, event_id, *, email) -> Registration | None:
        """The person's registration for the event, or None."""
        event_id = validation.clean_event_id(event_id)
        email = validation.email_lookup_key(email)
        return self._strategy_for(event_id).find(event_id, email)

    def cancel(self, event_id, *, email, registration_id=None, request_id=None,
               registration: Registration | None = None) -> Registration:
        """Free the person's seat; return the removed registration.

        With ``registration_id`` (as carried by a cancellation link) only that registration
        is cancelled: if the person has since cancelled and booked again, ``NotRegistered``.
        ``registration`` is the whole registration a signed link names (trusted, it comes
        from our signature): strategies that can then cancel in one write without reading.
        ``request_id`` makes a repeated cancellation answer like the first (as ``book``).
        Raises ``EventNotFound``, ``NotRegistered``, ``InvalidBooking`` for a malformed
        e-mail, or, as ``book``, ``OutcomeUnknown``.
        """
        event_id = validation.clean_event_id(event_id)
        email = validation.email_lookup_key(email)
        if registration_id is not None and not validation.REGISTRATION_ID_PATTERN.match(
                str(registration_id)):
            raise NotRegistered()
        request_id = validation.clean_request_id(request_id) or uuid.uuid4().hex
        strategy = self._strategy_for(event_id)
        known = registration if registration is not None and (
            registration.event_id, registration.email, registration.registration_id) == (
            event_id, email, registration_id) else None
        request = Request.cancellation(request_id, event_id, email, registration_id, time.time())
        return self._settle(request, lambda: strategy.cancel(
            event_id, email, registration_id, request=request, known=known), CANCEL_UNKNOWN)

    def availability(self, event_id) -> Availability:
        event_id = validation.clean_event_id(event_id)
        return self._strategy_for(event_id).availability(event_id)

    def availabilities(self, events: list[Event]) -> dict[str, Availability]:
        """Availability of each of ``events`` by event id, read in one batch per strategy
        (``slots`` counts each event's registrations); events deleted meanwhile are left
        out. For lists: the home page, the admin's event list."""
        by_strategy: dict[str, list[str]] = {}
        for event in events:
            by_strategy.setdefault(event.strategy, []).append(event.id)
        found = {}
        for name, event_ids in by_strategy.items():
            found.update(self.strategies[name].availabilities(event_ids))
        return found

    def registrations(self, event_id) -> list[Registration]:
        """The event's confirmed registrations, oldest first."""
        event_id = validation.clean_event_id(event_id)
        found = self._strategy_for(event_id).registrations(event_id)
        return sorted(found, key=lambda r: (r.registered_at, r.email))

    def place_in_line(self, registration: Registration) -> int | None:
        """A pending registration's place among the event's pending ones (1: next to be
        decided), by arrival time; None for strategies that decide at once."""
        strategy = self._strategy_for(registration.event_id)
        if strategy.decides_at_once or registration.status != "pending":
            return None
        return strategy.place_in_line(registration)

    def decider_lag(self) -> dict:
        """The stream deciders' state: ``deciders`` reporting in the last minute, and
        ``seconds_behind`` (since one last read every shard to its end; None: never)."""
        from .decider import lag

        return lag()

    def strategy(self, name: str) -> Strategy:
        return self.strategies[name]

    # --- internals ----------------------------------------------------------------
    def _strategy_for(self, event_id: str) -> Strategy:
        with self._lock:
            name = self._strategy_of.get(event_id)
        if name is None:
            name = self.get_event(event_id).strategy
        return self.strategies[name]

    def _forget(self, event_id: str) -> None:
        with self._lock:
            self._strategy_of.pop(event_id, None)
            self._starts_of.pop(event_id, None)

    def _remember(self, event_id: str, strategy_name: str, *, starts_at=None) -> None:
        with self._lock:
            self._strategy_of[event_id] = strategy_name
            self._strategy_of.move_to_end(event_id)
            self._starts_of[event_id] = starts_at
            while len(self._strategy_of) > _STRATEGY_CACHE_SIZE:
                forgotten, _ = self._strategy_of.popitem(last=False)
                self._starts_of.pop(forgotten, None)


def _contact(email: str) -> str | None:
    """The address as typed (trimmed), where it differs from its key: e-mails go there."""
    typed = validation.clean_typed_email(email)
    return None if typed == validation.normalize_email(email) else typed
