"""The ``streams`` strategy (decisions from the stream): a booking is accepted at once as
``pending``; the decider (``decider.py``) confirms or rejects each in stream order. Holds:
``holds.py``; audit and repair: ``audit.py``. How and why: docs/streams.md.
"""
import time
from contextlib import suppress
from dataclasses import replace
from decimal import Decimal

from booking.dynamo import items
from booking.dynamo.access import ConditionFailed
from booking.dynamo.tables import ACCESS_CODES, STREAM_REGISTRATIONS
from booking.dynamo.transaction import Members, Refusal
from booking.errors import AlreadyRegistered, EventNotFound, InvalidBooking
from booking.exactly_once.access_codes import give_back_members
from booking.exactly_once.riders import Riders
from booking.models import (CAPACITY_QUOTA, CONFIRMATION, CONFIRMED, PENDING, REJECTED,
                            REJECTION, DEFAULT_TICKET_TYPE, Availability, Event, Order,
                            Registration, UnknownTicketTypes)
from booking.strategies import event_edits
from booking.strategies.base import (AGAIN, CAPACITY_NAMES, READ_AGAIN, OneItemPerPerson,
                                     cancellation)
from booking.strategies.holds import HoldsMap, counted_availability
from booking.strategies.quota_counts import count_changes, counts_of, room_condition
from booking.strategies.streams.audit import IN_EVENT, audit_event, repair_event
from booking.strategies.streams.checkpoints import Checkpoints
from booking.strategies.streams.holds import BUMP, BUMP_VALUES, STATUS_NAMES, StreamsHolds

# What ``decide`` answers besides CONFIRMED and REJECTED.
NOT_PENDING, EVENT_GONE = "not_pending", "event_gone"
EVENT_ABSENT, EVENT_EXISTS = "attribute_not_exists(event_id)", "attribute_exists(event_id)"
# The person holds nothing for the event, or only a rejected request (asking again is new).
NOTHING_OR_REJECTED = "attribute_not_exists(email) OR #status = :rejected"
STILL_PENDING = "#status = :pending AND registration_id = :rid"
DECIDED = "SET #status = :status, decided_at = :now"
# Exactly the registration as read: an item stored without ``tickets`` holds one seat.
AS_READ = ("registration_id = :rid AND #status = :status"
           " AND (attribute_not_exists(tickets) OR tickets = :old)")
PENDING_FILTER, AHEAD_FILTER = "#status = :pending", "#status = :pending AND registered_at < :at"
EVENT_FIELDS = ("event_id, #capacity, confirmed_count, holds, hold_seats, quota_capacities, "
                "quota_counts, ticket_types")
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


def counted(clauses: list[str]) -> str:
    """An update moving the counts, and ``count_changes`` (the version the repair checks)."""
    return f"SET {', '.join(clauses)} ADD count_changes :one"


