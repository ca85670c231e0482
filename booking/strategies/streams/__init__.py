"""The ``streams`` strategy (decisions from the stream): a booking is accepted at once as
``pending``; the decider (``decider.py``) confirms or rejects each in stream order. Holds:
``holds.py``; audit and repair: ``audit.py``. How and why: docs/streams.md.
"""
import time
from contextlib import suppress
from dataclasses import replace
from decimal import Decimal

from collections.abc import Iterable, Iterator
from typing import Unpack

from booking.dynamo import items
from booking.dynamo.access import ConditionFailed
from booking.dynamo.tables import ACCESS_CODES, STREAM_REGISTRATIONS
from booking.dynamo.expressions import Actions, Condition, attr, projection
from booking.dynamo.expressions import ConditionCheck, Members, Put, Refusal, Update
from booking.errors import AlreadyRegistered, EventNotFound, InvalidBooking
from booking.exactly_once.access_codes import give_back_members
from booking.exactly_once.riders import Riders
from booking.models import (CAPACITY_QUOTA, CONFIRMATION, CONFIRMED, PENDING, REJECTED,
                            REJECTION, DEFAULT_TICKET_TYPE, Availability, Event, Order,
                            Registration, UnknownTicketTypes)
from booking.strategies import event_edits
from booking.strategies.base import (AGAIN, READ_AGAIN, OneItemPerPerson, cancellation, hint_key,
                                     order_full)
from booking.strategies.base import ReadAgain, StrategyOptions, TryAgain
from booking.strategies.holds import HoldsMap, counted_availability
from booking.strategies.quota_counts import count_changes, counts_of, room_condition
from booking.strategies.streams.audit import audit_event, in_event, repair_event
from booking.strategies.streams.checkpoints import Checkpoints
from booking.strategies.streams.holds import BUMP, CHANGES, STATUS, StreamsHolds

# What ``decide`` answers besides CONFIRMED and REJECTED.
NOT_PENDING, EVENT_GONE = "not_pending", "event_gone"
EVENT_ABSENT, EVENT_EXISTS = attr("event_id").not_exists(), attr("event_id").exists()
# The person holds nothing for the event, or only a rejected request (asking again is new).
NOTHING_OR_REJECTED = attr("email").not_exists() | STATUS.eq(REJECTED)
IS_PENDING = STATUS.eq(PENDING)
EVENT_FIELDS = projection("event_id", "capacity", "confirmed_count", "holds", "hold_seats",
                          "quota_capacities", "quota_counts", "ticket_types")
# What a decider keeps of an event item: what an order's seats and room are judged by.
BELIEVED = ("event_id", "capacity", "confirmed_count", "quota_capacities", "quota_counts",
            "ticket_types")


def knows_types(event_item: dict, tickets: dict[str, int]) -> bool:
    """Whether the event item (as believed) has every type ``tickets`` names: a type added
    after the belief was read is not there, and its quotas must never be guessed."""
    return set(tickets) <= set(event_item.get("ticket_types") or (DEFAULT_TICKET_TYPE,))


def order_of(event_item: dict, tickets: dict[str, int]) -> Order:
    """What ``tickets`` take from each quota, at the capacities the event item holds
    (``UnknownTicketTypes`` for a type it does not have)."""
    if not knows_types(event_item, tickets):
        raise UnknownTicketTypes(sorted(tickets))
    types = event_item.get("ticket_types") or {}
    seats: dict[str, int] = {}
    for ticket_type, quantity in tickets.items():
        for quota in (CAPACITY_QUOTA, *types.get(ticket_type, ())):
            seats[quota] = seats.get(quota, 0) + quantity
    found = counts_of(event_item)
    return Order(seats=seats, capacities={q: found[q][0] for q in seats})


def fits(event_item: dict, order: Order) -> bool:
    found = counts_of(event_item)
    return all(found[q][1] + n <= found[q][0] for q, n in order.seats.items())


def counted(changes: Actions) -> Actions:
    """An update moving the counts, and ``count_changes`` (the version the repair checks)."""
    return changes.add(CHANGES, 1)


