"""Bookings: book and cancel seats, find registrations, report availability.

Every write goes through the event's strategy with its request row inside (exactly once,
``booking/exactly_once/request_log.py``); a write whose outcome is unknown is resolved before anyone
is told anything (``settle``).
"""
import random
import threading
import time
import uuid
from collections import Counter
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import Any, Protocol

from django.utils import timezone

from booking import validation
from booking.service.catalog import EventCatalog
from booking.dynamo.access import (PastDeadline, StoreError, deadline, last_attempt_throttled,
                                   lost_attempts, throttles, time_left)
from booking.dynamo.errors import caused_by_throttle
from booking.errors import (AccessCodeUsedUp, AlreadyRegistered, BookingClosed,
                            BookingContention, BookingError, EventFull,
                            InvalidBooking, NotRegistered, OutcomeUnknown,
                            Overloaded, StillDeciding, StoreUnavailable)
from booking.service.access_codes import AccessCodes
from booking.service.shedding import CoolDown
from booking.models import (CAPACITY_QUOTA, PENDING, Availability, Event, Order, Outcome,
                            Registration, UnknownTicketTypes)
from booking.exactly_once.request_log import Request, RequestLog
from booking.exactly_once.access_codes import ReservedSeatGone, ReservedSeatsLeft
from booking.exactly_once.riders import Riders, SideRead
from booking.strategies.base import Strategy

# A write whose outcome is unknown (after botocore's own attempts) is read back by request
# id and, if absent, re-sent after each of these pauses (with jitter), within
# RESOLVE_SECONDS of the first unknown answer.
RESEND_DELAYS = (0.2, 1.0, 3.0)
RESOLVE_SECONDS = 20.0
# Of a request's deadline, the part kept for fencing a lost attempt once the rest is spent
# (at most this many seconds, at most a quarter of the deadline).
FENCE_RESERVE = 0.5
# An event's seats read for its page are shown again for this long in this process (a
# drop's page views would otherwise each read them); never a "full" (read at the instant).
RECENT_SEATS_SECONDS = 1.0
# After this process told someone the event was full, its page reads no seats for this
# long (a sold-out drop's page views would each read them, into the reads that tell the
# next people "full"): it shows the form without a count, and the POST answers.
TOLD_FULL_SECONDS = 2.0
# The page's read is worth less than a booking: at most this long, throttles not waited on.
PAGE_READ_SECONDS = 1.0
# What tells a person nothing definite: ask again (the cool-down starts when a throttle
# ended a booking with one of these).
NOT_ANSWERED = (BookingContention, StoreUnavailable, OutcomeUnknown)
# How long a booking asks the questions as this process last read them.
QUESTIONS_SECONDS = 30.0
# The definite refusals of a booking: told to a re-ask only once the request is fenced.
REFUSALS = (EventFull, AlreadyRegistered, AccessCodeUsedUp, BookingClosed)

IN_FLIGHT = ("Your earlier request with this id is still being decided. Send the same "
             "request again in a moment: it answers the outcome and never acts twice.")
CANCEL_UNKNOWN = ("We are confirming your cancellation. Please wait a moment: this page "
                  "checks again by itself.")


class Admission(SideRead, Protocol):
    """The entry point's abuse limits of one asking, run inside the booking (``book``'s
    ``admission``; ``booking/entry/limits.py``'s ``SignupAdmission``): its ``reads`` ride in
    the strategy's first read when that read is the answer ("full" after a sell-out), so
    a refusal costs that read and the limits' one write; otherwise it reads alone."""

    def asked(self) -> tuple[bool | None, float | None]:
        """Whether the limits counted this asking's request before: (True, first asked
        at), (False, None), (None, None) when they cannot tell; from the rows ``found``
        gave, else one consistent read of its own (no write)."""
        ...

    def count(self) -> bool | None:
        """Count this asking in one write (``RateLimited`` over a limit): True asked
        before, False the first asking, None when that cannot be told."""
        ...


