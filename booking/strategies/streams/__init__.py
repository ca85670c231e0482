"""Streams-serialized strategy (decisions from the stream): accept now, decide in order.

A booking never contends with another. It is one TransactWriteItems (one write request)
of two puts:

1. the provisional registration, status ``pending``, only if the person (e-mail key)
   holds nothing for the event, or only a ``rejected`` one (asking again after a
   refusal is a new request);
2. the request row (``booking/exactly_once/request_log.py``); no e-mail is owed yet.

The registrations table's stream carries every write, per partition (event) in commit
order, to the decider (``decider.py``), which calls ``decide`` for each pending
registration it reads. ``decide`` is one transaction:

1. the registration: ``pending`` -> ``confirmed``, only if it is still this pending
   registration (``#status = :pending AND registration_id = :rid``);
2. the event item: ``confirmed_count + 1``, only if ``confirmed_count < capacity``;
3. the confirmation's outbox row.

When (2) refuses, the event is full: a second transaction moves the registration to
``rejected`` with the rejection's outbox row, only while it is pending and the event is
still full (a cancellation meanwhile sends the decision back to (1)). Once an event was
found full (a hint only), the next rejections are decided from a read: one consistent read
of the event item per stream page (``decide_all``) that shows no seat rejects that page's
pending registrations of the event, each with (1) and the rejection's outbox row, no write
on the event item (a ConditionCheck is charged as a write on the hot item); a read that
shows a seat sends the decision back to the transactions above (docs/streams.md).
The condition on
``pending`` commits with the seat, so a record delivered twice, or read by two deciders
at once, is decided once: the second attempt is refused and changes nothing. That is
the history's guard (only the first runner proceeds) built into the write itself, as strong
as the history counter and cheaper: no separate claim that can outlive a crash.

Cancelling a confirmed registration deletes it and counts the seat back in one
transaction: the next pending registration the decider reaches gets it, or the first
person on the waiting list, whose offer holds it (``holds.py``: a hold is counted
in ``confirmed_count``, so the decider treats a held seat as taken), whichever writes
first. Rejected ones stay rejected (a definite answer; their people may join the line).
Cancelling a pending one withdraws it; the decider then finds nothing pending to decide.
The event item holds capacity, confirmed count and version; an edit checks its version and ``confirmed_count <= capacity`` in one update.
Every change of the count also adds 1 to ``count_changes``, so a repair that recounts the
confirmed registrations writes its count only if no decision or cancellation landed while
it counted.

Surface beyond the contract (``decides_at_once`` is False), used by the service, the
decider and ``check_capacity``:

``decide(registration, *, now=None) -> str``
    The decider's step for one pending registration: ``CONFIRMED``, ``REJECTED``,
    ``NOT_PENDING`` (decided before, or withdrawn) or ``EVENT_GONE``.
``decide_all(registrations, *, now=None)``
    ``decide`` for one stream page's pending registrations, in order, yielding each with
    its outcome; a read that found an event full serves only this call.
``place_in_line(registration) -> int``
    1 + the pending registrations of the event that arrived before this one.
``decider_running(now) -> bool``
    Whether a decider reported a pass within ``stale_pending_seconds``.
``registrations_table``
    The registrations table, whose stream the decider reads.
``decidable``
    The condition that only a still-pending registration is decided (a control replaces it).

Orders (several seats, ticket types, further quotas: docs/orders.md) are accepted the same
way and decided whole, in arrival order, against every quota: ``orders.py``.
"""
import time
from dataclasses import replace
from decimal import Decimal

from booking.dynamo import items
from booking.dynamo.access import ConditionFailed
from booking.dynamo.tables import STREAM_REGISTRATIONS
from booking.errors import AlreadyRegistered, EventNotFound
from booking.exactly_once.request_log import Request
from booking.models import CONFIRMATION, CONFIRMED, PENDING, REJECTED, REJECTION

from booking.strategies import event_edits
from booking.strategies.base import (AGAIN, CAPACITY_NAMES, READ_AGAIN, OneItemPerPerson,
                                     refused_at)