class StreamsStrategy(StreamsHolds, OneItemPerPerson):
    name = "streams"
    max_capacity = 1_000_000
    description = ("Every booking is accepted at once as pending; a stream decider confirms "
                   "or rejects them in arrival order.")
    decidable = STILL_PENDING  # only a pending registration is decided (a control replaces it)
    stale_pending_seconds = 300.0  # check_capacity reports one pending longer while a decider runs
    registrations_spec = STREAM_REGISTRATIONS
    audit, repair = audit_event, repair_event
    change_capacity = event_edits.change_counted_event
    # Whether the belief has the order's types, else the event item is read (a test replaces it).
    _knows = staticmethod(knows_types)

    def __init__(self, **kwargs):
        super().__init__(**kwargs)
        self.held = HoldsMap(self.events, BUMP, BUMP_VALUES, counts_quotas=True)
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
        """Accept ``registration`` as pending; the decider decides its order later."""
        pending = replace(registration, status=PENDING)
        members = Members([("registration", ("Put", self.registrations_table.put_op(
            items.registration_item(pending), condition=NOTHING_OR_REJECTED,
            names=STATUS_NAMES, values={":rejected": REJECTED})))])
        members.extend(riders.members(pending, notice=False))  # its e-mail goes with the decision

        def decode(refusal: Refusal):
            if not refusal.refused("registration"):
                return None
            stored = refusal.old("registration")
            if self.tokens.is_mine(stored, pending):
                return pending
            raise AlreadyRegistered(existing=items.registration_or_none(stored)) from None

        return self.transact(members, written=pending, decode=decode, riders=riders,
                             token=self.tokens.client_token(registration.registration_id, "book"))

    # --- the decision ---------------------------------------------------------------------
    def decide(self, registration: Registration, *, now: float | None = None) -> str:
        """Confirm or reject one pending registration (the decider's step): the outcome."""
        return self._decide(registration, now, {})

    def decide_all(self, registrations, *, now: float | None = None):
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
                if outcome is not AGAIN:  # a conflict is tried again, as any decision's
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
            if outcome is not AGAIN:
                return outcome
        raise AssertionError("unreachable: attempts() raises when spent")

    def _read(self, event_id: str) -> dict | None:
        return self.events.get({"event_id": event_id}, projection=EVENT_FIELDS,
                               names=CAPACITY_NAMES)

    def _believe(self, item: dict | None) -> dict | None:
        if item is not None:
            self._seen[item["event_id"]] = {k: item[k] for k in BELIEVED if k in item}
        return item

    def _write(self, registration: Registration, order: Order | None, status: str,
               now: float) -> str:
        """One decision's write; ``AGAIN``: a conflict, or the event item not as believed."""
        def decode(refusal: Refusal):
            if refusal.refused("registration"):
                return NOT_PENDING  # decided before (a redelivery, another decider), withdrawn
            if not refusal.refused("event"):
                return None
            if self._believe(refusal.old("event")) is None:  # what changed meanwhile
                return self._forget_orphan(registration)
            return AGAIN

        return self.transact_once(self._decision(registration, order, status, now),
                                  written=status, decode=decode)

    def _decision(self, registration: Registration, order: Order | None, status: str,
                  now: float) -> Members:
        """The registration decided (if still pending), the event item (a confirmation counts
        the order's seats if they fit, a rejection checks they still do not; None: a read
        found no room) and the decision's e-mail."""
        members = Members([("registration", ("Update", self.registrations_table.update_op(
            self._key(registration), DECIDED, condition=self.decidable, names=STATUS_NAMES,
            values={":status": status, ":now": Decimal(f"{now:.3f}"), ":pending": PENDING,
                    ":rid": registration.registration_id})))])
        if order is not None:
            key = {"event_id": registration.event_id}
            room, names, values = room_condition(order, lacking=status == REJECTED)
            condition = f"{EVENT_EXISTS} AND {room}"
            if status == CONFIRMED:
                clauses, count_names, counts = count_changes(order.seats, "+")
                event = ("Update", self.events.update_op(
                    key, counted(clauses), condition=condition,
                    names={**names, **count_names}, values={**values, **counts, ":one": 1}))
            else:  # a ConditionCheck body has a delete's shape: table, key, condition
                event = ("ConditionCheck", self.events.delete_op(
                    key, condition=condition, names=names, values=values))
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
            self.registrations_table.delete(
                self._key(registration), condition=self.decidable, names=STATUS_NAMES,
                values={":pending": PENDING, ":rid": registration.registration_id})
        return EVENT_GONE

    @staticmethod
    def _key(registration: Registration) -> dict:
        return {"event_id": registration.event_id, "email": registration.email}

    # --- cancelling: a confirmed order gives its seats back; a pending one is withdrawn ---
    def cancel(self, event: Event, email: str, registration_id: str | None, *, riders: Riders,
               known: Registration | None = None,
               release: dict[str, int] | None = None) -> Registration:
        def read():
            stored = items.registration_or_none(self._stored(event.id, email, registration_id))
            return None if stored is None or stored.status == REJECTED else stored

        return self.remove_as_read(
            read, lambda stored: self._remove(event, stored, riders, release), riders=riders,
            require_event=lambda: self._require_event(event.id))

    def _remove(self, event: Event, stored: Registration, riders: Riders,
                release: dict[str, int] | None):
        """Withdraw or cancel ``stored`` (or ``release`` of a confirmed order) as read."""
        if release is not None and stored.status != CONFIRMED:
            raise InvalidBooking("Your order is still being decided: cancel all of it, or "
                                 "part of it once it is confirmed.", field="tickets")
        keep, _, answer = cancellation(stored, release, riders.request)
        same = {":rid": stored.registration_id, ":status": stored.status, ":old": stored.tickets}
        members = Members([("registration", self.removal_op(stored, keep, AS_READ, same,
                                                             names=STATUS_NAMES))])
        if stored.status == CONFIRMED:
            clauses, names, counts = count_changes(event.order(answer.tickets).seats, "-")
            members.add("event", ("Update", self.events.update_op(
                {"event_id": event.id}, counted(clauses), condition=EVENT_EXISTS,
                names=names or None, values={**counts, ":one": 1})))
        members.extend(riders.members(answer))

        def decode(refusal: Refusal):
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
        return 1 + self._pending(registration.event_id, AHEAD_FILTER, {":at": at})

    def _pending(self, event_id: str, filter: str = PENDING_FILTER, values=None) -> int:
        return self.registrations_table.count(
            key_condition=IN_EVENT, filter=filter, names=STATUS_NAMES,
            values={":e": event_id, ":pending": PENDING, **(values or {})})

    # --- the event ------------------------------------------------------------------------
    def delete(self, event: Event) -> None:
        self.events.delete({"event_id": event.id})  # first: then nothing is confirmed any more
        self.registrations_table.delete_partition(event.id)
        self._seen.pop(event.id, None)

    def decider_running(self, now: float) -> bool:
        """Whether a decider reported a pass lately (its heartbeat rows)."""
        return any(row.get("seen_at", 0) > now - self.stale_pending_seconds
                   for row in Checkpoints(self.store).heartbeats())