class Bookings:
    """Seats of the catalog's events, each written with its request row in ``requests``."""

    def __init__(self, *, catalog: EventCatalog, requests: RequestLog,
                 deadline_seconds: float | None = None, cool_down: CoolDown | None = None,
                 codes: AccessCodes | None = None, questions: Any = None,
                 cancel_riders: Callable[..., tuple] | None = None) -> None:
        """``deadline_seconds``: each booking's and cancellation's time in all (None: none);
        ``cool_down``: the events whose writes the store throttled a moment ago; ``codes``:
        the events' access codes (a use rides on its order's write); ``questions``: the
        organizers' questions (``booking/questions/service.py``), whose answers ride on the
        bookings' writes (None: no questions are asked)."""
        self.catalog = catalog
        self.codes = codes
        self.requests = requests
        self.deadline_seconds = deadline_seconds
        self.cool_down = cool_down
        # Further riders of a cancellation: (event id, request id, the whole order as read
        # for a part's cancellation, else None, the seats named to give up, else None)
        # -> riders (the passes' cancellation: ``cancellations.CancellationRiders``).
        self.cancel_riders = cancel_riders
        self.questions = questions
        self._lock = threading.Lock()
        self._seats_seen: dict[str, tuple[Availability, float]] = {}  # page_availability
        self._told_full: dict[str, float] = {}  # event id -> when this process said "full"
        self._ended: dict[str, float] = {}  # request id -> when an asking of it ended here
        self.clock = time.monotonic  # when seats were read (tests hold it still)
        # How often a write's first answer left its outcome unknown, and how that ended
        # ("resolved" by a re-send or the read-back, or "unresolved"): benchmark figures.
        self.unknown_outcomes: Counter = Counter()

    def book(self, event_id: str, *, name: str, email: str, request_id: str | None = None,
             tickets: dict[str, int] | None = None, access_code: str | None = None,
             answers: dict | None = None, pass_answers: list | None = None,
             again: bool | None = None, asked_at: float | None = None,
             admission: Admission | None = None) -> Outcome:
        """Confirm a seat (an order: ``tickets``, type -> quantity) for (name, e-mail) or
        raise why not.

        ``tickets`` None is one seat of the event's only type. An order is confirmed whole
        or not at all: ``EventFull.quota`` names the quota that had no room for it
        (docs/orders.md).

        ``request_id`` names the submission (the signup form's one-time token; generated
        when None). ``email`` is stored as its key (``validation.normalize_email``). The
        request id travels inside the strategy's own write (``booking/exactly_once/request_log.py``):
        a repeat of a submission that got its seat returns that same registration, at any
        later time, and touches no seat; a repeat of a refused one runs again.

        Raises ``InvalidBooking`` (nothing stored; also for a ``request_id`` already used
        for different content), ``EventNotFound``, ``EventFull``, ``AlreadyRegistered`` (the
        same normalized e-mail holds a seat), ``BookingClosed`` (the event has started),
        ``BookingContention`` or ``StoreUnavailable`` (nothing happened), or
        ``OutcomeUnknown`` when a lost answer could not be resolved (ask again with the
        same ``request_id``): ``StillDeciding`` when the deadline passed first. ``Overloaded``
        (nothing sent) while the store's throttle of the event cools down.

        ``access_code``: the order uses the code, counted inside the same write
        (``booking/exactly_once/access_codes.py``): ``InvalidAccessCode`` (unknown, expired,
        revoked, another event's, not for these tickets; also a code-only type without
        one) or ``AccessCodeUsedUp``, nothing stored.

        ``answers`` (question id -> value) and ``pass_answers`` (one such mapping per seat)
        answer the event's questions (docs/orders.md#questions): checked first
        (``InvalidAnswers``, nothing stored), then stored in the order's own write.

        ``again``: whether this is the request's first asking, as the entry point's records
        of the caller's submissions say (False: the first; True: asked before, first at
        ``asked_at``, epoch seconds, if known; None: it cannot tell). A ``request_id`` not
        known to be asked for the first time may be a re-ask: a refusal (``REFUSALS``) is
        told only once every earlier asking's attempt is fenced (``RequestLog.fence``), and
        if one of them applied, its registration is the answer. One known to be asked again
        is first answered from one consistent read of its request row (what it did, or
        ``StillDeciding`` without a write while an earlier asking, begun less than the
        deadline ago, may still be in flight).

        ``admission``: the entry point's abuse limits (``Admission``), which then tell
        ``again`` and ``asked_at``: read (in the strategy's read when this process lately
        saw the event sold out: one read answers "full") and counted before any write;
        ``RateLimited`` over a limit, nothing booked.

        Returns the ``Outcome``: the registration, whether this asking's write made it or
        an earlier asking's answer was replayed, and what the write owes (its outbox row).
        """
        built_id = uuid.uuid4().hex  # this asking's registration: a replay answers another
        with deadline(self.deadline_seconds), self._asking(request_id):
            try:
                return Outcome.booking(self._book(
                    event_id, name=name, email=email, request_id=request_id, tickets=tickets,
                    access_code=access_code, answers=answers, pass_answers=pass_answers,
                    again=again, asked_at=asked_at, registration_id=built_id,
                    admission=admission), built_id=built_id)
            except EventFull as full:  # the page's remembered seats are no longer to be shown
                with self._lock:
                    self._seats_seen.pop(validation.clean_event_id(event_id), None)
                    if full.quota == CAPACITY_QUOTA:
                        if len(self._told_full) > 1000:
                            self._told_full.clear()
                        self._told_full[validation.clean_event_id(event_id)] = self.clock()
                raise

    def _book(self, event_id: str, *, name: str, email: str, request_id: str | None,
              tickets: dict[str, int] | None, registration_id: str, access_code: str | None = None,
              answers: dict | None = None, pass_answers: list | None = None,
              again: bool | None = None, asked_at: float | None = None,
              admission: Admission | None = None) -> Registration:
        # Before anything is read; while the event cools down only a booking this process
        # would answer "full" from a read gets further (``_answer_by_reading``).
        cooling = self.turn_away_if_busy(validation.clean_event_id(event_id))
        fields: dict[str, Any] = dict(
            event_id=validation.clean_event_id(event_id),
            name=validation.clean_person_name(name),
            email=validation.normalize_email(email),
            registered_at=timezone.now(),
            registration_id=registration_id,
            request_id=validation.clean_request_id(request_id) or uuid.uuid4().hex,
            contact=_contact(email),
        )
        event, tickets = self.tickets_of(event_id, tickets)
        # Without a code the code rules ask only whether a type needs one.
        use = self.codes.use(event, access_code, tickets) if self.codes and (
            access_code not in (None, "") or event.code_only_types) else None
        registration = Registration(**fields, ticket_counts=event.registered_tickets(tickets),
                                    access_code=use.code if use else None)
        strategy = self.catalog.strategy_for(event_id)
        request = Request.booking(registration)
        read: Registration | BookingError | None = None
        if admission is not None:
            # A code's booking may still take a seat reserved for it, a started event says
            # so: only a plain booking of an open event may be refused by the first read.
            starts_at = self.catalog.starts_at(event.id)
            probe = cooling is None and use is None and (
                starts_at is None or starts_at > registration.registered_at)
            again, asked_at, read = self._admit(admission, strategy, event, registration,
                                                request, event.order(tickets), probe=probe)
        if again is not False and request_id is not None:  # perhaps a re-ask: its own generation
            request = request.asked_again()
        known = None
        if again:
            repeated, known = self._answer_repeat(request, asked_at)
            if repeated is not None:
                return repeated
        if isinstance(read, Registration):
            return read
        if read is not None:  # refused by the read the limits rode in
            if not request.generation:
                raise read
            return self._fence_refusal(request, read, known)
        try:
            return self._book_request(strategy, event, registration, request, use, tickets,
                                      cooling, answers, pass_answers)
        except REFUSALS as refusal:
            if not request.generation or getattr(refusal, "fenced", False):
                raise
            return self._fence_refusal(request, refusal, known)

    def _admit(self, admission: Admission, strategy: Strategy, event: Event,
               registration: Registration, request: Request, order: Order, *,
               probe: bool) -> tuple[bool | None, float | None,
                                     Registration | BookingError | None]:
        """The entry point's limits of this asking, before any write: (again, asked_at,
        what the strategy's read answered: this request's registration, a refusal, or None:
        book). With ``probe``, where this process lately saw the event sold out, the
        limits' items ride in the strategy's own read (``full_by_reading``); else the
        limits read alone."""
        read: Registration | BookingError | None = None
        if probe and strategy.sold_out_lately(event.id):
            try:
                read = strategy.full_by_reading(
                    event, registration, order, Riders(self.requests, request, side=admission))
            except REFUSALS as refused:
                read = refused
            except (StoreError, BookingContention, StoreUnavailable):  # the limits read alone; the booking tries
                read = None
        asked, asked_at = admission.asked()
        if asked is True or isinstance(read, Registration):
            # A re-ask (answered from its request row first, ``_answer_repeat``), or this
            # request's own registration read back: not counted again.
            return asked, asked_at, read
        return admission.count(), asked_at, read

    @contextmanager
    def _asking(self, request_id: str | None) -> Iterator[None]:
        """Remember when an asking of ``request_id`` ended here (``_answer_repeat``)."""
        try:
            yield
        except _InFlight:
            raise  # answered from the read: the asking that runs has not ended
        except BaseException:
            self._ended_now(request_id)
            raise
        self._ended_now(request_id)

    def _ended_now(self, request_id: str | None) -> None:
        if request_id is not None:
            with self._lock:
                if len(self._ended) > 1000:
                    self._ended.clear()
                self._ended[str(request_id)] = time.time()

    def _answer_repeat(self, request: Request,
                       asked_at: float | None) -> tuple[Registration | None, dict | None]:
        """A known re-ask: what one consistent read of its request row says it did (None:
        nothing yet, run it), and the row; ``StillDeciding`` while the row is absent and an
        earlier asking began less than the deadline ago (it may still be in flight), unless
        this process saw an asking of it end since."""
        row = self.requests.read(request.request_id)
        answered = self.requests.answer(request, row)
        if answered is not None:
            return answered, row
        with self._lock:
            ended = self._ended.get(request.request_id, 0.0)
        if row is None and asked_at is not None and self.deadline_seconds is not None and (
                time.time() - asked_at < self.deadline_seconds) and ended < asked_at:
            raise _InFlight(IN_FLIGHT)
        return None, row

    def _fence_refusal(self, request: Request, refusal: BookingError,
                       known: dict | None) -> Registration:
        """Tell a re-ask's ``refusal`` once every earlier attempt is fenced; the registration
        of one that applied instead. Unfenceable: ``OutcomeUnknown``, never the refusal."""
        try:
            answered = self.requests.fence_asked_again(request, known=known)
        except InvalidBooking:
            raise
        except PastDeadline as late:
            raise StillDeciding(OutcomeUnknown.default_message) from late
        except (BookingError, StoreError) as error:
            self._count_unknown("unresolved")
            raise OutcomeUnknown(OutcomeUnknown.default_message) from error
        if answered is not None:
            return answered
        raise refusal

    def _book_request(self, strategy: Strategy, event: Event, registration: Registration,
                      request: Request, use: Any, tickets: dict[str, int], cooling: int | None,
                      answers: dict | None, pass_answers: list | None) -> Registration:
        event_id = event.id
        others: list = [use] if use else []
        if self.questions is not None:
            # The questions as read here at most QUESTIONS_SECONDS ago (another process's
            # change is asked within that long; this process's own at once).
            asking = self.catalog.known_event(event.id, max_age=QUESTIONS_SECONDS)
            rider = self.questions.prepare(asking, tickets, answers, pass_answers,
                                           at=request.at)
            if rider is not None:
                others.append(rider)
        riders = Riders(self.requests, request, others=tuple(others))
        starts_at = self.catalog.starts_at(event_id)
        if starts_at is not None and starts_at <= registration.registered_at:
            # A repeat of a submission that got its seat still answers that seat.
            answered = self.requests.recall(request)
            if answered is None:
                raise BookingClosed()
            return answered
        order = event.order(tickets)
        if cooling is not None:
            return self._answer_by_reading(strategy, event, registration, order, riders,
                                           cooling)
        try:
            return self.settle(request, lambda: strategy.book(event, registration, order,
                                                              riders),
                               OutcomeUnknown.default_message)
        except ReservedSeatsLeft as left:  # the code's orders take its reserved seats first
            return self._book_reserved(strategy, event, registration, order, request, use,
                                       left.reserved, riders)
        except EventFull:  # no seat for everyone: perhaps one reserved for the code (a read)
            reserved = self.codes.reserved(event.id, use.code) if use and self.codes else {}
            if not reserved:
                raise
            return self._book_reserved(strategy, event, registration, order, request, use,
                                       reserved, riders)

    def _book_reserved(self, strategy: Strategy, event: Event, registration: Registration,
                       order: Order, request: Request, use: Any, reserved: dict,
                       riders: Riders) -> Registration:
        """Book one of the seats reserved for the order's code (hold key -> ref), each try
        one write (``AccessCodes.reserved_write``) with the order's other riders (its
        answers); ``EventFull`` when none is left."""
        others = tuple(rider for rider in riders.others if rider is not use)
        assert self.codes is not None  # a code's reserved seats come from its codes
        keys = list(reserved)
        random.shuffle(keys)  # holders arriving together try different seats
        while keys:
            key = keys.pop()
            write = self.codes.reserved_write(strategy, event, registration, order, request,
                                              use.reserved(key), reserved[key], others)
            try:
                return self.settle(request, write, OutcomeUnknown.default_message)
            except ReservedSeatsLeft as left:  # the one tried was taken: the ones still held
                keys = [k for k in left.reserved if k in keys]
            except ReservedSeatGone:
                continue
        raise EventFull()

    def tickets_of(self, event_id: str, tickets: dict[str, int] | None) -> tuple[Event, dict[str, int]]:
        """The event (as remembered, read again if ``tickets`` names a type added since)
        and the order's validated tickets (``InvalidBooking`` with ``field="tickets"``,
        nothing stored)."""
        event = self.catalog.event_for(event_id, tickets)
        return event, validation.clean_tickets(
            tickets, ticket_types=event.ticket_types, quotas=event.quotas,
            max_per_order=event.max_per_order)

    def settle(self, request: Request, write: Callable[[], Registration], unknown_message: str) -> Registration:
        """Run ``write``; when its outcome is unknown, resolve it before answering.

        First read the request row back (one cheap consistent read): present, the write
        applied, answer it. Absent, re-send the same write (the same token, the same
        request row), which applies it now or answers what it did; pause between rounds
        (``RESEND_DELAYS``, with jitter, so an overloaded store is not hammered). Absent
        after the last round: nothing happened, re-raise. Unreadable after the last round,
        past ``RESOLVE_SECONDS``, or at once when the store cannot be reached at all:
        ``OutcomeUnknown``.

        A refusal ("full", "nothing happened") after an attempt whose answer was lost (here,
        or a write botocore sent again) is told only once the request is fenced
        (``RequestLog.fence``): that attempt may still be in flight, and would otherwise
        book a seat freed after the refusal was told.

        All of it runs within the thread's deadline (``booking.dynamo.access.deadline``, set
        by ``book`` and ``cancel``) less a reserve for the fence: past it, ``StillDeciding``,
        after fencing a lost attempt in the reserve. An event the store throttled a moment
        ago is answered ``Overloaded`` without a write (``cool_down``), and a throttle met
        here starts its cool-down when it left the person without a definite answer
        (``NOT_ANSWERED``, caused by the throttle: ``caused_by_throttle``, or after a last
        attempt that was throttled); one absorbed on
        the way to a seat or a "full", or met by a booking that then ran out of time for
        another reason, does not.
        """
        event_id = request.content["event_id"]
        self._turn_away(event_id)
        throttled, left = throttles(), time_left()
        denied = True  # by a throttle: until an answer or another failure says otherwise
        try:
            try:
                with deadline(None if left is None
                              else left - min(FENCE_RESERVE, max(left, 0) / 4)):
                    answer = self._settle(request, write, unknown_message)
            except _OutOfTime as late:  # the time kept for the fence is this block's
                answer = self._out_of_time(request, unknown_message, late.__cause__,
                                           lost=late.lost)
            denied = False
            return answer
        except Exception as failure:
            denied = isinstance(failure, NOT_ANSWERED + (StoreError,)) and (
                caused_by_throttle(failure) or last_attempt_throttled())
            raise
        finally:
            if self.cool_down is not None:
                self.cool_down.after(event_id, throttled=throttles() != throttled,
                                     denied=denied)

    def turn_away_if_busy(self, event_id: str) -> int | None:
        """A booking's first question: ``Overloaded`` (nothing sent) while the store's
        throttle of the event cools down, unless this process lately saw the event sold
        out (``Strategy.sold_out_lately``): that booking is answered from a read, which
        costs no write and says "full" truly. Returns the cool-down's wait when it lets
        such a booking through (None: no cool-down)."""
        wait = self.cool_down.retry_after(event_id) if self.cool_down else None
        if wait is not None and not self.catalog.strategy_for(event_id).sold_out_lately(
                event_id):
            raise Overloaded(retry_after=wait)
        return wait

    def _turn_away(self, event_id: str) -> None:
        """``Overloaded`` (nothing sent) while the event cools down: before any write."""
        wait = self.cool_down.retry_after(event_id) if self.cool_down else None
        if wait is not None:
            raise Overloaded(retry_after=wait)

    def _answer_by_reading(self, strategy: Strategy, event: Event, registration: Registration,
                           order: Order, riders: Riders, wait: int) -> Registration:
        """While the event cools down: the answer of one consistent read ("full", "already
        registered", this request's own registration), else ``Overloaded`` as for anyone
        else (the read found room, or could not be made): nothing is written."""
        try:
            answered = strategy.full_by_reading(event, registration, order, riders)
        except (StoreError, BookingContention, StoreUnavailable):  # throttled, past the deadline: busy
            answered = None
        if answered is None:
            raise Overloaded(retry_after=wait)
        return answered

    def _settle(self, request: Request, write: Callable[[], Registration], unknown_message: str) -> Registration:
        resolving, lost = None, lost_attempts()
        failure, readable = None, True
        for delay in (*RESEND_DELAYS, None):
            try:
                answer = write()
            except PastDeadline as late:
                raise _OutOfTime(lost=resolving is not None or lost != lost_attempts()) from late
            except (StoreUnavailable, BookingContention) as unknown:
                if not (isinstance(unknown, StoreUnavailable) or unknown.maybe_applied):
                    # every attempt was cancelled by a conflict: nothing happened
                    return self._refuse(request, unknown, unknown_message,
                                        lost=resolving is not None or lost != lost_attempts())
                self._count_unknown("first_attempt" if resolving is None else None)
                resolving = resolving or time.monotonic() + RESOLVE_SECONDS
                failure = unknown
            except (BookingError, StoreError) as refused:
                self._count_unknown("resolved" if resolving is not None else None)
                return self._refuse(request, refused, unknown_message,
                                    lost=resolving is not None or lost != lost_attempts())
            else:
                self._count_unknown("resolved" if resolving is not None else None)
                return answer
            try:
                answered, readable = self.requests.recall(request), True
            except PastDeadline as late:
                raise _OutOfTime(lost=True) from late
            except (BookingError, StoreError) as error:
                answered, readable = None, False
                if getattr(error, "unreachable", False):
                    break  # the store is down: say so now rather than hold the answer
            if answered is not None:
                self._count_unknown("resolved")
                return answered
            left = time_left()
            if left is not None and delay is not None and delay / 2 >= left:
                raise _OutOfTime(lost=True) from failure
            if delay is None or time.monotonic() + delay > resolving:
                break
            time.sleep(random.uniform(delay / 2, delay if left is None else min(delay, left)))
        if readable and failure is not None:  # a lost attempt, and none of it applied
            self._count_unknown("resolved")
            return self._refuse(request, failure, unknown_message, lost=True)
        self._count_unknown("unresolved")
        raise OutcomeUnknown(unknown_message) from failure

    def _out_of_time(self, request: Request, unknown_message: str,
                     cause: BaseException | None, *,
                     lost: bool) -> Registration:
        """The deadline passed before the outcome was known: "pending, ask again"
        (``StillDeciding``). After a lost attempt the request is fenced first, in the time
        kept for it, so that no attempt of this asking can apply after a later asking is
        refused; a row found instead is the answer (it applied)."""
        if lost:
            try:
                answered = self.requests.fence(request)
            except InvalidBooking:
                raise
            except (BookingError, StoreError):
                answered = None  # unfenced: the narrow case docs/exactly-once.md names
            if answered is not None:
                self._count_unknown("resolved")
                return answered
        self._count_unknown("past_deadline")
        raise StillDeciding(unknown_message) from cause

    def _refuse(self, request: Request, refusal: Exception, unknown_message: str, *,
                lost: bool) -> Registration:
        """Raise ``refusal``; after a ``lost`` attempt, only once it can no longer apply
        (the request fenced), and if it had applied, answer its registration instead."""
        if not lost:
            raise refusal
        refusal.fenced = True  # type: ignore[attr-defined]  # closes a re-ask's earlier ones too
        try:
            answered = self.requests.fence(request)
        except InvalidBooking:
            raise  # the request id holds another request: that is the answer
        except (BookingError, StoreError) as error:
            self._count_unknown("unresolved")
            raise OutcomeUnknown(unknown_message) from error
        if answered is not None:
            return answered
        raise refusal

    def _count_unknown(self, what: str | None) -> None:
        if what is not None:
            with self._lock:
                self.unknown_outcomes[what] += 1

    def find_registration(self, event_id: str, *, email: str) -> Registration | None:
        """The person's registration for the event, or None."""
        event_id = validation.clean_event_id(event_id)
        email = validation.email_lookup_key(email)
        return self.catalog.strategy_for(event_id).find(event_id, email)

    def cancel(self, event_id: str, *, email: str, registration_id: str | None = None,
               request_id: str | None = None, registration: Registration | None = None,
               tickets: dict[str, int] | None = None, seats: tuple[int, ...] | None = None) -> Outcome:
        """Free the person's seat (every seat of their order); return the removed
        registration. With ``tickets`` (type -> quantity) only those seats of the order
        are freed and the answer holds just them (cancelling every seat is a whole
        cancellation); more than the order holds is ``InvalidBooking``, nothing changed.

        With ``registration_id`` (as carried by a cancellation link) only that registration
        is cancelled: if the person has since cancelled and booked again, ``NotRegistered``.
        ``registration`` is the whole registration a signed link names (trusted, it comes
        from our signature): strategies that can then cancel in one write without reading.
        ``request_id`` makes a repeated cancellation answer like the first (as ``book``).
        ``seats`` (with ``tickets``): the order's seat numbers whose passes are cancelled,
        of exactly those types and counts (else its unused ones of each type are chosen).
        Raises ``EventNotFound``, ``NotRegistered``, ``InvalidBooking`` for a malformed
        e-mail, or, as ``book``, ``OutcomeUnknown``, ``StillDeciding`` or ``Overloaded``.
        Returns the ``Outcome`` (replayed: the answer is the one an earlier asking of
        ``request_id`` wrote, read from its request row).
        """
        replays: list[Registration] = []
        with deadline(self.deadline_seconds):
            removed = self._cancel(event_id, email=email, registration_id=registration_id,
                                   request_id=request_id, registration=registration,
                                   tickets=tickets, seats=seats, replays=replays)
        return Outcome.cancellation(removed, replayed=any(r is removed for r in replays))

    def _cancel(self, event_id: str, *, email: str, registration_id: str | None,
                request_id: str | None, registration: Registration | None,
                tickets: dict[str, int] | None, replays: list[Registration], seats: Any = None) -> Registration:
        event_id = validation.clean_event_id(event_id)
        self._turn_away(event_id)  # before anything is read
        email = validation.email_lookup_key(email)
        if registration_id is not None and not validation.REGISTRATION_ID_PATTERN.match(
                str(registration_id)):
            raise NotRegistered()
        request_id = validation.clean_request_id(request_id) or uuid.uuid4().hex
        strategy = self.catalog.strategy_for(event_id)
        event = self.catalog.event_for(event_id, tickets)
        # A link names no tickets: its registration is whole only on an event where nobody
        # chooses any (one seat of the only type); an order is read (a part may be gone).
        known = registration if registration is not None and not event.offers_orders and (
            registration.event_id, registration.email, registration.registration_id) == (
            event_id, email, registration_id) else None
        if tickets is not None:
            _, tickets = self.tickets_of(event_id, tickets)
        request = Request.cancellation(request_id, event_id, email, registration_id, time.time(),
                                       tickets=tickets and event.registered_tickets(tickets))
        others: tuple = (self.codes.giving_back(),) if self.codes else ()
        if self.cancel_riders is not None:
            whole = strategy.find(event_id, email) if tickets is not None else None
            others += tuple(self.cancel_riders(event_id, request_id, whole,
                                               seats if tickets is not None else None))
        # A cancellation that removes the order deletes its answers in its own write (an
        # event that never had questions: nothing more is written).
        removal = self.questions.removal(self.catalog.known_event(
            event_id, max_age=QUESTIONS_SECONDS), request_id) if self.questions else None
        riders = _NotingRiders(self.requests, request,
                               others=others + ((removal,) if removal else ()), noted=replays)
        try:
            return self.settle(request, lambda: strategy.cancel(
                event, email, registration_id, riders=riders, known=known, release=tickets),
                CANCEL_UNKNOWN)
        except UnknownTicketTypes:
            # The stored order holds a type added since the event was read here: before
            # any write, so read the event and cancel again.
            fresh = self.catalog.get_event(event_id)
            return self.settle(request, lambda: strategy.cancel(
                fresh, email, registration_id, riders=riders, known=known, release=tickets),
                CANCEL_UNKNOWN)

    def availability(self, event_id: str) -> Availability:
        event_id = validation.clean_event_id(event_id)
        return self.catalog.strategy_for(event_id).availability(self.catalog.event_for(event_id))

    def page_availability(self, event_id: str, *, fresh: bool = False) -> Availability | None:
        """The event's seats for its page, cheap and bounded in time: None (show no count)
        while the event cools down or for ``TOLD_FULL_SECONDS`` after this process told
        someone it was full (nothing is sent), or when the read is throttled, fails or
        takes longer than ``PAGE_READ_SECONDS`` (within the request's deadline). Seats read
        here less than ``RECENT_SEATS_SECONDS`` ago are shown again without a read, unless
        they said the event (or a quota) had no seat left: "full" is said only from a read
        at that instant; ``fresh``: never from memory (the booking's own page, which says
        whether it took the last seat). ``EventNotFound`` as ``availability``."""
        event_id = validation.clean_event_id(event_id)
        if self.cool_down is not None and self.cool_down.retry_after(event_id) is not None:
            return None
        now = self.clock()
        with self._lock:
            seen, read_at = self._seats_seen.get(event_id, (None, 0.0))
            told_full = self._told_full.get(event_id)
        if not fresh and told_full is not None and now - told_full < TOLD_FULL_SECONDS:
            return None
        if seen is not None and now - read_at < RECENT_SEATS_SECONDS and not fresh:
            return seen
        budget = PAGE_READ_SECONDS if self.deadline_seconds is None else min(
            PAGE_READ_SECONDS, self.deadline_seconds)
        try:
            with deadline(budget):
                seats = self.availability(event_id)
        except (StoreError, BookingContention, StoreUnavailable):
            return None
        if all(quota.remaining > 0 for quota in seats.quotas.values()):
            with self._lock:
                if len(self._seats_seen) > 1000:  # forget what is no longer recent
                    self._seats_seen = {key: value for key, value in self._seats_seen.items()
                                        if now - value[1] < RECENT_SEATS_SECONDS}
                self._seats_seen[event_id] = (seats, now)
        return seats

    def availabilities(self, events: list[Event]) -> dict[str, Availability]:
        """Availability of each of ``events`` (every further quota in its ``further``) by
        event id, as few reads as each strategy's data allows; events deleted meanwhile are
        left out. For lists: the home page, the admin's event list."""
        by_strategy: dict[str, list[Event]] = {}
        for event in events:
            by_strategy.setdefault(event.strategy, []).append(event)
        found: dict[str, Availability] = {}
        for name, listed in by_strategy.items():
            found.update(self.catalog.strategies[name].availabilities(listed))
        return found

    def place_in_line(self, registration: Registration) -> int | None:
        """A pending registration's place among the event's pending ones (1: next to be
        decided), by arrival time; None for strategies that decide at once."""
        if registration.status != PENDING:
            return None
        return self.catalog.strategy_for(registration.event_id).place_in_line(registration)



