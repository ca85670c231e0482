"""Lock-table strategy (lock item in a transaction: docs/concepts/guards.md).

Registrations stay one item per registration in their own table. A separate lock table
holds one item per event with its capacity, confirmed count and version. A booking is one
TransactWriteItems of writes that succeed or fail together:

1. put the registration, only if (event, e-mail) does not exist yet;
2. increment the lock item's count, only if the event exists and count < capacity;
3. put the request row (request id -> this registration), only if no live row holds the
   id, and the confirmation's outbox row (``booking/exactly_once/request_log.py``).

Two bookings for the last seat both write the same lock item, so DynamoDB's transaction
serializes them and one condition fails: the phantom that write skew needs is now a real
item. CancellationReasons tell "this request already booked" (3) from "already
registered" (1) from "full" or "no such event" (2) from "transaction conflict, retry"
(bounded, with backoff).

Idempotency lives in that same transaction. A repeat of a request that booked is refused
by (3), whose returned row answers with the registration it made, whether or not it is
still stored; a reused id with other content is refused the same way; a refused request
wrote nothing, so its repeat runs again. botocore's resend of an applied transaction is
answered by its ClientRequestToken (derived from the registration id).

A cancellation deletes exactly the registration (``registration_id`` condition), counts the
seat back and puts its own request row and the notice's outbox row, in one transaction;
when a signed cancellation link names the whole registration that is its only request,
otherwise a GetItem finds it first. With nothing left to cancel, the request row says
whether this very request already did.

One request per booking; capacity is not bounded by item size. Once this process was told
"full" for the event, a booking reads before it writes (``sold_out.py``): one consistent
BatchGetItem of the lock item, the person's registration and the request row answers
"full" while the lock item shows no seat (no write of the lock item), and otherwise the
booking writes as above.

Orders (several seats, ticket types, further quotas: docs/orders.md) take one lock item
per quota, all in the booking's one transaction: ``orders.py``.
"""
import dataclasses

from booking.dynamo import items
from booking.dynamo.tables import EVENT_LOCKS
from booking.errors import AlreadyRegistered, EventFull, EventNotFound, NotRegistered
from booking.exactly_once.request_log import Request
from booking.models import CAPACITY_QUOTA, QuotaAvailability

from booking.strategies import event_edits
from booking.strategies.base import (CAPACITY_NAMES, READ_AGAIN, OneItemPerPerson, Rewrite,
                                     expired_holder, now_ms, old_item, refused_at)
from booking.strategies.holds import HoldsMap, availability_of
from booking.strategies.lock_table import audit as lock_table_audit
from booking.strategies.lock_table.holds import BUMP, LockTableHolds
from booking.strategies.lock_table.orders import LockTableOrders, lock_key, quota_locks
from booking.strategies.sold_out import read_first

COUNT_ONE_MORE = f"SET confirmed_count = confirmed_count + :one, {BUMP}"
COUNT_ONE_LESS = f"SET confirmed_count = confirmed_count - :one, {BUMP}"