def as_read(stored: Registration) -> Condition:
    """Exactly the registration as read: an item stored without ``tickets`` holds one seat."""
    tickets = attr("tickets")
    return (attr("registration_id").eq(stored.registration_id) & STATUS.eq(stored.status)
            & (tickets.not_exists() | tickets.eq(stored.tickets)))


class StreamsStrategy(StreamsHolds, OneItemPerPerson):
    name = "streams"
    max_capacity = 1_000_000
    description = ("Every booking is accepted at once as pending; a stream decider confirms "
                   "or rejects them in arrival order.")
    stale_pending_seconds = 300.0  # check_capacity reports one pending longer while a decider runs
    registrations_spec = STREAM_REGISTRATIONS
    audit, repair = audit_event, repair_event
    change_capacity = event_edits.change_counted_event
    # Whether the belief has the order's types, else the event item is read (a test replaces it).
    _knows = staticmethod(knows_types)

    def __init__(self, **kwargs: Unpack[StrategyOptions]) -> None:
        super().__init__(**kwargs)
        self.held = HoldsMap(self.events, BUMP, counts_quotas=True)
        # An access code's use is taken at acceptance (a rider on the pending write); a
        # rejection gives it back in its own write (docs/streams.md#access-codes).
        self.access_codes = self.store.table(ACCESS_CODES)
        # The event item as this decider last saw it (a guess: every write checks it).
        self._seen: dict[str, dict] = {}

    def provision(self, event: Event) -> None:
        quotas = {"quota_counts": dict.fromkeys(event.quotas, 0)} if event.quotas else {}
        self.events.put({**items.event_item(event), "confirmed_count": 0, **quotas},
                        condition=EVENT_ABSENT)

    # --- acceptance: one write, the pending registration and the riders -------------------
    def book(self, event: Event, registration: Registration, order: Order,
             riders: Riders) -> Registration:
        """Accept ``registration`` as pending; the decider decides its order later. Where
        this process lately saw the event's requests rejected, "full" from a read first
        (``full_by_reading``): after a sell-out nothing is written for a refusal."""
        answered = self.full_by_reading(event, registration, order, riders)
        if answered is not None:
            return answered
        pending = replace(registration, status=PENDING)
        members = Members([("registration", Put(self.registrations_table,
                                                items.registration_item(pending),
                                                NOTHING_OR_REJECTED))])
        members.extend(riders.members(pending, notice=False))  # its e-mail goes with the decision

        def decode(refusal: Refusal) -> Registration | None:
            if not refusal.refused("registration"):
                return None
            stored = refusal.old("registration")
            if self.tokens.is_mine(stored, pending):
                return pending
            raise AlreadyRegistered(existing=items.registration_or_none(stored)) from None

        return self.transact(members, written=pending, decode=decode, riders=riders,
                             token=self.tokens.client_token(registration.registration_id, "book"))

    # --- "full" from a read, once this process saw the event's requests rejected ----------
    def find(self, event_id: str, email: str) -> Registration | None:
        """The person's registration; a rejected one notes that this process saw the event
        refuse (its next bookings read first: ``full_by_reading``)."""
        found = super().find(event_id, email)
        if found is not None and found.status == REJECTED:
            self.sold_out.note(hint_key(event_id))
        return found

    def full_by_reading(self, event: Event, registration: Registration, order: Order,
                        riders: Riders) -> Registration | None:
        """Once this process saw a rejection for the event: one consistent read of the
        event item, the person's registration and the request row. Raises ``EventFull``
        when the order has no room at the instant of the read (as the decider would judge
        it from that read), ``AlreadyRegistered``; this request's registration when it was
        accepted before; None (accept it pending) when it may fit or the read cannot say."""
        if not self.sold_out.any_for(event.id):
            return None
        found = self.store.batch_get([(self.events, {"event_id": event.id}),
                                      (self.registrations_table, self._key(registration)),
                                      *riders.reads()])
        item, stored, rows = found[0], found[1], found[2:]
        answered = riders.answer_read(rows)
        if answered is not None:
            return answered
        if item is None:
            raise EventNotFound()
        if stored is not None and stored.get("status") != REJECTED:
            if self.tokens.is_mine(stored, registration):
                return items.registration_from_item(stored)
            raise AlreadyRegistered(existing=items.registration_from_item(stored))
        if not knows_types(item, registration.tickets):
            return None  # a type this read does not have: the decider rejects it in line
        read = order_of(item, registration.tickets)
        if not fits(item, read):  # the decider's own judgement of a read (``_decide``)
            counts = counts_of(item)
            raise order_full(read, next(q for q, n in read.seats.items()
                                        if counts[q][1] + n > counts[q][0]))
        self.sold_out.clear(hint_key(event.id))  # room: accept, and write again next time
        return None

    # --- the decision ---------------------------------------------------------------------
    def decide(self, registration: Registration, *, now: float | None = None) -> str:
        """Confirm or reject one pending registration (the decider's step): the outcome."""
        return self._decide(registration, now, {})

    def decide_all(self, registrations: Iterable[Registration], *,
                   now: float | None = None) -> Iterator[tuple[Registration, str]]:
        """Decide one stream page's pending registrations in order, yielding each with its
        outcome; an event read in this call serves only this call."""
        page: dict[str, dict | None] = {}
        for registration in registrations:
            yield registration, self._decide(registration, now, page)

    def _decide(self, registration: Registration, now: float | None, page: dict) -> str:
        now = time.time() if now is None else now
        event_id, tickets = registration.event_id, registration.tickets
        for _ in self.retry.attempts():
            item = self._seen.get(event_id)
            if item is None or not self._knows(item, tickets):  # a type added since: read
                item = self._believe(self._read(event_id))
            if item is None:
                return self._forget_orphan(registration)
            if not knows_types(item, tickets):  # not even as stored: never guess its quotas
                outcome = self._write(registration, None, REJECTED, now)
                if isinstance(outcome, str):  # a conflict is tried again, as any decision's
                    return outcome
                continue
            order = order_of(item, tickets)  # the belief picks the first write
            status, from_read = (CONFIRMED if fits(item, order) else REJECTED), False
            if status == REJECTED:  # believed without room: one consistent read a page
                read = page[event_id] = page.get(event_id) or self._read(event_id)
                if read is None:
                    return self._forget_orphan(registration)
                # No room at the instant of the read, while it was pending: no event member.
                from_read = not fits(read, order_of(read, tickets))
            outcome = self._write(registration, None if from_read else order, status, now)
            if isinstance(outcome, str):
                return outcome
        raise AssertionError("unreachable: attempts() raises when spent")

    def _read(self, event_id: str) -> dict | None:
        return self.events.get({"event_id": event_id}, projection=EVENT_FIELDS)

    def _believe(self, item: dict | None) -> dict | None:
        if item is not None:
            self._seen[item["event_id"]] = {k: item[k] for k in BELIEVED if k in item}
        return item

    def _write(self, registration: Registration, order: Order | None, status: str,
               now: float) -> str | TryAgain:
        """One decision's write; ``AGAIN``: a conflict, or the event item not as believed."""
        def decode(refusal: Refusal) -> str | TryAgain | None:
            if refusal.refused("registration"):
                return NOT_PENDING  # decided before (a redelivery, another decider), withdrawn
            if not refusal.refused("event"):
                return None
            if self._believe(refusal.old("event")) is None:  # what changed meanwhile
                return self._forget_orphan(registration)
            return AGAIN

        return self.transact_once(self.decision(registration, order, status, now),
                                  written=status, decode=decode)

    def decision(self, registration: Registration, order: Order | None, status: str,
                  now: float) -> Members:
        """The registration decided (if still pending), the event item (a confirmation counts
        the order's seats if they fit, a rejection checks they still do not; None: a read
        found no room) and the decision's e-mail."""
        members = Members([("registration", Update(
            self.registrations_table, self._key(registration),
            Actions().set(STATUS, status).set("decided_at", Decimal(f"{now:.3f}")),
            self.decidable(registration)))])
        if order is not None:
            key = {"event_id": registration.event_id}
            condition = EVENT_EXISTS & room_condition(order, lacking=status == REJECTED)
            event: Update | ConditionCheck
            if status == CONFIRMED:
                event = Update(self.events, key, counted(count_changes(order.seats, "+")),
                               condition)
            else:
                event = ConditionCheck(self.events, key, condition)
            members.add("event", event)
        kind = CONFIRMATION if status == CONFIRMED else REJECTION
        ops = self.requests.outbox.ops(kind, replace(registration, status=status), at=int(now))
        members.extend((f"outbox:{index}", op) for index, op in enumerate(ops))
        if status == REJECTED:  # the pending order's use of its code, given back
            members.extend(give_back_members(self.access_codes, registration))
        return members

    def _forget_orphan(self, registration: Registration) -> str:
        """Remove a pending registration whose event is gone (written as it was deleted)."""
        with suppress(ConditionFailed):
            self.registrations_table.delete(self._key(registration),
                                            condition=self.decidable(registration))
        return EVENT_GONE

    def decidable(self, registration: Registration) -> Condition:
        """The condition a decision's write holds to: the registration is still pending
        (a hook: a control replaces it)."""
        return IS_PENDING & attr("registration_id").eq(registration.registration_id)

    @staticmethod
    def _key(registration: Registration) -> dict:
        return {"event_id": registration.event_id, "email": registration.email}

    # --- cancelling: a confirmed order gives its seats back; a pending one is withdrawn ---
    def cancel(self, event: Event, email: str, registration_id: str | None, *, riders: Riders,
               known: Registration | None = None,
               release: dict[str, int] | None = None) -> Registration:
        def read() -> Registration | None:
            stored = items.registration_or_none(self._stored(event.id, email, registration_id))
            return None if stored is None or stored.status == REJECTED else stored

        return self.remove_as_read(
            read, lambda stored: self._remove(event, stored, riders, release), riders=riders,
            require_event=lambda: self._require_event(event.id))

    def _remove(self, event: Event, stored: Registration, riders: Riders,
                release: dict[str, int] | None) -> Registration | TryAgain:
        """Withdraw or cancel ``stored`` (or ``release`` of a confirmed order) as read."""
        if release is not None and stored.status != CONFIRMED:
            raise InvalidBooking("Your order is still being decided: cancel all of it, or "
                                 "part of it once it is confirmed.", field="tickets")
        keep, _, answer = cancellation(stored, release, riders.request)
        members = Members([("registration", self.removal_op(stored, keep, as_read(stored)))])
        if stored.status == CONFIRMED:
            members.add("event", Update(
                self.events, {"event_id": event.id},
                counted(count_changes(event.order(answer.tickets).seats, "-")), EVENT_EXISTS))
        members.extend(riders.members(answer))

        def decode(refusal: Refusal) -> ReadAgain | None:
            if refusal.refused("event"):
                raise EventNotFound() from None
            return READ_AGAIN if refusal.refused("registration") else None

        return self.transact(members, written=answer, decode=decode, riders=riders)

    # --- reading --------------------------------------------------------------------------
    def availability(self, event: Event) -> Availability:
        item = self._read(event.id)
        if item is None:
            raise EventNotFound()
        return replace(counted_availability(item, None), pending=self._pending(event.id))

    def place_in_line(self, registration: Registration) -> int | None:
        """1 + the pending registrations of the event that arrived before this one."""
        if registration.status != PENDING:
            return None
        at = items.registration_item(registration)["registered_at"]
        return 1 + self._pending(registration.event_id,
                                 IS_PENDING & attr("registered_at").lt(at))

    def _pending(self, event_id: str, filter: Condition = IS_PENDING) -> int:
        return self.registrations_table.count(key_condition=in_event(event_id), filter=filter)

    # --- the event ------------------------------------------------------------------------
    def delete(self, event: Event) -> None:
        self.events.delete({"event_id": event.id})  # first: then nothing is confirmed any more
        self.registrations_table.delete_partition(event.id)
        self._seen.pop(event.id, None)

    def decider_running(self, now: float) -> bool:
        """Whether a decider reported a pass lately (its heartbeat rows)."""
        return any(row.get("seen_at", 0) > now - self.stale_pending_seconds
                   for row in Checkpoints(self.store).heartbeats())