from booking.strategies.holds import HoldsMap, availability_of, quota_availability_of
from booking.strategies.streams import audit as streams_audit
from booking.strategies.streams.checkpoints import Checkpoints, decider_seen
from booking.strategies.streams.holds import BUMP, BUMP_VALUES, StreamsHolds
from booking.strategies.streams.orders import EVENT_GONE, NOT_PENDING, StreamsOrders

_REFUSED, _CONFLICT = "refused", "conflict"  # internal: decide again
EVENT_COUNTS = ("event_id, #capacity, confirmed_count, holds, hold_seats, quota_capacities, "
                "quota_counts")  # what availability reads
STATUS_NAMES = {"#status": "status"}


class StreamsStrategy(StreamsHolds, OneItemPerPerson):
    name = "streams"
    max_capacity = 1_000_000
    decides_at_once = False
    takes_orders = True
    description = ("Every booking is accepted at once as pending; a stream decider confirms "
                   "or rejects them in arrival order.")
    # Only a registration still pending may be decided: the guard against deciding twice.
    decidable = "#status = :pending AND registration_id = :rid"
    # check_capacity reports a registration pending longer than this while a decider runs.
    stale_pending_seconds = 300.0

    registrations_spec = STREAM_REGISTRATIONS

    def __init__(self, **kwargs):
        super().__init__(**kwargs)
        self.held = HoldsMap(self.events, BUMP, BUMP_VALUES, counts_quotas=True)
        self._full: set[str] = set()  # events this decider last found full (a hint only)
        self.orders = StreamsOrders(self)

    def provision(self, event):
        item = {**items.event_item(event), "confirmed_count": 0}
        if event.quotas:
            item["quota_counts"] = {quota: 0 for quota in event.quotas}
        self.events.put(item, condition="attribute_not_exists(event_id)")

    def book(self, event_id, registration, order=None):  # an order is decided whole later
        registration = replace(registration, status=PENDING)
        request = Request.booking(registration)
        operations = [
            ("Put", self.registrations_table.put_op(
                items.registration_item(registration),
                condition="attribute_not_exists(email) OR #status = :rejected",
                names=STATUS_NAMES, values={":rejected": REJECTED})),
            *self.requests.row_ops(request, registration),
        ]

        def decode(cancelled):
            if not refused_at(cancelled, 0):
                return None
            stored = cancelled.reasons[0].old_item
            if self.tokens.is_mine(stored, registration):
                return registration
            raise AlreadyRegistered(existing=items.registration_or_none(stored)) from None

        return self.transact(operations, written=registration, decode=decode, request=request,
                             request_at=1,
                             token=self.tokens.client_token(registration.registration_id, "book"))

    def decide(self, registration, *, now: float | None = None) -> str:
        """Confirm or reject one pending registration (the decider's step); what happened."""
        return self._decide(registration, now, set())

    def decide_all(self, registrations, *, now: float | None = None):
        """Decide ``registrations`` (one stream page's pending ones) in order; yield each
        with its outcome. A consistent read that found an event full serves the rest of
        this call's registrations of that event, never a later call's."""
        read_full: set[str] = set()  # events a read in this call found full
        for registration in registrations:
            yield registration, self._decide(registration, now, read_full)

    def _decide(self, registration, now, read_full: set[str]) -> str:
        now = time.time() if now is None else now
        if not registration.is_plain:
            return self.orders.decide(registration, now)
        event_id = registration.event_id
        for _ in self.retry.attempts():
            if event_id in self._full and (event_id in read_full or self._read_full(event_id)):
                # Full at the instant of the read, and this registration was pending
                # then: rejected without a write on the event item.
                read_full.add(event_id)
                outcome = self._try(registration, REJECTED, now, checked=False)
            else:
                # Once an event was found full, try the rejection first: its condition
                # ("still full") sends the decision to a confirmation if a seat was freed.
                first, second = ((REJECTED, CONFIRMED) if event_id in self._full
                                 else (CONFIRMED, REJECTED))
                outcome = self._try(registration, first, now)
                if outcome == _REFUSED:
                    outcome = self._try(registration, second, now)
            if outcome == REJECTED:
                self._full.add(event_id)
            elif outcome == CONFIRMED:
                self._full.discard(event_id)
            if outcome not in (_REFUSED, _CONFLICT):
                return outcome
            # a conflict, or the count moved between the two: decide again

    def _read_full(self, event_id) -> bool:
        """One consistent read of the event item: no seat at this instant, as the
        rejection's ConditionCheck judges it (a held seat counts as taken)? A missing
        event is not "full" (the write path finds it gone)."""
        event = self.events.get({"event_id": event_id}, projection="confirmed_count, #capacity",
                                names=CAPACITY_NAMES)
        return event is not None and event["confirmed_count"] >= event["capacity"]

    def _try(self, registration, status, now, *, checked=True) -> str:
        """One decision's transaction; ``checked=False``: a rejection a read found full,
        without the event item's ConditionCheck."""
        key = {"event_id": registration.event_id, "email": registration.email}

        def decode(cancelled):
            if refused_at(cancelled, 0):
                return NOT_PENDING  # decided before (a redelivery, another decider), withdrawn
            if not checked:
                return None
            if refused_at(cancelled, 1) and cancelled.reasons[1].old_item is None:
                self._forget_orphan(key, registration)  # the event was deleted meanwhile
                return EVENT_GONE
            return _REFUSED if refused_at(cancelled, 1) else None

        operations = (self._decision(key, registration, status, now) if checked
                      else self._rejection_from_read(key, registration, now))
        outcome = self.transact_once(operations, written=status, decode=decode)
        return _CONFLICT if outcome is AGAIN else outcome

    def _forget_orphan(self, key, registration) -> None:
        """Remove a pending registration whose event is gone (written just as it was
        deleted), only if it is still that pending registration."""
        try:
            self.registrations_table.delete(key, condition=self.decidable,
                                            names=STATUS_NAMES,
                                            values={":pending": PENDING,
                                                    ":rid": registration.registration_id})
        except ConditionFailed:
            pass

    def _decided_op(self, key, registration, status, now):
        """The registration: pending -> ``status``, only while it is this pending one."""
        return ("Update", self.registrations_table.update_op(
            key, "SET #status = :status, decided_at = :now", condition=self.decidable,
            names=STATUS_NAMES,
            values={":status": status, ":now": Decimal(f"{now:.3f}"), ":pending": PENDING,
                    ":rid": registration.registration_id}))

    def _decision(self, key, registration, status, now):
        """The decision's transaction: the pending registration, the event's count (a
        confirmation counts the seat; a rejection checks the event is still full), and
        the decision's e-mail."""
        event_key = {"event_id": registration.event_id}
        decided = [self._decided_op(key, registration, status, now)]
        if status == CONFIRMED:
            decided.append(("Update", self.events.update_op(
                event_key, "SET confirmed_count = confirmed_count + :one ADD count_changes :one",
                condition="attribute_exists(event_id) AND confirmed_count < #capacity",
                names=CAPACITY_NAMES, values={":one": 1})))
        else:  # a ConditionCheck body has a delete's shape: table, key, condition
            decided.append(("ConditionCheck", self.events.delete_op(
                event_key, condition="attribute_exists(event_id) AND confirmed_count >= #capacity",
                names=CAPACITY_NAMES)))
        kind = CONFIRMATION if status == CONFIRMED else REJECTION
        return decided + self.requests.outbox.ops(kind, replace(registration, status=status),
                                                  at=int(now))

    def _rejection_from_read(self, key, registration, now):
        """A rejection whose "full" a consistent read established: the pending
        registration and the rejection's e-mail, nothing on the event item."""
        return [self._decided_op(key, registration, REJECTED, now),
                *self.requests.outbox.ops(REJECTION, replace(registration, status=REJECTED),
                                          at=int(now))]

    def cancel(self, event_id, email, registration_id=None, *, request, known=None, event=None,
               release=None):
        def read():
            stored = self._stored(event_id, email, registration_id)
            return None if stored is None or stored.get("status") == REJECTED else stored

        def remove(stored):
            key, registration = {"event_id": event_id, "email": email}, items.registration_from_item(stored)
            if event is not None:  # an event with orders: the stored order says what to free
                return self.orders.remove(key, registration, request, event, release)
            return self._remove(key, registration, request)

        return self.remove_as_read(read, remove, request=request,
                                   require_event=lambda: self._require_event(event_id))

    def _remove(self, key, registration, request):
        """Delete exactly ``registration`` in its state as read (a confirmed one gives its
        seat back); ``READ_AGAIN`` when it changed meanwhile."""
        confirmed = registration.status == CONFIRMED
        operations = [("Delete", self.registrations_table.delete_op(
            key, condition="registration_id = :rid AND #status = :status",
            names=STATUS_NAMES,
            values={":rid": registration.registration_id, ":status": registration.status}))]
        if confirmed:
            operations.append(("Update", self.events.update_op(
                {"event_id": key["event_id"]},
                "SET confirmed_count = confirmed_count - :one ADD count_changes :one",
                condition="attribute_exists(event_id)", values={":one": 1})))

        def decode(cancelled):
            if confirmed and refused_at(cancelled, 1):
                raise EventNotFound() from None
            return READ_AGAIN if refused_at(cancelled, 0) else None

        return self.transact(operations + self.requests.ops(request, registration),
                             written=registration, decode=decode, request=request,
                             request_at=len(operations))

    def registrations(self, event_id):
        """Every registration of the event, pending, confirmed and rejected."""
        return super().registrations(event_id)

    def availability(self, event_id, quotas=()):
        event = self._require_event(event_id)
        pending = self.registrations_table.count(
            key_condition="event_id = :e", filter="#status = :pending",
            names=STATUS_NAMES, values={":e": event_id, ":pending": PENDING})
        return replace(availability_of(event, None), pending=pending,
                       further=quota_availability_of(event, None))

    def availabilities(self, event_ids):
        """Capacity, confirmed and held seats in one batch (lists leave the line uncounted)."""
        found = self.events.batch_get([{"event_id": e} for e in event_ids],
                                      projection=EVENT_COUNTS, names=CAPACITY_NAMES)
        # Every hold counts as held, a lapsed one too: the decider never takes it over (the
        # next offer does, or the worker frees it), so until then its seat is not free.
        return {item["event_id"]: availability_of(item, None) for item in found
                if item is not None}

    def place_in_line(self, registration) -> int:
        """1 + the pending registrations of the event that arrived before this one."""
        ahead = self.registrations_table.count(
            key_condition="event_id = :e",
            filter="#status = :pending AND registered_at < :at",
            names=STATUS_NAMES,
            values={":e": registration.event_id, ":pending": PENDING,
                    ":at": items.registration_item(registration)["registered_at"]})
        return ahead + 1

    def change_capacity(self, event_id, *, expected_version, capacity, changes, quotas=None):
        event_edits.change_counted_event(self.events, event_id, expected_version=expected_version,
                                         capacity=capacity, changes=changes, quotas=quotas)

    def delete(self, event_id, quotas=()):
        # The event item first: without it nothing is confirmed any more.
        self.events.delete({"event_id": event_id})
        self.registrations_table.delete_partition(event_id)

    def audit(self, event):
        return streams_audit.audit_event(self, event)

    def repair(self, event):
        return streams_audit.repair_event(self, event)

    def decider_running(self, now: float) -> bool:
        """Whether a decider reported a pass recently (its heartbeat rows)."""
        return decider_seen(Checkpoints(self.store), now=now, within=self.stale_pending_seconds)

    def _require_event(self, event_id):
        event = self.events.get({"event_id": event_id}, projection=EVENT_COUNTS,
                                names=CAPACITY_NAMES)
        if event is None:
            raise EventNotFound()
        return event

