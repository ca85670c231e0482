"""The events and the strategy that guards each: create, read and list events.

Every other capability (bookings, organizer edits, audits) finds an event's strategy
here. An event's strategy never changes, so it is remembered (with the event's start,
which closes bookings) for the events used most recently.
"""
import dataclasses
import hashlib
import json
import threading
import time
import uuid
from collections import OrderedDict
from collections.abc import Iterator
from dataclasses import replace
from datetime import datetime
from datetime import timezone as dt_timezone
from typing import Any

from django.utils import timezone

from booking import validation
from booking.dynamo import items
from booking.dynamo.access import Table
from booking.dynamo.leases import Leases, LeaseTaken
from booking.errors import BookingContention, EventNotFound, InvalidBooking
from booking.models import Event, Registration
from booking.strategies import Strategy

_REMEMBERED_EVENTS = 10_000
# How long a process answers the event's page and bookings from the event as it last read
# it (``recent_event``): its name, times and strategy, never its seats (those are read or
# written every time). Another process's edit is seen within this many seconds; this
# process's own at once.
RECENT_EVENT_SECONDS = 2.0
KEY_REUSED = "This key was already used to create a different event."
BEING_CREATED = "This event is still being created. Ask again in a moment."


def keyed_event_id(request_id: str) -> str:
    """The id of the event a keyed request creates: the same for every repeat of it."""
    return hashlib.sha256(f"event\n{request_id}".encode()).hexdigest()[:32]


def creation_fingerprint(event: Event) -> str:
    """What a keyed creation asked for (validated and normalized)."""
    moment = (lambda t: t.isoformat() if t else None)
    content = [event.name, event.capacity, event.strategy, moment(event.starts_at),
               moment(event.ends_at), event.time_zone, event.description, event.venue]
    order = items.order_attributes(event)
    if order:  # a plain event's fingerprint stays what it was before orders
        content.append([order["quota_capacities"], order["ticket_types"],
                        order["max_per_order"]])
    if event.organizer:  # a key never answers another organizer's event
        content.append({"organizer": event.organizer})
    if event.expected_rate:
        content.append({"expected_rate": event.expected_rate})
    if event.ticket_descriptions:
        content.append({"ticket_descriptions": event.ticket_descriptions})
    if event.ticket_labels:
        content.append({"ticket_labels": event.ticket_labels})
    return hashlib.sha256(json.dumps(content).encode()).hexdigest()


