"""BookingService: the one entry point for the web form, the admin and the commands.

It is the list of what the product does, each operation handed to the capability that
does it: the event catalog (``catalog.py``), bookings (``bookings.py``), waiting lists
(``waitlist.py``), organizer edits (``organizer.py``) and audits (``audits.py``).
A freed seat (a cancellation, a capacity raise) goes to the first in line at once. Every
operation validates and normalizes
its input and lets only domain errors (``booking.errors``) out.
"""
import contextlib
import dataclasses
import os
import uuid
from collections import Counter
from collections.abc import Callable, Iterable, Iterator
from contextlib import AbstractContextManager
from typing import Any

from booking import validation
from booking.checkin.cancellation import PassesChanged
from booking.checkin.door import Door
from booking.checkin.passes import Pass, PassSigner
from booking.checkin.records import CheckinList, Conflict, ScanResult
from booking.service.access_codes import AccessCodes
from booking.service.audits import Audits
from booking.strategies.audit import RepairReport, Violation
from booking.service.checkin import Checkin
from booking.service.bookings import Admission, Bookings
from booking.service.cancellations import Cancellations, Cancelled
from booking.service.shedding import CoolDown
from booking.service.catalog import EventCatalog
from booking.strategies.streams.checkpoints import Checkpoints, lag
from booking.dynamo.access import Store, deadline
from booking.dynamo.leases import Leases
from booking.dynamo.tables import EVENTS
from booking.errors import EventFull, EventNotFound, NotRegistered
from booking.models import (AccessCode, Answered, Availability, Event, NoRoom, Outcome,
                            Registration, WaitlistEntry)
from booking.service.organizer import OrganizerEdits
from booking.questions.service import Questions
from booking.questions.store import AnswerStore, StoredAnswers
from booking.service import tallies
from booking.exactly_once.request_log import RequestLog
from booking.strategies import GUARDED, STRATEGIES, Strategy
from booking.strategies.base import RetryPolicy, WriteTokens

from booking.waitlist.engine import WaitlistEngine
from booking.service.waitlist import WaitlistService


# A cancellation of part of an order chooses its passes again this often when a pass it
# chose was let in at the door meanwhile (nothing was written).
PASS_CHOICES = 3
# No event has this id (ids are version 4 UUIDs): the warm-up's read (``warm_up``).
WARM_UP_EVENT_ID = "0" * 32
# Watches one booking, cancellation or accepted offer: called with (operation, event id,
# request id, ``Answered``), it returns a context manager around the operation, which sees
# its error, or its answer in ``Answered.status`` (``booking/metrics/prometheus.py``).
Observer = Callable[[str, object, object, Answered], AbstractContextManager]


@dataclasses.dataclass(frozen=True)
class CancellationRiders:
    """What rides on a cancellation's write beside its request row (``Bookings.cancel_riders``):
    the cancellation of its passes at the door (``service.checkin``), and its count
    (``service.cancellations``), as the service holds them when the cancellation runs."""

    service: "BookingService"

    def __call__(self, event_id: str, request_id: str, whole: Registration | None, seats: Any = None) -> tuple:
        """``whole``: the order as read for a part's cancellation (else None); ``seats``: the
        seats named to give up (else None)."""
        return (self.service.checkin.cancellation_rider(event_id, request_id, whole, seats),
                self.service.cancellations.rider(request_id))


