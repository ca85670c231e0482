"""BookingService: the one entry point for the web form, the admin and the commands.

It validates and normalizes input, finds the event's strategy, and lets only domain
errors (``booking.errors``) out.
"""
import threading
from datetime import datetime
from datetime import timezone as dt_timezone
import uuid
from collections import OrderedDict
from collections.abc import Iterator

from django.conf import settings
from django.utils import timezone

from . import validation
from .audit import RepairReport, Violation, fix_version, version_violation
from .dynamo import items, leases
from .dynamo.store import Table
from .dynamo.tables import EVENTS
from .errors import AlreadyRegistered, EventNotFound, InvalidBooking, NotRegistered
from .models import Availability, Event, Registration
from .strategies import GUARDED, STRATEGIES, Strategy
from .strategies.retry import RetryPolicy

_STRATEGY_CACHE_SIZE = 10_000
# A name search reads at most this many scan pages per page of results.
_SEARCH_READS = 10


class BookingService:
    """Create events, book and cancel seats, and report availability."""

    def __init__(self, *, default_strategy: str, retry: RetryPolicy | None = None):
        if default_strategy not in STRATEGIES:
            raise ValueError(f"Unknown BOOKING_DEFAULT_STRATEGY {default_strategy!r}")
        self.default_strategy = default_strategy
        self.strategies: dict[str, Strategy] = {
            name: cls(retry=retry) for name, cls in STRATEGIES.items()
        }
        self.events = Table(EVENTS)
        # An event's strategy never changes, so a booking need not re-read it.
        self._strategy_of: OrderedDict[str, str] = OrderedDict()
        self._lock = threading.Lock()

    # --- events -------------------------------------------------------------------
    def create_event(self, *, name, capacity, strategy=None, starts_at=None) -> Event:
        """Validate and create an event; return it (with its new ``id``).

        Raises ``InvalidBooking`` for a bad name, start, strategy or capacity (including
        a capacity beyond what the strategy supports), with nothing stored.
        """
        strategy_name = self.default_strategy if strategy in (None, "") else strategy
        if strategy_name not in STRATEGIES:
            choices = ", ".join(GUARDED)
            raise InvalidBooking(f"Unknown strategy. Choose one of: {choices}.", field="strategy")
        implementation = self.strategies[strategy_name]
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
            starts_at=validation.clean_starts_at(starts_at),
            created_at=timezone.now(),
            version=1,
        )
        implementation.provision(event)
        self._remember(event.id, strategy_name)
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
        self._remember(event_id, item["strategy"])
        return items.event_from_item(item)

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

    def events_page(self, *, start_key=None, limit=25, search="") -> tuple[list[Event], dict | None]:
        """One page of events in table order, and the key that continues after it (or None).

        A Scan with Limit and ExclusiveStartKey: never the whole table. ``search`` keeps
        names containing it (case-sensitive, DynamoDB's ``contains``); a search reads at
        most ``_SEARCH_READS`` scan pages per call, so its page may hold fewer events.
        """
        found, key = [], start_key
        for _ in range(_SEARCH_READS if search else 1):
            options = {"start_key": key, "limit": limit, "projection": items.EVENT_PROJECTION,
                       "names": items.EVENT_PROJECTION_NAMES}
            if search:
                page, key = self.events.filtered_scan_page(
                    filter="contains(#name, :search)", values={":search": search}, **options)
            else:
                page, key = self.events.scan_page(**options)
            found.extend(page)
            if len(found) >= limit or key is None:
                break
        if len(found) > limit:
            found = found[:limit]
            key = {"event_id": found[-1]["event_id"]}  # any item's key can continue a scan
        return [items.event_from_item(item) for item in found], key

    def update_event(self, event_id, *, expected_version, name=None, capacity=None,
                     starts_at=None) -> Event:
        """Apply an organizer's edit of the event as read at ``expected_version``; return it.

        Only the given fields change (``starts_at=""`` clears the start). The write happens
        only if the event is still at ``expected_version`` and bumps it (seed 001), so an
        edit based on a stale read never overwrites a newer change. A capacity change goes
        through the event's strategy, atomically with that check; it never drops a
        registration.

        Raises ``InvalidBooking`` (nothing stored; ``field`` names the input, including a
        capacity below the confirmed count or beyond the strategy's limit),
        ``EventNotFound``, ``StaleEdit`` (re-read, let the organizer re-apply), or
        ``BookingContention``.
        """
        event = self.get_event(event_id)
        if isinstance(expected_version, bool) or not isinstance(expected_version, int):
            raise InvalidBooking("This form is out of date. Reload the page.", field="version")
        changes = {}
        if name is not None:
            changes["name"] = validation.clean_event_name(name)
        if starts_at is not None:
            start = validation.clean_starts_at(starts_at)
            changes["starts_at"] = start.isoformat() if start else None
        implementation = self.strategies[event.strategy]
        if capacity is not None:
            capacity = validation.clean_capacity(
                capacity, strategy_name=event.strategy, max_capacity=implementation.max_capacity,
                suggestion=self._larger_strategy(implementation.max_capacity))
        implementation.change_capacity(
            event.id, expected_version=expected_version, changes=changes,
            # Unchanged capacity: the value read now is the one at expected_version, or the
            # version check refuses the write.
            capacity=event.capacity if capacity is None else capacity)
        return self.get_event(event.id)

    def delete_event(self, event_id) -> None:
        """Delete the event with its registrations and the strategy's slots or lock item.

        The event becomes unbookable first; repeating an interrupted delete finishes it.
        Raises ``EventNotFound``.
        """
        event = self.get_event(event_id)
        self.strategies[event.strategy].delete(event.id)
        with self._lock:
            self._strategy_of.pop(event.id, None)

    # --- bookings -----------------------------------------------------------------
    def book(self, event_id, *, name, email, request_id=None) -> Registration:
        """Confirm a seat for (name, e-mail) or raise why not.

        ``request_id`` names the submission (the signup form's one-time token). A replay of
        a submission that already got its seat returns that same registration instead of
        raising ``AlreadyRegistered``.

        Raises ``InvalidBooking`` (nothing stored), ``EventNotFound``, ``EventFull``,
        ``AlreadyRegistered`` (the same normalized e-mail holds a seat), or
        ``BookingContention`` when bounded retries are spent.
        """
        registration = Registration(
            event_id=validation.clean_event_id(event_id),
            name=validation.clean_person_name(name),
            email=validation.normalize_email(email),
            registered_at=timezone.now(),
            registration_id=uuid.uuid4().hex,
            request_id=validation.clean_request_id(request_id),
        )
        try:
            return self._strategy_for(event_id).book(event_id, registration)
        except AlreadyRegistered as refused:
            existing = refused.existing
            if request_id and existing and existing.request_id == registration.request_id:
                return existing
            raise

    def find_registration(self, event_id, *, email) -> Registration | None:
        """The person's registration for the event, or None."""
        event_id = validation.clean_event_id(event_id)
        email = validation.normalize_email(email)
        return self._strategy_for(event_id).find(event_id, email)

    def cancel(self, event_id, *, email, registration_id=None) -> Registration:
        """Free the person's seat; return the removed registration.

        With ``registration_id`` (as carried by a cancellation link) only that registration
        is cancelled: if the person has since cancelled and booked again, ``NotRegistered``.
        Raises ``EventNotFound``, ``NotRegistered``, or ``InvalidBooking`` for a malformed
        e-mail.
        """
        event_id = validation.clean_event_id(event_id)
        email = validation.normalize_email(email)
        if registration_id is not None and not validation.REGISTRATION_ID_PATTERN.match(
                str(registration_id)):
            raise NotRegistered()
        return self._strategy_for(event_id).cancel(event_id, email, registration_id)

    def availability(self, event_id) -> Availability:
        event_id = validation.clean_event_id(event_id)
        return self._strategy_for(event_id).availability(event_id)

    def registrations(self, event_id) -> list[Registration]:
        """The event's confirmed registrations, oldest first."""
        event_id = validation.clean_event_id(event_id)
        found = self._strategy_for(event_id).registrations(event_id)
        return sorted(found, key=lambda r: (r.registered_at, r.email))

    def iter_registrations(self, event_id, *, search="") -> Iterator[Registration]:
        """The event's registrations in e-mail order, read lazily; ``search`` matches name or e-mail."""
        event_id = validation.clean_event_id(event_id)
        needle = search.strip().casefold()
        for registration in self._strategy_for(event_id).registrations(event_id):
            if not needle or needle in registration.email or needle in registration.name.casefold():
                yield registration

    def registrations_page(self, event_id, *, after=None, limit=50,
                           search="") -> tuple[list[Registration], str | None]:
        """Up to ``limit`` registrations after the e-mail ``after``, and the next page's cursor."""
        page = []
        for registration in self.iter_registrations(event_id, search=search):
            if after is not None and registration.email <= after:
                continue
            if len(page) == limit:
                return page, page[-1].email
            page.append(registration)
        return page, None

    def strategy(self, name: str) -> Strategy:
        return self.strategies[name]

    # --- capacity audits ----------------------------------------------------------
    def iter_event_ids(self, *, page_size: int = 100) -> Iterator[str]:
        """Yield every event id page by page (even for event items too damaged to load)."""
        for item in self.events.scan(projection="event_id", page_size=page_size):
            yield item["event_id"]

    def audit(self, event_id) -> list[Violation]:
        """Every invariant the event's stored data violates (empty when all hold).

        Raises ``EventNotFound``.
        """
        event, item = self._event_for_audit(event_id)
        found = version_violation(event.id, item)
        return found + self.strategies[event.strategy].audit(event)

    def repair(self, event_id, *, lease_seconds: float | None = None) -> RepairReport:
        """Fix the event's derived data under a time-limited lease, then audit it again.

        Registrations are never deleted or invented: what repair cannot fix (overbooking,
        one person under two keys) stays in the report's ``remaining``. Raises
        ``EventNotFound``, or ``LeaseHeld`` while another repair of the event runs.
        """
        event, item = self._event_for_audit(event_id)
        seconds = lease_seconds or settings.BOOKING_REPAIR_LEASE_SECONDS
        lease = leases.acquire(f"repair:{event.id}", seconds=seconds)
        try:
            fixed = []
            if version_violation(event.id, item):
                if fix_version(self.events, {"event_id": event.id}, item):
                    fixed.append(f"event item version {item.get('version')!r} -> 1")
            fixed += self.strategies[event.strategy].repair(event)
        finally:
            leases.release(lease)
        return RepairReport(event.id, fixed, self.audit(event.id))

    def _event_for_audit(self, event_id) -> tuple[Event, dict]:
        event_id = validation.clean_event_id(event_id)
        item = self.events.get({"event_id": event_id}, projection=items.EVENT_PROJECTION,
                               names=items.EVENT_PROJECTION_NAMES)
        if item is None:
            raise EventNotFound()
        version = item.get("version")
        usable = version if isinstance(version, int) else 0  # reported, not trusted
        return items.event_from_item({**item, "version": usable}), item

    # --- internals ----------------------------------------------------------------
    def _strategy_for(self, event_id: str) -> Strategy:
        with self._lock:
            name = self._strategy_of.get(event_id)
        if name is None:
            name = self.get_event(event_id).strategy
        return self.strategies[name]

    def _remember(self, event_id: str, strategy_name: str) -> None:
        with self._lock:
            self._strategy_of[event_id] = strategy_name
            self._strategy_of.move_to_end(event_id)
            while len(self._strategy_of) > _STRATEGY_CACHE_SIZE:
                self._strategy_of.popitem(last=False)


_services: dict[tuple, BookingService] = {}
_services_lock = threading.Lock()


def get_booking_service() -> BookingService:
    """The service configured by the current settings (one per process and configuration)."""
    key = (
        settings.BOOKING_DEFAULT_STRATEGY,
        settings.BOOKING_MAX_RETRIES,
        settings.BOOKING_RETRY_BASE_DELAY,
        settings.BOOKING_RETRY_MAX_DELAY,
        settings.DYNAMODB_TABLE_PREFIX,
        settings.DYNAMODB_ENDPOINT_URL,
    )
    with _services_lock:
        service = _services.get(key)
        if service is None:
            service = BookingService(
                default_strategy=settings.BOOKING_DEFAULT_STRATEGY,
                retry=RetryPolicy(
                    max_attempts=settings.BOOKING_MAX_RETRIES,
                    base_delay=settings.BOOKING_RETRY_BASE_DELAY,
                    max_delay=settings.BOOKING_RETRY_MAX_DELAY,
                ),
            )
            _services[key] = service
        return service


def reset_services() -> None:
    """Forget cached services (tests that switch stores)."""
    with _services_lock:
        _services.clear()