class LockTableStrategy(LockTableHolds, OneItemPerPerson):
    name = "lock_table"
    max_capacity = 100_000
    takes_orders = True
    description = "Registrations in their own table; a lock item per event counts them; one transaction per booking."

    def __init__(self, **kwargs):
        super().__init__(**kwargs)
        self.locks = self.store.table(EVENT_LOCKS)
        self.held = HoldsMap(self.locks, BUMP)
        self.orders = LockTableOrders(self)

    def provision(self, event):
        lock = {"event_id": event.id, "capacity": event.capacity, "confirmed_count": 0, "version": 1}
        new = "attribute_not_exists(event_id)"
        self.store.transact_write([
            ("Put", self.events.put_op(items.event_item(event), condition=new)),
            ("Put", self.locks.put_op(lock, condition=new)),
            *[("Put", self.locks.put_op(quota, condition=new)) for quota in quota_locks(event)],
        ])

    def book(self, event_id, registration, order=None):
        if order is not None:
            return self.orders.book(event_id, registration, order)
        request = Request.booking(registration)
        if self.sold_out.any_of([event_id]):  # lately refused "full" here: read first
            answered = self._answered_by_reading(event_id, registration, request)
            if answered is not None:
                return answered
        operations = [
            ("Put", self.registrations_table.put_op(
                items.registration_item(registration), condition="attribute_not_exists(email)")),
            ("Update", self.locks.update_op(
                {"event_id": event_id}, COUNT_ONE_MORE,
                condition="attribute_exists(event_id) AND confirmed_count < #capacity",
                names=CAPACITY_NAMES, values={":one": 1})),
            *self.requests.ops(request, registration),
        ]

        def decode(cancelled):
            registered, lock = old_item(cancelled, 0), old_item(cancelled, 1)
            if refused_at(cancelled, 0) and self.tokens.is_mine(registered, registration):
                return registration  # a resend of our own transaction that had applied
            if refused_at(cancelled, 1) and lock is None:
                raise EventNotFound() from None
            if refused_at(cancelled, 0):
                existing = items.registration_or_none(registered)
                raise AlreadyRegistered(existing=existing) from None
            if refused_at(cancelled, 1):
                over = self.book_over_expired(event_id, lock, now_ms())
                if over:  # full, but a waiting-list hold has expired: take its seat
                    return Rewrite([operations[0], over, *operations[2:]],
                                   self.tokens.client_token(registration.registration_id,
                                                            "book-over"))
                self.sold_out.note(event_id)
                raise EventFull() from None
            return None

        return self.transact(operations, written=registration, decode=decode, request=request,
                             request_at=2,
                             token=self.tokens.client_token(registration.registration_id, "book"))

    def full_by_reading(self, event_id, registration, order=None):
        if order is not None:
            return self.orders.full_by_reading(event_id, registration, order)
        if not self.sold_out.any_of([event_id]):
            return None
        return self._answered_by_reading(event_id, registration, Request.booking(registration))

    def _answered_by_reading(self, event_id, registration, request):
        """This request's registration, ``AlreadyRegistered``, ``EventNotFound``, or "full"
        from one consistent read of the lock item (no seat, no lapsed hold to take over);
        None when it shows a seat (the hint is cleared and the booking writes)."""
        read = read_first(self, [(self.locks, {"event_id": event_id})], registration, request,
                          registrations=self.registrations_table)
        if read.answered is not None:
            return read.answered
        lock = read.counters[0]
        if lock["confirmed_count"] < lock["capacity"] or expired_holder(lock, now_ms()):
            self.sold_out.clear(event_id)
            return None
        raise EventFull()

    def cancel(self, event_id, email, registration_id=None, *, request, known=None, event=None,
               release=None):
        if event is not None:  # an event with orders: the stored order says what to free
            return self.orders.cancel(event_id, email, registration_id, request=request,
                                      event=event, release=release)
        if known is not None:  # a link names the whole registration: one transaction
            return self._remove(event_id, known, request, read=False)
        return self.remove_as_read(
            lambda: self._stored(event_id, email, registration_id),
            lambda stored: self._remove(event_id, items.registration_from_item(stored), request,
                                        read=True),
            request=request, require_event=lambda: self._require_event(event_id))

    def _remove(self, event_id, registration, request, *, read):
        """Delete exactly ``registration``, count its seat back, write the request row.

        ``READ_AGAIN`` when it changed since it was ``read``; without a read, a
        registration that is not (or no longer) stored is ``NotRegistered``.
        """
        operations = [
            ("Delete", self.registrations_table.delete_op(
                {"event_id": event_id, "email": registration.email},
                condition="registration_id = :rid",
                values={":rid": registration.registration_id})),
            ("Update", self.locks.update_op(
                {"event_id": event_id}, COUNT_ONE_LESS,
                condition="attribute_exists(event_id)", values={":one": 1})),
            *self.requests.ops(request, registration),
        ]

        def decode(cancelled):
            if refused_at(cancelled, 1):
                raise EventNotFound() from None
            if refused_at(cancelled, 0):
                if read:
                    return READ_AGAIN
                raise NotRegistered() from None
            return None

        return self.transact(operations, written=registration, decode=decode, request=request,
                             request_at=2, token=self.tokens.client_token(
                                 f"{registration.registration_id}:{request.request_id}", "cancel"))

    def availability(self, event_id, quotas=()):
        if not quotas:
            return availability_of(self._require_event(event_id), now_ms())
        keys = [lock_key(event_id, quota) for quota in (CAPACITY_QUOTA, *quotas)]
        found = {item["event_id"]: item for item in self.locks.batch_get(keys) if item}
        if event_id not in found:
            raise EventNotFound()
        now, further = now_ms(), {}
        for quota in quotas:
            lock = found.get(lock_key(event_id, quota)["event_id"])
            if lock is not None:  # its seats held for offers apart, as the capacity's
                seats = availability_of(lock, now, quota)
                further[quota] = QuotaAvailability(capacity=seats.capacity,
                                                   confirmed=seats.confirmed, held=seats.held)
        return dataclasses.replace(availability_of(found[event_id], now), further=further)

    def availabilities(self, event_ids):
        found = self.locks.batch_get([{"event_id": e} for e in event_ids],
                                     projection="event_id, #capacity, confirmed_count, holds, "
                                                "hold_seats",
                                     names=CAPACITY_NAMES)
        now = now_ms()
        return {item["event_id"]: availability_of(item, now) for item in found if item is not None}

    def change_capacity(self, event_id, *, expected_version, capacity, changes, quotas=None):
        # The version check (event item) and the count checks (every resized quota's lock
        # item: the capacity's, then each further one's) in one transaction.
        update = event_edits.event_update(
            expected_version=expected_version, capacity=capacity, changes=changes, quotas=quotas)
        sizes = {CAPACITY_QUOTA: capacity, **(quotas or {})}
        operations = [
            ("Update", self.events.update_op({"event_id": event_id}, update.expression,
                                             **update.kwargs())),
            *[("Update", self.locks.update_op(
                lock_key(event_id, quota), "SET #capacity = :capacity",
                condition="attribute_exists(event_id) AND confirmed_count <= :capacity",
                names=CAPACITY_NAMES, values={":capacity": size}))
              for quota, size in sizes.items()],
        ]

        def decode(cancelled):
            if refused_at(cancelled, 0):
                old = cancelled.reasons[0].old_item
                raise event_edits.stale_or_missing(old, expected_version) from None
            for index, quota in enumerate(sizes, start=1):
                if refused_at(cancelled, index):
                    lock = cancelled.reasons[index].old_item
                    if lock is None:
                        raise EventNotFound() from None
                    taken = int(lock["confirmed_count"])  # holds are counted in it too
                    raise (event_edits.below_confirmed(taken) if quota == CAPACITY_QUOTA
                           else event_edits.below_taken(quota, taken)) from None
            return None

        self.transact(operations, written=None, decode=decode)

    def delete(self, event_id, quotas=()):
        # The lock item first: without it every booking fails, so nothing new arrives.
        self.locks.delete({"event_id": event_id})
        for quota in quotas:
            self.locks.delete(lock_key(event_id, quota))
        self.registrations_table.delete_partition(event_id)
        self.events.delete({"event_id": event_id})

    def audit(self, event):
        return lock_table_audit.audit_event(self, event)

    def repair(self, event):
        return lock_table_audit.repair_event(self, event)

    def _require_event(self, event_id):
        lock = self.locks.get({"event_id": event_id})
        if lock is None:
            raise EventNotFound()
        return lock