class BookingService:
    """Create events, book and cancel seats, report availability, edit and audit events.

    Built from settings in one place, ``booking.wiring``; tests and harnesses build their
    own (``harness.controls.control_service``) on a store of their own.

    ``extra_strategies`` (name -> strategy class or factory) adds strategies beside the
    product's guarded ones: only tests and harnesses pass the unguarded control there.
    ``repair_lease_seconds`` is the default lease of ``repair``; a waiting-list offer holds
    its seat for ``waitlist_offer_seconds``; an event created without a time zone gets
    ``default_time_zone``. Each booking and cancellation takes at most ``deadline_seconds``
    (None: no deadline); ``cool_down`` turns an event's writes away for a moment after the
    store throttled it (``booking/service/shedding.py``; None: never).
    """

    def __init__(self, *, store: Store, default_strategy: str, retry: RetryPolicy | None = None,
                 requests: RequestLog | None = None, tokens: WriteTokens | None = None,
                 extra_strategies: dict | None = None, repair_lease_seconds: float = 300.0,
                 waitlist_offer_seconds: float = 86400.0, default_time_zone: str = "UTC",
                 waitlist_confirm_seconds: float = 2 * 86400.0,
                 deadline_seconds: float | None = None, cool_down: CoolDown | None = None,
                 pass_signer: PassSigner | None = None) -> None:
        self.store = store
        self.requests = requests or RequestLog(store)
        strategies = {
            name: factory(store=store, retry=retry, requests=self.requests, tokens=tokens)
            for name, factory in {**STRATEGIES, **(extra_strategies or {})}.items()
        }
        self.catalog = EventCatalog(events=store.table(EVENTS), strategies=strategies,
                                    default_strategy=default_strategy, offered=GUARDED,
                                    default_time_zone=default_time_zone, leases=Leases(store),
                                    provision_lease_seconds=repair_lease_seconds)
        self.codes = AccessCodes(store=store, catalog=self.catalog, requests=self.requests)
        self.questions = Questions(catalog=self.catalog, events=self.catalog.events,
                                   answers=AnswerStore(store))
        # Passes are signed with a key per event derived from ``pass_signer``'s secret
        # (the wiring's SECRET_KEY); without one, a secret of this service's own.
        self.checkin = Checkin(catalog=self.catalog,
                               door=Door(store, pass_signer or PassSigner(os.urandom(32))),
                               registrations=self.catalog.registrations)
        # Each event's cancellations, counted in each cancellation's own write.
        self.cancellations = Cancellations(store)
        self.bookings = Bookings(catalog=self.catalog, requests=self.requests,
                                 deadline_seconds=deadline_seconds, cool_down=cool_down,
                                 codes=self.codes, questions=self.questions,
                                 cancel_riders=CancellationRiders(self))
        self.waitlist = WaitlistService(
            catalog=self.catalog, bookings=self.bookings, requests=self.requests,
            engine=WaitlistEngine(store=store, strategy_for=self.catalog.strategy_for,
                                 requests=self.requests, retry=retry or RetryPolicy(),
                                 offer_seconds=waitlist_offer_seconds,
                                 event_for=self.catalog.event_for),
            confirm_seconds=waitlist_confirm_seconds)
        self.organizer = OrganizerEdits(self.catalog)
        self.audits = Audits(catalog=self.catalog, leases=Leases(store),
                             repair_lease_seconds=repair_lease_seconds,
                             checks=[self.waitlist.audit, self.checkin.audit, self.codes.audit],
                             fixes=[self.codes.repair])
        self.events = self.catalog.events
        self.default_strategy = default_strategy
        # Who watches each booking's and cancellation's answer (the metrics: ``Observer``).
        self.observers: list[Observer] = []

    # --- events (catalog.py) -------------------------------------------------------
    def create_event(self, *, name: str, capacity: int, strategy: str | None = None,
                     starts_at: Any = None, ends_at: Any = None, time_zone: str | None = None,
                     description: str = "", venue: str = "", quotas: dict[str, int] | None = None,
                     ticket_types: Any = None, max_per_order: int | None = None,
                     request_id: str | None = None, organizer: str | None = "",
                     expected_rate: int | None = None, code_only_types: Any = None,
                     ticket_descriptions: dict[str, str] | None = None,
                     ticket_labels: dict[str, str] | None = None) -> Event:
        return self.catalog.create_event(
            ticket_descriptions=ticket_descriptions, ticket_labels=ticket_labels,
            name=name, capacity=capacity, strategy=strategy, starts_at=starts_at,
            ends_at=ends_at, time_zone=time_zone, description=description, venue=venue,
            quotas=quotas, ticket_types=ticket_types, max_per_order=max_per_order,
            request_id=request_id, organizer=organizer, expected_rate=expected_rate,
            code_only_types=code_only_types)

    def get_event(self, event_id: str) -> Event:
        return self.catalog.get_event(event_id)

    # --- start-up and the pages' reads -----------------------------------------------
    def warm_up(self) -> None:
        """Reach the store as a page does, before the first person: the event page's read
        (``get_event``) of an id no event has (event ids are random, version 4 UUIDs),
        within the request deadline. Returns once the store answered "no such event";
        raises ``StoreUnavailable`` (``missing_table`` when the store says the tables do
        not exist) or ``BookingContention`` when it could not answer. Nothing is written."""
        with deadline(self.bookings.deadline_seconds):
            try:
                self.catalog.get_event(WARM_UP_EVENT_ID)
            except EventNotFound:
                return

    def page_deadline(self) -> AbstractContextManager[None]:
        """A context manager: inside it, this thread's reads end within the request's
        deadline (``deadline_seconds``; a booking or cancellation inside keeps its own),
        and a read past it raises ``StillDeciding`` ("not known yet", nothing written)
        instead of holding the thread through botocore's retries."""
        return deadline(self.bookings.deadline_seconds)

    def recent_event(self, event_id: str) -> Event:
        """The event as read here within ``RECENT_EVENT_SECONDS`` (never its seats), else
        read now: for the booking pages and answers (``EventCatalog.recent_event``)."""
        return self.catalog.recent_event(event_id)

    def iter_events(self, *, page_size: int = 100) -> Iterator[Event]:
        return self.catalog.iter_events(page_size=page_size)

    def list_events(self) -> list[Event]:
        return self.catalog.list_events()

    def strategy(self, name: str) -> Strategy:
        return self.catalog.strategies[name]

    # --- bookings (bookings.py) ----------------------------------------------------
    def turn_away_if_busy(self, event_id: str) -> None:
        """Raise ``Overloaded`` while the store's throttle of ``event_id`` cools down, so a
        booking's entry point spends nothing else (a limiter's write) on a request it cannot
        send. A booking this process would answer "full" from a read gets through (the
        booking itself turns it away if the read finds a seat)."""
        self.bookings.turn_away_if_busy(event_id)

    def page_availability(self, event_id: str, *, fresh: bool = False) -> Availability | None:
        """The event's seats for its page, cheap and bounded: None (show no count) while
        it cools down or when the read is throttled or runs out of time; ``fresh``: read
        now, not remembered (``Bookings.page_availability``)."""
        return self.bookings.page_availability(event_id, fresh=fresh)

    def register(self, event_id: str, *, name: str, email: str, request_id: str | None = None,
                 tickets: dict[str, int] | None = None, access_code: str | None = None,
                 answers: dict | None = None, pass_answers: list | None = None,
                 again: bool | None = None, asked_at: float | None = None,
                 admission: Admission | None = None) -> Outcome:
        """Book as ``Bookings.book`` and say what happened: the ``Outcome`` (its
        registration; applied by this asking or replayed from an earlier one; the outbox
        row the write recorded, which the booking worker sends). The API's booking."""
        with self._observed("book", event_id, request_id) as answered:
            outcome = self.bookings.book(
                event_id, name=name, email=email, request_id=request_id, tickets=tickets,
                access_code=access_code, answers=answers, pass_answers=pass_answers,
                again=again, asked_at=asked_at, admission=admission)
            answered.status = outcome.registration.status
        return outcome

    def book(self, event_id: str, *, name: str, email: str, request_id: str | None = None,
             tickets: dict[str, int] | None = None, access_code: str | None = None,
             answers: dict | None = None, pass_answers: list | None = None,
             again: bool | None = None, asked_at: float | None = None) -> Registration:
        """The registration ``register`` answers (for callers that need only the seat:
        scripts, the shell, the harness)."""
        return self.register(event_id, name=name, email=email, request_id=request_id,
                             tickets=tickets, access_code=access_code, answers=answers,
                             pass_answers=pass_answers, again=again,
                             asked_at=asked_at).registration

    def sign_up(self, event_id: str, *, name: str, email: str, request_id: str | None,
                tickets: dict[str, int] | None = None, access_code: str | None = None,
                answers: dict | None = None, pass_answers: list | None = None,
                again: bool | None = None) -> Outcome:
        """The signup form's booking: as ``register``; a ``EventFull`` it raises carries
        ``left`` (``NoRoom``: what is left now and whether the order may wait in line)."""
        try:
            return self.register(event_id, name=name, email=email, request_id=request_id,
                                 tickets=tickets, access_code=access_code, answers=answers,
                                 pass_answers=pass_answers, again=again)
        except EventFull as full:
            full.left = self._no_room(event_id, tickets, full)
            raise

    def _no_room(self, event_id: str, tickets: dict[str, int] | None, full: EventFull) -> NoRoom:
        """What a form says after ``full``: the seats left, read now and within their own
        bounded time (None when the store could not say in time, or when the event sells
        no orders), the quota the order is larger than in all, and whether the order may
        wait in line (it does not fit now, could once seats free up, and the event has a
        waiting list)."""
        event = self.catalog.event_for(validation.clean_event_id(event_id))
        seats = self.bookings.page_availability(event.id, fresh=True) \
            if event.offers_orders else None
        if seats is None or seats.is_full:
            return NoRoom(seats)
        _, ordered = self.bookings.tickets_of(event.id, tickets)
        beyond = event.beyond_quotas(ordered)
        fits_now = all(seats.quotas[q].remaining >= n
                       for q, n in event.order(ordered).seats.items())
        may_wait = beyond is None and not fits_now and self.waitlist.has_waiting_list(event)
        return NoRoom(seats, beyond=beyond, may_wait=may_wait)

    def unregister(self, event_id: str, *, email: str, registration_id: str | None = None,
                   request_id: str | None = None, registration: Registration | None = None,
                   tickets: dict[str, int] | None = None, passes: Any = None) -> Outcome:
        """Cancel as ``Bookings.cancel`` and say what happened (``Outcome``); ``passes``
        (pass ids of the order) names exactly the seats to give up instead of ``tickets``
        (every seat left: the whole order). A pass that is not the order's, cancelled or
        used at the door is ``InvalidBooking``. A freed seat goes to the first in line."""
        with self._observed("cancel", event_id, request_id) as answered:
            request_id = request_id or uuid.uuid4().hex
            seats = None
            if passes is not None:
                whole = self.bookings.find_registration(event_id, email=email)
                if whole is None or registration_id not in (None, whole.registration_id):
                    raise NotRegistered()
                tickets, seats = self.checkin.release_of(whole, passes, request_id)
            for attempt in range(PASS_CHOICES):
                try:
                    outcome = self.bookings.cancel(
                        event_id, email=email, registration_id=registration_id,
                        request_id=request_id, registration=registration, tickets=tickets,
                        seats=seats)
                    break
                except PassesChanged:  # a pass it chose was let in meanwhile: choose again
                    if attempt == PASS_CHOICES - 1:
                        raise
            answered.status = "cancelled"
        removed = outcome.registration
        self.waitlist.offer_freed_seat(removed.event_id)
        return dataclasses.replace(outcome, registration=dataclasses.replace(
            removed, cancelled_passes=self.checkin.cancelled_passes(removed, request_id)))

    def cancel(self, event_id: str, *, email: str, registration_id: str | None = None,
               request_id: str | None = None, registration: Registration | None = None,
               tickets: dict[str, int] | None = None, passes: Any = None) -> Registration:
        """The removed registration ``unregister`` answers (its ``cancelled_passes`` set)."""
        return self.unregister(event_id, email=email, registration_id=registration_id,
                               request_id=request_id, registration=registration,
                               tickets=tickets, passes=passes).registration

    @contextlib.contextmanager
    def _observed(self, operation: str, event_id: str, request_id: str | None) -> Iterator[Answered]:
        """Inside: each of ``observers`` watches the operation (its answer, or the error)."""
        answered = Answered()
        with contextlib.ExitStack() as watching:
            for observer in self.observers:
                watching.enter_context(observer(operation, event_id, request_id, answered))
            yield answered

    def find_registration(self, event_id: str, *, email: str) -> Registration | None:
        return self.bookings.find_registration(event_id, email=email)

    # --- questions and answers (booking/questions/service.py) ----------------------
    def set_questions(self, event_id: str, questions: Any, *, expected_version: int) -> Event:
        return self.questions.set_questions(event_id, questions,
                                            expected_version=expected_version)

    def answers(self, registration: Registration) -> StoredAnswers | None:
        return self.questions.answers(registration)

    def edit_answers(self, registration: Registration, *, answers: dict | None = None,
                     pass_answers: list | None = None, expected_version: int) -> StoredAnswers:
        return self.questions.edit_answers(registration, answers=answers,
                                           pass_answers=pass_answers,
                                           expected_version=expected_version)

    def answers_for_event(self, event_id: str) -> dict[str, StoredAnswers]:
        return self.questions.answers_for_event(event_id)

    def purge_answers(self, event_id: str, *, after_days: int, now: Any = None) -> int:
        return self.questions.purge(event_id, after_days=after_days, now=now)

    def availability(self, event_id: str) -> Availability:
        return self.bookings.availability(event_id)

    def availabilities(self, events: list[Event]) -> dict[str, Availability]:
        return self.bookings.availabilities(events)

    def registrations(self, event_id: str) -> list[Registration]:
        return self.catalog.registrations(event_id)

    def place_in_line(self, registration: Registration) -> int | None:
        return self.bookings.place_in_line(registration)

    def decider_lag(self) -> dict:
        """The stream deciders' state: ``deciders`` reporting in the last minute, and
        ``seconds_behind`` (since one last read every shard to its end; None: never)."""
        return lag(Checkpoints(self.store))

    @property
    def unknown_outcomes(self) -> Counter:
        return self.bookings.unknown_outcomes

    # --- waiting lists (waitlist.py) -----------------------------------------------
    def has_waiting_list(self, event: Event) -> bool:
        return self.waitlist.has_waiting_list(event)

    @property
    def waitlist_offer_seconds(self) -> float:
        """How long a waiting-list offer holds its seat."""
        return self.waitlist.offer_seconds

    def request_to_join_waiting_list(self, event_id: str, *, name: str, email: str,
                                     request_id: str | None = None,
                                     tickets: dict[str, int] | None = None) -> dict:
        return self.waitlist.request_to_join_waiting_list(event_id, name=name, email=email,
                                                          request_id=request_id,
                                                          tickets=tickets)

    def confirm_waiting_list(self, event_id: str, *, name: str, email: str, request_id: str | None,
                             requested_at: float, tickets: dict[str, int] | None = None) -> WaitlistEntry:
        return self.waitlist.confirm_waiting_list(event_id, name=name, email=email,
                                                  request_id=request_id,
                                                  requested_at=requested_at, tickets=tickets)

    def confirm_link_open(self, requested_at: float) -> bool:
        return self.waitlist.confirm_link_open(requested_at)

    def join_waiting_list(self, event_id: str, *, name: str, email: str,
                          request_id: str | None = None, tickets: dict[str, int] | None = None) -> WaitlistEntry:
        return self.waitlist.join_waiting_list(event_id, name=name, email=email,
                                                request_id=request_id, tickets=tickets)

    def waiting_list(self, event_id: str) -> list[WaitlistEntry]:
        return self.waitlist.waiting_list(event_id)

    def waiting_entry(self, event_id: str, *, email: str) -> WaitlistEntry | None:
        return self.waitlist.waiting_entry(event_id, email=email)

    def accept_offer(self, event_id: str, *, email: str, request_id: str | None = None) -> Registration:
        """Book the seat held for the person's offer (``WaitlistService.accept_offer``)."""
        with self._observed("accept_offer", event_id, request_id) as answered:
            registration = self.waitlist.accept_offer(event_id, email=email,
                                                      request_id=request_id)
            answered.status = registration.status
        return registration

    def leave_waiting_list(self, event_id: str, *, email: str) -> WaitlistEntry:
        return self.waitlist.leave_waiting_list(event_id, email=email)

    def remove_from_waiting_list(self, event_id: str, *, email: str) -> tuple[WaitlistEntry, dict]:
        return self.waitlist.remove_from_waiting_list(event_id, email=email)

    def offer_seats(self, event_id: str) -> int:
        return self.waitlist.offer_seats(event_id)

    def waiting_list_pass(self) -> dict:
        return self.waitlist.waiting_list_pass()

    # --- access codes (access_codes.py) --------------------------------------------
    def create_access_codes(self, event_id: str, count: int = 1, codes: Any = None,
                            max_uses: int = 1, valid_until: Any = None, ticket_types: Any = None,
                            reserved_seats: int = 0, request_id: str | None = None) -> list[AccessCode]:
        """Create ``codes`` (given) or ``count`` generated ones for the event, all or none:
        each may be used by ``max_uses`` orders until ``valid_until`` (None: no end), for
        ``ticket_types`` (None: every type); ``request_id`` makes it repeatable (a repeat
        answers the same codes). docs/access-codes.md."""
        return self.codes.create(event_id, count=count, codes=codes, max_uses=max_uses,
                                 valid_until=valid_until, ticket_types=ticket_types,
                                 reserved_seats=reserved_seats, request_id=request_id)

    def access_codes(self, event_id: str) -> list[AccessCode]:
        """Every code of the event with its uses."""
        return self.codes.of_event(event_id)

    def access_code_unlocks(self, event_id: str, code: str) -> tuple[str, ...]:
        """The code-only ticket types ``code`` unlocks now (empty when it is not valid now):
        what a ``?code=...`` link shows. The booking's own write decides."""
        return self.codes.unlocks(event_id, code)

    def access_code_check(self, event_id: str, code: str) -> tuple[str, ...] | None:
        """As ``access_code_unlocks``, but None when the code is not valid now (one read):
        what the wrong-code limit counts (``booking/entry/limits.py``)."""
        return self.codes.check(event_id, code)

    def check_access_code(self, event_id: str, code: str, tickets: dict[str, int] | None) -> None:
        """``InvalidAccessCode`` (or ``AccessCodeUsedUp``) when booking ``tickets`` with
        ``code`` would be refused for the code: a form's errors shown at once (one read)."""
        self.codes.check_tickets(event_id, code, tickets or {})

    def access_code_pass(self) -> dict:
        """The worker's pass: seats reserved for codes whose reservation lapsed return to
        sale (``{"reservations_released": n}`` when any did)."""
        released = self.codes.release_lapsed()
        return {"reservations_released": released} if released else {}

    def revoke_access_code(self, event_id: str, code: str) -> AccessCode:
        """No further order may use ``code`` (``InvalidAccessCode`` if the event has none)."""
        return self.codes.revoke(event_id, code)

    # --- organizer edits (organizer.py) --------------------------------------------
    def events_page(self, *, start_key: dict | None = None, limit: int = 25, search: str = "",
                    when: str = "", organizers: Any = None, event_ids: Iterable[str] = ()) -> tuple[list[Event], dict | None]:
        return self.organizer.events_page(start_key=start_key, limit=limit, search=search,
                                          when=when, organizers=organizers,
                                          event_ids=event_ids)

    def assign_organizer(self, organizer: str) -> list[str]:
        return self.organizer.assign_organizer(organizer)

    def update_event(self, event_id: str, *, expected_version: int, name: str | None = None,
                     capacity: int | None = None, starts_at: Any = None, ends_at: Any = None,
                     time_zone: str | None = None, description: str | None = None,
                     venue: str | None = None, quotas: dict[str, int] | None = None,
                     max_per_order: int | None = None,
                     ticket_descriptions: dict[str, str] | None = None, ticket_types: Any = None,
                     ticket_labels: dict[str, str] | None = None) -> Event:
        event = self.organizer.update_event(
            event_id, expected_version=expected_version, name=name, capacity=capacity,
            starts_at=starts_at, ends_at=ends_at, time_zone=time_zone,
            description=description, venue=venue, quotas=quotas, max_per_order=max_per_order,
            ticket_descriptions=ticket_descriptions, ticket_types=ticket_types,
            ticket_labels=ticket_labels)
        if capacity is not None:
            self.waitlist.offer_freed_seat(event.id)
        return event

    def delete_event(self, event_id: str) -> None:
        self.organizer.delete_event(event_id)
        self.questions.delete_event_answers(validation.clean_event_id(event_id))
        self.waitlist.forget_event(event_id)
        self.codes.forget_event(event_id)
        self.cancellations.forget_event(validation.clean_event_id(event_id))

    def iter_registrations(self, event_id: str, *, search: str = "") -> Iterator[Registration]:
        return self.organizer.iter_registrations(event_id, search=search)

    def tally_registrations(self, event_id: str, *, limit: int = tallies.TALLY_LIMIT) -> tallies.Tally:
        """Orders, seats and booking times of the event's first ``limit`` registrations
        (its paginated query, never a scan; ``Tally.complete`` says whether that was all)."""
        return tallies.tally(self.iter_registrations(event_id), limit=limit)

    def cancellation_counts(self, event_ids: Iterable[str]) -> dict[str, Cancelled]:
        """Orders and seats cancelled so far per event (one read of a few items each):
        every cancellation of a confirmed order by its attendee or by the organizer,
        counted in its own write (docs/admin.md#cancellations)."""
        return self.cancellations.counts([validation.clean_event_id(e) for e in event_ids])

    def registrations_page(self, event_id: str, *, after: str | None = None, limit: int = 50,
                           search: str = "", order: str = "email") -> tuple[list[Registration], object]:
        return self.organizer.registrations_page(event_id, after=after, limit=limit,
                                                 search=search, order=order)

    # --- audits (audits.py) --------------------------------------------------------
    def iter_event_ids(self, *, page_size: int = 100) -> Iterator[str]:
        return self.audits.iter_event_ids(page_size=page_size)

    def audit(self, event_id: str) -> list[Violation]:
        return self.audits.audit(event_id)

    def repair(self, event_id: str, *,
               lease_seconds: float | None = None) -> RepairReport:
        return self.audits.repair(event_id, lease_seconds=lease_seconds)

    # --- check-in at the door (checkin.py, booking/checkin/) -------------------------
    def passes(self, registration: Registration) -> list[Pass]:
        """The order's passes, one per seat (seat 1 first), with their state at the door."""
        return self.checkin.passes(registration)

    def issued_passes(self, registration: Registration) -> list[Pass]:
        """The order's passes as its booking issued them (no read: all valid)."""
        return self.checkin.issued_passes(registration)

    def passes_of(self, registrations: list[Registration]) -> dict[str, list[Pass]]:
        """Passes by registration id for many orders (no admission times)."""
        return self.checkin.passes_of(registrations)

    def pass_public_key(self, event_id: str) -> str:
        """The event's Ed25519 public key (raw, base64url): scanners check codes with it."""
        return self.checkin.pass_public_key(event_id)

    def pass_public_keys(self, event_id: str) -> list[str]:
        """The event's public keys: the signing one, then those of SECRET_KEY_FALLBACKS."""
        return self.checkin.pass_public_keys(event_id)

    def create_checkin_list(self, event_id: str, *, name: str, ticket_types: Any = None,
                            allow_reentry: bool = False, occupancy_limit: int | None = None,
                            opens_at: Any = None, closes_at: Any = None,
                            request_id: str | None = None) -> CheckinList:
        return self.checkin.create_checkin_list(
            event_id, name=name, ticket_types=ticket_types, allow_reentry=allow_reentry,
            occupancy_limit=occupancy_limit, opens_at=opens_at, closes_at=closes_at,
            request_id=request_id)

    def checkin_lists(self, event_id: str) -> list[CheckinList]:
        return self.checkin.checkin_lists(event_id)

    def checkin_list(self, list_id: str) -> CheckinList:
        """The list with live counts (expected, admitted, inside, conflicts);
        ``CheckinListNotFound``."""
        return self.checkin.checkin_list(list_id)

    def find_checkin_list(self, list_id: str) -> CheckinList:
        """The list without counts (one read): for scoping a request to its event."""
        return self.checkin.find_list(list_id)

    def scan(self, list_id: str, code: str, *, direction: str = "entry", nonce: str | None = None,
             gate: str | None = None) -> ScanResult:
        """Decide one scan at the door in one write, at the server's time; the same nonce
        answers the same."""
        return self.checkin.scan(list_id, code, direction=direction, nonce=nonce, gate=gate)

    def scan_batch(self, list_id: str, scans: list) -> list[ScanResult]:
        """An offline scanner's queue, decided in the order the scans were made."""
        return self.checkin.scan_batch(list_id, scans)

    def search_passes(self, list_id: str, text: str, *, limit: int = 20) -> list[tuple[str, Pass]]:
        """(attendee name, pass) whose name or e-mail contains ``text``, for the list."""
        return self.checkin.search_passes(list_id, text, limit=limit)

    def checkin_roster(self, list_id: str) -> list[tuple[str, Pass]]:
        """(attendee name, pass) of every confirmed order's passes the list admits: the
        scanner's offline look-up of short codes (one read per order)."""
        return self.checkin.roster(list_id)

    def scan_log(self, list_id: str, *, limit: int | None = None) -> list[ScanResult]:
        return self.checkin.scan_log(list_id, limit=limit)

    def checkin_conflicts(self, list_id: str) -> list[Conflict]:
        return self.checkin.checkin_conflicts(list_id)
