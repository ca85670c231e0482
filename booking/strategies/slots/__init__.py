"""Slots strategy (one item per seat: docs/concepts/guards.md).

Creating the event creates one item per seat. A booking claims a free slot with a
conditional update (``attribute_exists(free_in)``: still free) and, in the same
TransactWriteItems, puts the registration only if (event, e-mail) does not exist yet. A
seat can be claimed once, so there can never be more confirmed registrations than slots.

Spreading contention: free slots sit in a sparse index (``free_in`` is set only while a
slot is free) sorted by a random ``shuffle`` key. A lookup reads free slots from a random
point of that order, in random order; a booking tries two and leaves the rest to this
process's next bookings (``candidates.py``), so concurrent clients rarely fight over the
same slot and most bookings need no lookup of their own. The index is eventually consistent on real DynamoDB: a
slot it lists may already be taken, which the claim's condition catches (then the next
candidate is tried).

Idempotency: the claim's transaction also puts the request row (request id -> this
registration, only if no live row holds the id) and the confirmation's outbox row
(``booking/exactly_once/request_log.py``). A repeat of a request that booked is refused by that row, which
answers with the registration it made, even after it was cancelled; when no slot is free
the same row is read in the batch that tells "full" from "already registered". A reused
id with other content is refused by the row; a refused booking wrote nothing, so its
repeat runs again. A resend of an applied claim is answered by its ClientRequestToken, or
(after a new lookup) by the request row.

Costs: creating an event writes ``capacity`` items (batched, 25 per request); a booking is
one transaction plus a share of a lookup (one in ``LOOKUP / PER_BOOKING`` bookings of a
busy process, one each when a process books rarely). "Full" is never taken from the
index alone (``freed.py``): the first rejection in a process reads the event's freed
epoch and then the slot items themselves (one consistent Query) before the batch read;
the process then remembers the sell-out at that epoch, and each later rejection is one
consistent BatchGetItem (an epoch item, the registration, the request row), 0 WCU. Slots
are freed, never deleted, by cancellations, and every write that frees one bumps the
epoch in the same transaction.

Orders (several seats, ticket types, further quotas: docs/orders.md) claim slot items of
every quota they draw on in one transaction: ``orders.py`` (and what the 100-action limit
of a transaction bounds).
"""
import random

from booking.dynamo import items
from booking.dynamo.tables import EVENT_LOCKS, SLOTS
from booking.errors import AlreadyRegistered, EventFull, EventNotFound
from booking.exactly_once.request_log import Request
from booking.models import Availability

from booking.strategies.base import AGAIN, OneItemPerPerson, now_ms, refused_at
from booking.strategies.slots import audit as slots_audit
from booking.strategies.slots import capacity as slots_capacity
from booking.strategies.slots import freed
from booking.strategies.slots.candidates import LOOKUP, PER_BOOKING, FreeSlotPool
from booking.strategies.slots.capacity import SHUFFLE_RANGE, free_slot
from booking.strategies.slots.holds import SlotsHolds
from booking.strategies.slots.orders import SlotsOrders, check_order_shape
from booking.strategies.sold_out import read_first


