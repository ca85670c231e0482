"""Waiting lists: join a full event's line, take or pass on an offered seat, the worker's
pass (``booking/waitlist/engine.py`` does the work in DynamoDB).

It needs the event catalog (events and their strategies), bookings (availability, and
settling a write whose outcome is unknown) and the request log.
"""
import hashlib
import logging
import time
import uuid
from typing import Any

from django.utils import timezone

from booking import validation
from booking.dynamo.access import StoreError, deadline
from booking.waitlist import engine as waitlist_engine
from booking.waitlist import audit as waitlist_audit
from booking.service.bookings import Bookings
from booking.service.catalog import EventCatalog
from booking.errors import (BookingClosed, BookingError, EventNotFound, InvalidBooking,
                            JoinLinkExpired, NotWaiting, OfferExpired, OutcomeUnknown,
                            SeatsAvailable, beyond_quota)
from booking.models import BOOKED, EXPIRED, Event, OFFERED, Registration, WaitlistEntry
from booking.exactly_once.request_log import Request, RequestLog
from booking.strategies.contract import Holds
from booking.waitlist.engine import WaitlistEngine, accept_request_id

logger = logging.getLogger(__name__)


CONFIRM = "confirm"  # a request to join whose e-mail carries the link that joins


class WaitlistService:
    """``engine`` is the waiting-list table's engine (offers hold a seat for its
    ``offer_seconds``); a request to join's link joins for ``confirm_seconds``."""

    def __init__(self, *, catalog: EventCatalog, bookings: Bookings, requests: RequestLog,
                 engine: WaitlistEngine, confirm_seconds: float = 2 * 86400) -> None:
        # Used once: the join's request row remembers the link for the request log's
        # retention, so a link may never outlive it.
        self.confirm_seconds = min(confirm_seconds, requests.retention_seconds)
        self.catalog = catalog
        self.bookings = bookings
        self.requests = requests
        self.engine = engine
        self.strategies = catalog.strategies

    def has_waiting_list(self, event: Event) -> bool:
        """Whether people can queue for the event when it is full: its strategy holds seats
        for offers (``Holds``: every product strategy does; the test-only control does not)
        and it offers seats at all (capacity 0 means closed: no seat will ever free)."""
        return isinstance(self.strategies[event.strategy], Holds) and event.capacity > 0

    @property
    def offer_seconds(self) -> float:
        """How long an offer holds its seat."""
        return self.engine.offer_seconds

    def request_to_join_waiting_list(self, event_id: str, *, name: str, email: str,
                                     request_id: str | None = None,
                                     tickets: dict[str, int] | None = None) -> dict:
        """Ask to join a full event's line for an address whose owner has not confirmed it:
        store nothing but the e-mail that answers (the outbox row, returned for sending).

        The answer is the same whoever asks: the owner of the address is told by e-mail,
        with the link that joins (``confirm_waiting_list``), or that they are already in
        line or booked. ``request_id`` (the form's token) makes a repeat owe the same one
        e-mail. ``tickets`` as for ``join_waiting_list``. Raises ``InvalidBooking`` (nothing
        stored), ``EventNotFound``, ``BookingClosed`` or ``SeatsAvailable``: facts about the
        event, never the address.
        """
        event_id, name, key, contact = self._cleaned(event_id, name, email)
        request_id = validation.clean_request_id(request_id) or uuid.uuid4().hex
        tickets = self._check_joinable(event_id, tickets)
        # The same requests whatever they find, so the time taken tells nothing either.
        state = self.engine.standing(event_id, key) or CONFIRM
        return self.engine.request_join(event_id, name=name, email=key, contact=contact,
                                        request_id=request_id, state=state, tickets=tickets)

    def confirm_waiting_list(self, event_id: str, *, name: str, email: str, request_id: str | None,
                             requested_at: float, tickets: dict[str, int] | None = None) -> WaitlistEntry:
        """Join the line from a request's confirmation link (its fields): the address is
        its owner's, so the person takes their place now, after everyone confirmed before.

        The link works once (a repeat answers the same entry, even after leaving) and for
        ``confirm_seconds`` after ``requested_at`` (epoch seconds): ``JoinLinkExpired``.
        Otherwise raises as ``join_waiting_list``.
        """
        if not self.confirm_link_open(requested_at):
            raise JoinLinkExpired()
        # One request per link: a form token resubmitted with another address owes that
        # address its own link, which must not collide with the first one's request row.
        used = hashlib.sha256(f"{request_id}:{validation.normalize_email(email)}".encode())
        return self.join_waiting_list(event_id, name=name, email=email, tickets=tickets,
                                      request_id=f"confirm-{used.hexdigest()[:40]}")

    def confirm_link_open(self, requested_at: float) -> bool:
        """Whether a confirmation link for a request made at ``requested_at`` still joins."""
        return 0 <= time.time() - requested_at <= self.confirm_seconds

    def join_waiting_list(self, event_id: str, *, name: str, email: str,
                          request_id: str | None = None, tickets: dict[str, int] | None = None) -> WaitlistEntry:
        """Put the person in line for a full event; return their entry. For an address
        already confirmed as the person's (the confirmation link, or a caller that has
        proved it): public entry points ask with ``request_to_join_waiting_list``.

        One entry per person (normalized e-mail); ``request_id`` makes a repeat answer
        like the first (as ``book``). ``tickets`` (type -> quantity) is the order asked for
        on an event with orders, validated as ``book``'s (None: one seat of the only type);
        an offer holds exactly it. Raises ``InvalidBooking`` (nothing stored),
        ``EventNotFound``, ``BookingClosed``, ``SeatsAvailable`` (book instead: the order
        fits now), ``AlreadyRegistered``, ``AlreadyWaiting`` or ``BookingContention``.
        """
        event_id, name, key, contact = self._cleaned(event_id, name, email)
        request_id = validation.clean_request_id(request_id) or uuid.uuid4().hex
        tickets = self._check_joinable(event_id, tickets)
        return self.engine.join(event_id, name=name, email=key, contact=contact,
                                request_id=request_id, tickets=tickets)

    @staticmethod
    def _cleaned(event_id: str, name: str, email: str) -> tuple[str, str, str, str | None]:
        """(event id, name, e-mail key, the address as typed where it differs)."""
        event_id = validation.clean_event_id(event_id)
        name = validation.clean_person_name(name)
        key = validation.normalize_email(email)
        typed = validation.clean_typed_email(email)
        return event_id, name, key, None if typed == key else typed

    def _check_joinable(self, event_id: str, tickets: dict[str, int] | None) -> dict | None:
        """The order asked for (validated; None on a plain event), if the person may join:
        the event has a waiting list, has not started, has no room for that order now,
        and would have room once seats free up (no quota is asked more than it has)."""
        event = self.catalog.get_event(event_id)
        if event.has_started:
            raise BookingClosed()
        if not self.has_waiting_list(event):
            raise InvalidBooking("This event has no waiting list.")
        _, tickets = self.bookings.tickets_of(event_id, tickets)
        beyond = event.beyond_quotas(tickets)
        if beyond is not None:  # no seat freeing up could ever make room for it
            raise beyond_quota(*beyond)
        quotas = self.bookings.availability(event_id).quotas
        if all(quotas[q].remaining >= n for q, n in event.order(tickets).seats.items()):
            raise SeatsAvailable()
        return event.registered_tickets(tickets)

    def waiting_list(self, event_id: str) -> list[WaitlistEntry]:
        """The event's entries in join order (ended ones too, until TTL removes them)."""
        return self.engine.entries(validation.clean_event_id(event_id))

    def waiting_entry(self, event_id: str, *, email: str) -> WaitlistEntry | None:
        return self.engine.entry(validation.clean_event_id(event_id),
                                   validation.email_lookup_key(email))

    def accept_offer(self, event_id: str, *, email: str, request_id: str | None = None) -> Registration:
        """Turn the person's offer into a registration, only while it is unexpired.

        A repeat (the same ``request_id``; by default the offer's own) answers the same
        registration. Raises ``NotWaiting``, ``OfferExpired``, ``EventNotFound``,
        ``BookingClosed`` (the event has started), or as ``book``, ``OutcomeUnknown``.
        """
        event_id = validation.clean_event_id(event_id)
        key = validation.email_lookup_key(email)
        entry = self.engine.entry(event_id, key)
        if entry is None or entry.offer_id is None:
            raise NotWaiting()
        request_id = validation.clean_request_id(request_id) or accept_request_id(entry.offer_id)
        registration = Registration(
            event_id=event_id, email=key, name=entry.name, registered_at=timezone.now(),
            registration_id=uuid.uuid4().hex, request_id=request_id, contact=entry.contact,
            ticket_counts=entry.ticket_counts)
        request = Request.booking(registration)
        closed = self._has_started(event_id, registration.registered_at)
        if entry.status != OFFERED or closed:
            answered = self.requests.recall(request)  # a repeat of an accept that applied
            if answered is not None:
                return answered
            if closed:
                raise BookingClosed()
            raise OfferExpired() if entry.status in (EXPIRED, BOOKED) else NotWaiting()
        # No early "expired?" check: the write's own condition (hold unexpired) decides.
        with deadline(self.bookings.deadline_seconds):  # a booking's time, as any other
            return self.bookings.settle(request, lambda: self.engine.accept(
                event_id, entry, registration, request), OutcomeUnknown.default_message)

    def leave_waiting_list(self, event_id: str, *, email: str) -> WaitlistEntry:
        """Leave the line (or decline an offer: its seat goes to the next person).

        Raises ``NotWaiting`` when the person has no open entry, ``EventNotFound``.
        """
        event_id = validation.clean_event_id(event_id)
        key = validation.email_lookup_key(email)
        self.catalog.strategy_for(event_id)  # EventNotFound first
        return self.engine.leave(event_id, key)

    def remove_from_waiting_list(self, event_id: str, *, email: str) -> tuple[WaitlistEntry, dict]:
        """An organizer ends the person's place, as ``leave_waiting_list``; the e-mail
        telling them is owed in the same write. Returns (entry, that outbox row)."""
        event_id = validation.clean_event_id(event_id)
        key = validation.email_lookup_key(email)
        self.catalog.strategy_for(event_id)
        entry = self.engine.leave(event_id, key, removed=True)
        return entry, self.engine.removal_message(entry)

    def offer_seats(self, event_id: str) -> int:
        """Offer every free seat to the people waiting, in join order; return how many."""
        return self.engine.offer_all(validation.clean_event_id(event_id))

    def waiting_list_pass(self) -> dict:
        """The worker's pass: expire lapsed offers and offer freed seats, every event; an
        event that has started closes its line (its open entries end as ``expired``)."""
        outcomes = {"offers_expired": 0, "seats_offered": 0, "entries_closed": 0}
        for event_id in sorted(self.engine.events_with_open_entries()):
            try:
                # Closing ends entries for good: decide it on the event as stored now, not
                # on this process's memory of its start (an organizer may have moved it).
                if self.catalog.get_event(event_id).has_started:
                    outcomes["entries_closed"] += self.engine.close(event_id)
                    continue
                expired, offered = self.engine.expire(event_id)
            except EventNotFound:  # deleted while people waited: nothing left to offer
                self.engine.table.delete_partition(event_id)
                continue
            except (BookingError, StoreError):
                logger.exception("Waiting list of %s left to the next pass", event_id)
                continue
            outcomes["offers_expired"] += expired
            outcomes["seats_offered"] += offered
        return {k: v for k, v in outcomes.items() if v}

    def offer_freed_seat(self, event_id: str) -> None:
        """Right after a seat frees: offer it at once, on a background thread, so the
        request that freed it still answers after its own one write (the worker is the
        safety net; ``booking.waitlist.engine.flush`` waits for it)."""
        self.catalog.strategy_for(event_id)  # EventNotFound first
        if (self.has_waiting_list(self.catalog.event_for(event_id))
                and not self._has_started(event_id)):
            waitlist_engine.offer_soon(self.engine, event_id)

    def _has_started(self, event_id: str, now: Any = None) -> bool:
        """Whether the event has started (its start as the catalog last read it)."""
        self.catalog.strategy_for(event_id)  # reads the event the first time (EventNotFound)
        starts_at = self.catalog.starts_at(event_id)
        return starts_at is not None and starts_at <= (now or timezone.now())

    def forget_event(self, event_id: str) -> None:
        """Remove a deleted event's waiting list."""
        self.engine.table.delete_partition(validation.clean_event_id(event_id))

    def audit(self, event: Event) -> list:
        """What ``check_capacity`` finds wrong with the event's waiting list."""
        return waitlist_audit.audit_event(self, event)