class EventCatalog:
    """``events`` is the events table; ``strategies`` maps each name to its strategy."""

    def __init__(self, *, events: Table, strategies: dict[str, Strategy], default_strategy: str,
                 offered: tuple[str, ...], default_time_zone: str = "UTC",
                 leases: Leases, provision_lease_seconds: float = 300.0) -> None:
        self.leases = leases
        self.provision_lease_seconds = provision_lease_seconds
        if default_strategy not in strategies:
            raise ValueError(f"Unknown default strategy {default_strategy!r}")
        self.events = events
        self.strategies = strategies
        self.default_strategy = default_strategy
        self.default_time_zone = default_time_zone  # of an event created without one
        self.offered = offered  # the names a refusal suggests (the product's own strategies)
        self._strategy_of: OrderedDict[str, str] = OrderedDict()
        # Each event's start as last read here: bookings close when it has passed. The web
        # form reads the event before every booking, so its value is always fresh there.
        self._starts_of: dict[str, datetime | None] = {}
        # Each event as last read here: its ticket types and quotas, for orders.
        self._event_of: dict[str, Event] = {}
        self._read_at: dict[str, float] = {}  # when get_event last read it (monotonic)
        self._known_at: dict[str, float] = {}  # when it was last read or written here
        self._lock = threading.Lock()

    def create_event(self, *, name: str, capacity: int, strategy: str | None = None,
                     starts_at: Any = None, ends_at: Any = None, time_zone: str | None = None,
                     description: str = "", venue: str = "", quotas: dict[str, int] | None = None,
                     ticket_types: Any = None, max_per_order: int | None = None,
                     request_id: str | None = None, organizer: str | None = "",
                     expected_rate: int | None = None, code_only_types: Any = None,
                     ticket_descriptions: dict[str, str] | None = None,
                     ticket_labels: dict[str, str] | None = None) -> Event:
        """Validate and create an event; return it (with its new ``id``).

        ``code_only_types``: ticket types shown and bookable only with an access code that
        unlocks them (docs/access-codes.md).

        ``organizer`` is the slug of the organizer that owns it (the entry point checked
        that the asker may create events there; "" only for tests and harnesses).

        Orders (docs/orders.md): ``quotas`` (name -> seats) beside the capacity,
        ``ticket_types`` (type -> the quotas it counts against, besides the capacity; None:
        the one type ``admission``) and ``max_per_order`` (seats per order, default 1);
        ``ticket_descriptions`` (type -> a sentence shown beside it, optional);
        ``ticket_labels`` (type or quota -> the label the organizer typed, optional).
        ``expected_rate``: the arrivals a second the organizer expects at the busiest moment
        (None: not stated); the shards strategy gives a plain event one shard per 400 of
        them beyond its 8 (docs/scaling.md).
        ``request_id`` (an API Idempotency-Key, scoped) makes the creation repeatable: see
        ``_create_keyed``.

        ``starts_at``/``ends_at`` without an offset are read in ``time_zone`` (an IANA
        name, default ``default_time_zone``: the site's ``TIME_ZONE``); both are stored in UTC.

        Raises ``InvalidBooking`` for a bad name, start, end, zone, description, venue,
        strategy or capacity (including a capacity beyond what the strategy supports),
        with nothing stored.
        """
        strategy_name = self.default_strategy if strategy in (None, "") else strategy
        if strategy_name not in self.strategies:
            choices = ", ".join(self.offered)
            raise InvalidBooking(f"Unknown strategy. Choose one of: {choices}.", field="strategy")
        implementation = self.strategies[strategy_name]
        zone_name = validation.clean_time_zone(time_zone, default=self.default_time_zone)
        start = validation.clean_starts_at(starts_at, time_zone=zone_name)
        clean_quotas = validation.clean_quotas(quotas, max_capacity=implementation.max_capacity)
        clean_types = validation.clean_ticket_types(ticket_types, quotas=clean_quotas)
        event = Event(
            id=uuid.uuid4().hex,
            name=validation.clean_event_name(name),
            capacity=self.clean_capacity(capacity, strategy_name),
            strategy=strategy_name,
            starts_at=start,
            created_at=timezone.now(),
            version=1,
            ends_at=validation.clean_ends_at(ends_at, starts_at=start, time_zone=zone_name),
            time_zone=zone_name,
            description=validation.clean_description(description),
            venue=validation.clean_venue(venue),
            quotas=clean_quotas,
            ticket_types=clean_types,
            ticket_descriptions=validation.clean_ticket_descriptions(
                ticket_descriptions, ticket_types=clean_types),
            ticket_labels=validation.clean_ticket_labels(
                ticket_labels, names={**clean_types, **clean_quotas}),
            max_per_order=validation.clean_max_per_order(max_per_order),
            expected_rate=validation.clean_expected_rate(expected_rate),
            organizer=validation.clean_organizer(organizer),
        )
        event = dataclasses.replace(event, code_only_types=_code_only(code_only_types, event))
        implementation.check_order_shape(event)
        if request_id:
            return self._create_keyed(event, implementation, request_id)
        implementation.provision(event)
        self.remember(event.id, strategy_name, starts_at=event.starts_at, event=event)
        return event

    def _create_keyed(self, event: Event, implementation: Any, request_id: str) -> Event:
        """The key rides in the provisioning write itself: the event's id is derived from
        it and its item (put only if absent) stores the request's fingerprint. A repeat
        finds the event and answers it (``InvalidBooking`` on ``request_id`` if the key
        created a different one); a lease on the id keeps two creations with one key from
        provisioning at once (``BookingContention`` for the second while the first runs).
        """
        event = replace(event, id=keyed_event_id(request_id),
                        request_fingerprint=creation_fingerprint(event))
        created = self._created_by(event)
        if created is not None:
            return created
        try:
            lease = self.leases.acquire(f"create-event-{event.id}",
                                        seconds=self.provision_lease_seconds)
        except LeaseTaken:
            created = self._created_by(event)
            if created is None:
                raise BookingContention(BEING_CREATED) from None
            return created
        try:
            created = self._created_by(event)  # made between our read and the lease
            if created is None:
                implementation.provision(event)
        finally:
            self.leases.release(lease)
        self.remember(event.id, event.strategy, starts_at=event.starts_at, event=created or event)
        return created or event

    def _created_by(self, event: Event) -> Event | None:
        """The stored event with ``event``'s id if the same request created it, else None."""
        try:
            stored = self.get_event(event.id)
        except EventNotFound:
            return None
        if stored.request_fingerprint != event.request_fingerprint:
            raise InvalidBooking(KEY_REUSED, field="request_id")
        return stored

    def clean_capacity(self, capacity: int, strategy_name: str) -> int:
        """``capacity`` checked against what the strategy supports (``InvalidBooking`` in an
        organizer's words: internal strategy names stay out of pages and errors)."""
        return validation.clean_capacity(capacity, max_capacity=self.strategies[strategy_name].max_capacity)

    def get_event(self, event_id: str) -> Event:
        event_id = validation.clean_event_id(event_id)
        item = self.events.get(
            {"event_id": event_id},
            projection=items.EVENT_PROJECTION,
        )
        if item is None:
            raise EventNotFound()
        event = items.event_from_item(item)
        self.remember(event_id, event.strategy, starts_at=event.starts_at, event=event)
        with self._lock:
            self._read_at[event_id] = time.monotonic()
        return event

    def recent_event(self, event_id: str, *, max_age: float = RECENT_EVENT_SECONDS,
                     now: float | None = None) -> Event:
        """The event as read here less than ``max_age`` seconds ago, else read now
        (``get_event``): for the pages and answers of a busy event, whose every request
        would otherwise read it. Its capacity may be stale by that much: nothing decides a
        seat from it (the strategy's write or read does)."""
        event_id = validation.clean_event_id(event_id)
        event = self.remembered_event(event_id, max_age=max_age, now=now)
        return event if event is not None else self.get_event(event_id)

    def remembered_event(self, event_id: str, *, max_age: float = RECENT_EVENT_SECONDS,
                         now: float | None = None) -> Event | None:
        """As ``recent_event``, but None rather than a read when it is not that fresh."""
        now = time.monotonic() if now is None else now
        with self._lock:
            event, read_at = self._event_of.get(event_id), self._read_at.get(event_id)
        if event is not None and read_at is not None and now - read_at < max_age:
            return event
        return None

    def known_event(self, event_id: str, *, max_age: float) -> Event:
        """The event as read or written here less than ``max_age`` seconds ago, else read
        now: for what a booking asks (its questions), which another process may change."""
        with self._lock:
            event, known_at = self._event_of.get(event_id), self._known_at.get(event_id)
        if event is not None and known_at is not None and time.monotonic() - known_at < max_age:
            return event
        return self.get_event(event_id)

    def iter_events(self, *, page_size: int = 100) -> Iterator[Event]:
        """Yield every event, reading the table page by page."""
        for item in self.events.scan(
            projection=items.EVENT_PROJECTION,
            page_size=page_size,
        ):
            yield items.event_from_item(item)

    def list_events(self) -> list[Event]:
        """Every event, soonest first (events without a start last)."""
        far = datetime.max.replace(tzinfo=dt_timezone.utc)
        return sorted(self.iter_events(), key=lambda e: (e.starts_at or far, e.name))

    def registrations(self, event_id: str) -> list[Registration]:
        """The event's confirmed registrations, oldest first."""
        event_id = validation.clean_event_id(event_id)
        found = self.strategy_for(event_id).registrations(event_id)
        return sorted(found, key=lambda r: (r.registered_at, r.email))

    def strategy_for(self, event_id: str) -> Strategy:
        """The event's strategy (one read of the event the first time; ``EventNotFound``)."""
        with self._lock:
            name = self._strategy_of.get(event_id)
        if name is None:
            name = self.get_event(event_id).strategy
        return self.strategies[name]

    def event_for(self, event_id: str, tickets: dict[str, int] | None = None) -> Event:
        """The event as last read here (its quotas never change; its capacities may have:
        writes check them), else read now (``EventNotFound``). Ticket types can be added:
        when ``tickets`` names a type the remembered event lacks, it is read again (and
        a type still unknown is refused by validation, never guessed)."""
        with self._lock:
            event = self._event_of.get(event_id)
        if event is not None and tickets is not None and not event.knows(tickets):
            event = None
        return event if event is not None else self.get_event(event_id)

    def starts_at(self, event_id: str) -> datetime | None:
        """The event's start as last read here (None: no start, or not read yet)."""
        return self._starts_of.get(event_id)

    def forget(self, event_id: str) -> None:
        with self._lock:
            self._strategy_of.pop(event_id, None)
            self._starts_of.pop(event_id, None)
            self._event_of.pop(event_id, None)
            self._read_at.pop(event_id, None)
            self._known_at.pop(event_id, None)

    def remember(self, event_id: str, strategy_name: str, *, starts_at: Any = None,
                 event: Event | None = None) -> None:
        with self._lock:
            self._strategy_of[event_id] = strategy_name
            self._strategy_of.move_to_end(event_id)
            self._starts_of[event_id] = starts_at
            if event is not None:
                self._event_of[event_id] = event
                self._known_at[event_id] = time.monotonic()  # as read or written just now
            while len(self._strategy_of) > _REMEMBERED_EVENTS:
                forgotten, _ = self._strategy_of.popitem(last=False)
                self._starts_of.pop(forgotten, None)
                self._event_of.pop(forgotten, None)
                self._read_at.pop(forgotten, None)
                self._known_at.pop(forgotten, None)


def _code_only(value: Any, event: Event) -> tuple:
    """The ticket types bookable only with an access code: types of ``event``."""
    if value in (None, "", [], ()):
        return ()
    names = [value] if isinstance(value, str) else value
    if not isinstance(names, (list, tuple)) or any(n not in event.ticket_types for n in names):
        raise InvalidBooking(f"Codes-only ticket types must be among the event's types "
                             f"({', '.join(event.ticket_types)}).", field="code_only_types")
    return tuple(sorted(set(names)))
