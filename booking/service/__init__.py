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
from collections.abc import Callable, Iterable, Iterator
from contextlib import AbstractContextManager
from typing import Any, Concatenate, Generic, ParamSpec, TypeVar, overload

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


Part = TypeVar("Part")
Params = ParamSpec("Params")
Result = TypeVar("Result")


class Operation(Generic[Part, Params, Result]):
    """An operation of the service that one capability does alone: ``service.scan(...)`` is
    ``service.checkin.scan(...)``, the capability's own method (its signature and docstring
    are the capability's; nothing forwards the call or copies its parameters). Declared in
    the class as ``scan = Operation("checkin", Checkin.scan)``: the attribute of the service
    that holds the capability, and the capability's method, which types the call."""

    def __init__(self, part: str, method: Callable[Concatenate[Part, Params], Result]) -> None:
        self.part, self.method = part, method
        self.__doc__ = method.__doc__

    @overload
    def __get__(self, service: None, owner: type) -> "Operation[Part, Params, Result]": ...
    @overload
    def __get__(self, service: object, owner: type) -> Callable[Params, Result]: ...

    def __get__(self, service: object | None, owner: type) -> Any:
        if service is None:
            return self
        return getattr(getattr(service, self.part), self.method.__name__)


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
        self.organizer = OrganizerEdits(self.catalog,
                                        capacity_changed=self.waitlist.offer_freed_seat)
        self.audits = Audits(catalog=self.catalog, leases=Leases(store),
                             repair_lease_seconds=repair_lease_seconds,
                             checks=[self.waitlist.audit, self.checkin.audit, self.codes.audit],
                             fixes=[self.codes.repair])
        self.events = self.catalog.events
        # Bookings whose answer was lost, by how each was resolved (the same Counter).
        self.unknown_outcomes = self.bookings.unknown_outcomes
        self.default_strategy = default_strategy
        # Who watches each booking's and cancellation's answer (the metrics: ``Observer``).
        self.observers: list[Observer] = []

    # --- events (catalog.py) -------------------------------------------------------
    create_event = Operation("catalog", EventCatalog.create_event)
    get_event = Operation("catalog", EventCatalog.get_event)

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

    recent_event = Operation("catalog", EventCatalog.recent_event)
    iter_events = Operation("catalog", EventCatalog.iter_events)
    list_events = Operation("catalog", EventCatalog.list_events)

    def strategy(self, name: str) -> Strategy:
        return self.catalog.strategies[name]

    # --- bookings (bookings.py) ----------------------------------------------------
    turn_away_if_busy = Operation("bookings", Bookings.turn_away_if_busy)
    page_availability = Operation("bookings", Bookings.page_availability)

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

    find_registration = Operation("bookings", Bookings.find_registration)
    availability = Operation("bookings", Bookings.availability)
    availabilities = Operation("bookings", Bookings.availabilities)
    place_in_line = Operation("bookings", Bookings.place_in_line)
    registrations = Operation("catalog", EventCatalog.registrations)

    # --- questions and answers (booking/questions/service.py) ----------------------
    set_questions = Operation("questions", Questions.set_questions)
    answers = Operation("questions", Questions.answers)
    edit_answers = Operation("questions", Questions.edit_answers)
    answers_for_event = Operation("questions", Questions.answers_for_event)
    purge_answers = Operation("questions", Questions.purge)

    def decider_lag(self) -> dict:
        """The stream deciders' state: ``deciders`` reporting in the last minute, and
        ``seconds_behind`` (since one last read every shard to its end; None: never)."""
        return lag(Checkpoints(self.store))

    # --- waiting lists (waitlist.py) -----------------------------------------------
    has_waiting_list = Operation("waitlist", WaitlistService.has_waiting_list)
    request_to_join_waiting_list = Operation("waitlist", WaitlistService.request_to_join_waiting_list)
    confirm_waiting_list = Operation("waitlist", WaitlistService.confirm_waiting_list)
    confirm_link_open = Operation("waitlist", WaitlistService.confirm_link_open)
    join_waiting_list = Operation("waitlist", WaitlistService.join_waiting_list)
    waiting_list = Operation("waitlist", WaitlistService.waiting_list)
    waiting_entry = Operation("waitlist", WaitlistService.waiting_entry)

    @property
    def waitlist_offer_seconds(self) -> float:
        """How long a waiting-list offer holds its seat (the waiting list's own value)."""
        return self.waitlist.offer_seconds

    def accept_offer(self, event_id: str, *, email: str, request_id: str | None = None) -> Registration:
        """Book the seat held for the person's offer (``WaitlistService.accept_offer``)."""
        with self._observed("accept_offer", event_id, request_id) as answered:
            registration = self.waitlist.accept_offer(event_id, email=email,
                                                      request_id=request_id)
            answered.status = registration.status
        return registration

    leave_waiting_list = Operation("waitlist", WaitlistService.leave_waiting_list)
    remove_from_waiting_list = Operation("waitlist", WaitlistService.remove_from_waiting_list)
    offer_seats = Operation("waitlist", WaitlistService.offer_seats)
    waiting_list_pass = Operation("waitlist", WaitlistService.waiting_list_pass)

    # --- access codes (access_codes.py) --------------------------------------------
    create_access_codes = Operation("codes", AccessCodes.create)
    access_codes = Operation("codes", AccessCodes.of_event)
    access_code_unlocks = Operation("codes", AccessCodes.unlocks)
    access_code_check = Operation("codes", AccessCodes.check)
    check_access_code = Operation("codes", AccessCodes.check_tickets)

    def access_code_pass(self) -> dict:
        """The worker's pass: seats reserved for codes whose reservation lapsed return to
        sale (``{"reservations_released": n}`` when any did)."""
        released = self.codes.release_lapsed()
        return {"reservations_released": released} if released else {}

    revoke_access_code = Operation("codes", AccessCodes.revoke)

    # --- organizer edits (organizer.py) --------------------------------------------
    events_page = Operation("organizer", OrganizerEdits.events_page)
    assign_organizer = Operation("organizer", OrganizerEdits.assign_organizer)

    update_event = Operation("organizer", OrganizerEdits.update_event)

    def delete_event(self, event_id: str) -> None:
        self.organizer.delete_event(event_id)
        self.questions.delete_event_answers(validation.clean_event_id(event_id))
        self.waitlist.forget_event(event_id)
        self.codes.forget_event(event_id)
        self.cancellations.forget_event(validation.clean_event_id(event_id))

    iter_registrations = Operation("organizer", OrganizerEdits.iter_registrations)

    def tally_registrations(self, event_id: str, *, limit: int = tallies.TALLY_LIMIT) -> tallies.Tally:
        """Orders, seats and booking times of the event's first ``limit`` registrations
        (its paginated query, never a scan; ``Tally.complete`` says whether that was all)."""
        return tallies.tally(self.iter_registrations(event_id), limit=limit)

    def cancellation_counts(self, event_ids: Iterable[str]) -> dict[str, Cancelled]:
        """Orders and seats cancelled so far per event (one read of a few items each):
        every cancellation of a confirmed order by its attendee or by the organizer,
        counted in its own write (docs/admin.md#cancellations)."""
        return self.cancellations.counts([validation.clean_event_id(e) for e in event_ids])

    registrations_page = Operation("organizer", OrganizerEdits.registrations_page)

    # --- audits (audits.py) --------------------------------------------------------
    iter_event_ids = Operation("audits", Audits.iter_event_ids)
    audit = Operation("audits", Audits.audit)
    repair = Operation("audits", Audits.repair)

    # --- check-in at the door (checkin.py, booking/checkin/) -------------------------
    passes = Operation("checkin", Checkin.passes)
    issued_passes = Operation("checkin", Checkin.issued_passes)
    passes_of = Operation("checkin", Checkin.passes_of)
    pass_public_key = Operation("checkin", Checkin.pass_public_key)
    pass_public_keys = Operation("checkin", Checkin.pass_public_keys)
    create_checkin_list = Operation("checkin", Checkin.create_checkin_list)
    checkin_lists = Operation("checkin", Checkin.checkin_lists)
    checkin_list = Operation("checkin", Checkin.checkin_list)
    find_checkin_list = Operation("checkin", Checkin.find_list)
    scan = Operation("checkin", Checkin.scan)
    scan_batch = Operation("checkin", Checkin.scan_batch)
    search_passes = Operation("checkin", Checkin.search_passes)
    checkin_roster = Operation("checkin", Checkin.roster)
    scan_log = Operation("checkin", Checkin.scan_log)
    checkin_conflicts = Operation("checkin", Checkin.checkin_conflicts)