@dataclass(frozen=True)
class _NotingRiders(Riders):
    """Riders that note the answers the request row gave (``noted``): read before a write,
    or to a write refused because an earlier asking of the request applied. Such an answer
    is a replay."""

    noted: list = field(default_factory=list, compare=False)

    def answer(self, refusal: Any) -> Registration | None:
        return self._noted(super().answer(refusal))

    def answer_read(self, rows: list[dict | None]) -> Registration | None:
        return self._noted(super().answer_read(rows))

    def recall(self) -> Registration | None:
        return self._noted(super().recall())

    def _noted(self, answered: Registration | None) -> Registration | None:
        if answered is not None:
            self.noted.append(answered)
        return answered


class _InFlight(StillDeciding):
    """A re-ask answered "pending" from its read: an earlier asking may still be running."""


class _OutOfTime(Exception):
    """Inside ``settle``: the deadline passed (its cause says where); ``lost``: an attempt
    of this asking may still be in flight."""

    def __init__(self, *, lost: bool) -> None:
        super().__init__("out of time")
        self.lost = lost


def _contact(email: str) -> str | None:
    """The address as typed (trimmed), where it differs from its key: e-mails go there."""
    typed = validation.clean_typed_email(email)
    return None if typed == validation.normalize_email(email) else typed