class SlotsStrategy(SlotsHolds, OneItemPerPerson):
    name = "slots"
    max_capacity = 10_000
    takes_orders = True
    description = "One pre-created item per seat; a booking claims a free slot in a transaction."

    def __init__(self, **kwargs):
        super().__init__(**kwargs)
        self.slots = self.store.table(SLOTS)
        self.locks = self.store.table(EVENT_LOCKS)  # the freed epoch (freed.py)
        self.orders = SlotsOrders(self)
        self.free_pool = FreeSlotPool()

    def check_order_shape(self, event):
        check_order_shape(event)

    def provision(self, event):
        # Slots first: the event becomes visible (bookable) only once all its seats exist.
        self.slots.batch_put([free_slot(event.id, n) for n in range(event.capacity)])
        self.orders.provision(event)
        self.events.put(items.event_item(event), condition="attribute_not_exists(event_id)")

    def book(self, event_id, registration, order=None):
        if order is not None:
            return self.orders.book(event_id, registration, order)
        request = Request.booking(registration)

        def decode(cancelled):
            registered = cancelled.reasons[1].old_item if refused_at(cancelled, 1) else None
            if self.tokens.is_mine(registered, registration):
                return registration  # a resend of our own claim that had applied
            if refused_at(cancelled, 1):
                raise AlreadyRegistered(existing=items.registration_or_none(registered)) from None
            # Someone else took this slot (or collided with us): try the next one.
            return AGAIN if refused_at(cancelled, 0) else None

        if self.sold_out.any_of([event_id]):  # verified sold out here: read first
            answered = self._answered_by_reading(event_id, registration, request)
            if answered is not None:
                return answered
        for _ in self.retry.attempts():
            candidates, now, seen = self._free_candidates(event_id), None, None
            if not candidates:  # the index may lag: read the slots themselves (freed.py)
                seen = self.see_slots(event_id, event_id)
                candidates = random.sample(seen.free, min(PER_BOOKING, len(seen.free)))
            if not candidates:  # a waiting-list hold may have expired: its slot is free
                now, candidates = seen.now, seen.lapsed
            if not candidates:
                refusal = self._no_free_slot(event_id, registration, request)
                if isinstance(refusal, EventFull):  # the next rejections here: one read
                    self.sold_out.note(event_id, seen.verified)
                if isinstance(refusal, Exception):
                    raise refusal
                return refusal  # this request's own earlier claim took a seat
            self.between_read_and_write()
            for slot in candidates:
                token = self.tokens.client_token(registration.registration_id,
                                                 f"slot-{slot}" if now is None else f"over-{slot}")
                operations = self._claim(event_id, slot, registration)
                if now is not None:
                    operations[0] = self.book_over_expired_op(event_id, slot, registration, now)
                outcome = self.transact_once(
                    operations + self.requests.ops(request, registration), written=registration,
                    decode=decode, token=token, request=request, request_at=2)
                if outcome is not AGAIN:
                    return outcome

    def full_by_reading(self, event_id, registration, order=None):
        if order is not None or not self.sold_out.any_of([event_id]):
            return None  # an order's quotas: the cool-down answers it (no read here)
        return self._answered_by_reading(event_id, registration, Request.booking(registration))

    def _answered_by_reading(self, event_id, registration, request):
        """This request's registration, ``AlreadyRegistered``, ``EventNotFound``, or "full"
        from one consistent read of an epoch item (``freed.py``: no slot freed since the
        sell-out was verified, no hold lapsed); None when a slot may be free (the hint is
        cleared and the booking looks)."""
        verified = self.sold_out.mark(event_id)
        read = read_first(self, [(self.locks, freed.any_epoch_key(event_id))], registration,
                          request, registrations=self.registrations_table)
        if read.answered is not None:
            return read.answered
        if verified is not None and verified.holds(read.counters[0], now_ms()):
            raise EventFull()
        self.sold_out.clear(event_id)
        return None

    def freed_ops(self, event_id):
        """The members every write that frees a slot adds: the freed epoch's bump."""
        return freed.freed_ops(self.locks, event_id)

    def see_slots(self, event_id, part) -> freed.Seen:
        """A partition's free and held slots, one consistent read after the epoch's."""
        return freed.see(self, event_id, part)

    def _no_free_slot(self, event_id, registration, request):
        event, mine, *row = self.store.batch_get([
            (self.events, {"event_id": event_id}),
            (self.registrations_table, {"event_id": event_id, "email": registration.email}),
            *self.requests.reads(request),
        ])
        answered = self.requests.answer(request, row[0]) if row else None
        if answered is not None:
            return answered
        if event is None:
            return EventNotFound()
        if self.tokens.is_mine(mine, registration):
            return registration
        if mine is not None:
            return AlreadyRegistered(existing=items.registration_from_item(mine))
        return EventFull()

    def _free_candidates(self, event_id):
        """A few free slots to try: from this process's pool, else from a lookup that
        leaves the rest in the pool (``candidates.py``)."""
        pooled = self.free_pool.take(event_id)
        if pooled:
            return pooled
        found = []
        if not self.free_pool.recently_none(event_id):
            start = random.randrange(SHUFFLE_RANGE)
            found = self._lookup(event_id, "free_in = :e AND shuffle >= :start",
                                 {":start": start})
        if not found:
            found = self._lookup(event_id, "free_in = :e", {})
        random.shuffle(found)
        return self.free_pool.take(event_id, found)

    def _lookup(self, event_id, condition, values):
        return [item["slot"] for item in self.slots.query(
            index="free_slots", key_condition=condition, values={":e": event_id, **values},
            limit=LOOKUP)]

    def _claim(self, event_id, slot, registration):
        return [
            ("Update", self.slots.update_op(
                {"event_id": event_id, "slot": slot},
                "SET holder = :email REMOVE free_in",
                condition="attribute_exists(free_in)", values={":email": registration.email})),
            ("Put", self.registrations_table.put_op(
                items.registration_item(registration, slot=slot),
                condition="attribute_not_exists(email)")),
        ]

    def cancel(self, event_id, email, registration_id=None, *, request, known=None, event=None,
               release=None):
        if event is not None:  # an event with orders: the stored order says what to free
            return self.orders.cancel(event_id, email, registration_id, request=request,
                                      event=event, release=release)
        # A link does not name the slot the registration holds: read it first.
        def remove(stored):
            removed = items.registration_from_item(stored)
            return self.transact_once([
                ("Delete", self.registrations_table.delete_op(
                    {"event_id": event_id, "email": email}, condition="registration_id = :rid",
                    values={":rid": removed.registration_id})),
                ("Update", self.slots.update_op(
                    {"event_id": event_id, "slot": stored["slot"]},
                    "SET free_in = :e REMOVE holder", condition="holder = :email",
                    values={":e": event_id, ":email": email})),
                *self.requests.ops(request, removed),
                *self.freed_ops(event_id),
            ], written=removed, request=request, request_at=2,
                decode=lambda cancelled: AGAIN if refused_at(cancelled, 0) else None,
                token=self.tokens.client_token(
                    f"{removed.registration_id}:{request.request_id}", "cancel"))

        return self.remove_as_read(  # again when it changed since read (or a conflict)
            lambda: self._stored(event_id, email, registration_id), remove, request=request,
            require_event=lambda: self._require_event(event_id))

    def availability(self, event_id, quotas=None):
        if quotas is not None:  # an event with orders: seats are what its slots say
            self._require_event(event_id)
            found = self.orders.availability(event_id, quotas)
            own = found.pop("capacity")
            return Availability(capacity=own.capacity, confirmed=own.confirmed, held=own.held,
                                further=found)
        event = self._require_event(event_id)
        return Availability(capacity=event["capacity"], confirmed=self._stored_count(event_id),
                            held=self.held_count(event_id, now_ms()))

    def change_capacity(self, event_id, *, expected_version, capacity, changes, quotas=None):
        slots_capacity.change_capacity(
            self, event_id, expected_version=expected_version, capacity=capacity,
            changes=changes, quotas=quotas)

    def delete(self, event_id, quotas=()):
        self.orders.delete(event_id, quotas)
        slots_capacity.delete(self, event_id)

    def audit(self, event):
        return slots_audit.audit_event(self, event)

    def repair(self, event):
        return slots_audit.repair_event(self, event)
