"""Shards strategy (sharded lock items: the lock item split in shards).

lock_table materializes the lock target as one lock item per event, so every booking and
every rejection of an event is a transactional write of that one item, and DynamoDB gives
one item at most 1,000 WCU/s: about 500 answers per second per event, whatever the number
of web servers. Here the lock target is split: the event's seats are ``SHARDS`` lock items,
or more for an event that expects more arrivals a second (``seats.py``), each owning a
share of the capacity; the shares add up to the event's.

A booking is lock_table's TransactWriteItems, on one shard picked at random:

1. put the registration (naming its shard), only if (event, e-mail) does not exist yet;
2. increment the shard's count, only if the shard exists and count < its capacity;
3. put the request row and the confirmation's outbox row (``exactly_once/request_log.py``).

Two bookings for a shard's last seat write the same item, so DynamoDB serializes them and
one condition fails, as on lock_table; no shard can count more than its share, so the
event never counts more than its capacity. Seats do not move between shards: when the
picked shard is dry (refused at 2), the booking moves to the seats, and never answers
"full" from one shard:

- it reads the event's marker item (or one of its copies, ``seats.py``: they spread the
  reads) strongly consistently; if it is marked sold out (and no
  waiting-list hold can have lapsed since), the answer is "full": a rejection after a
  sell-out is one refused transaction spread over the shards and one read, never a write
  of a hot item;
- otherwise it reads the marker and every shard in one TransactGetItems (one instant): a
  shard with a free seat gets the booking next (weighted by free seats); a lapsed hold's
  seat is taken over; with no seat anywhere the answer is "full", and the marker is marked
  sold out only if its ``epoch`` is still the one read.

Every write that frees a seat (a cancellation, a released hold, a capacity edit) bumps the
marker's epoch and removes its mark in the same transaction, so a mark never outlives the
instant it describes. A shard over its capacity (``ThrottlingError``) sends the booking to
another shard at once. Idempotency is lock_table's: the request row rides in the
transaction, and the ClientRequestToken names the registration and the shard.

A cancellation reads the registration (its shard), then deletes it, counts the seat back
on its shard and bumps the marker in one transaction.

Orders (several seats, ticket types, further quotas: docs/orders.md) take their seats from
the shards of every quota they draw on (a lock item per quota, each split in shards), all
in the booking's one transaction: ``orders.py`` (and what the 100-action limit bounds).
A waiting-list offer holds an order the same way, on the same shards (``holds.py``).
"""
import dataclasses
import random
import threading

from booking.dynamo import items
from booking.dynamo.access import TransactionCancelled
from booking.dynamo.tables import EVENT_LOCKS
from booking.errors import AlreadyRegistered, EventFull, EventNotFound
from booking.exactly_once.request_log import Request

from booking.strategies.base import (AGAIN, CAPACITY_NAMES, READ_AGAIN, OneItemPerPerson,
                                     Rewrite, now_ms, old_item, refused_at)
from booking.strategies.holds import HoldsMap, availability_of
from booking.strategies.shards import audit as shards_audit
from booking.strategies.shards import capacity as shards_capacity
from booking.strategies.shards import seats
from booking.strategies.shards.holds import ShardsHolds
from booking.strategies.shards.orders import ShardsOrders, check_order_shape
from booking.strategies.shards.seats import (BUMP, MARKERS, SHARDS, DryShards, any_marker_key,
                                            marker_key, shard_key, shards_for)

COUNT_ONE_MORE = f"SET confirmed_count = confirmed_count + :one, {BUMP}"
COUNT_ONE_LESS = f"SET confirmed_count = confirmed_count - :one, {BUMP}"
THROTTLED = "ThrottlingError"


class ShardsStrategy(ShardsHolds, OneItemPerPerson):
    name = "shards"
    max_capacity = 100_000
    takes_orders = True
    description = (f"Registrations in their own table; the seats split over {SHARDS} lock "
                   "items (more for an event expecting more arrivals a second); one "
                   "transaction per booking, for ticket drops.")

    def __init__(self, **kwargs):
        super().__init__(**kwargs)
        self.locks = self.store.table(EVENT_LOCKS)
        self.held = HoldsMap(self.locks, BUMP)
        self.dry = DryShards()
        self.shared = seats.SharedReads()  # one snapshot in flight per event
        self.orders = ShardsOrders(self)
        self._shard_counts: dict[str, int] = {}  # event id -> its shards (never changes)
        self._counting = threading.Lock()
        self._marks: set = set()  # (event id, epoch, until) this process marked or is marking

    def shard_count(self, event_id) -> int:
        """How many shards ``event_id`` has (its marker's ``shards``; ``SHARDS`` when the
        marker names none, or when there is no marker)."""
        return self.shard_counts([event_id])[event_id]

    def shard_counts(self, event_ids) -> dict[str, int]:
        """Event id -> its shards: read once per process (one BatchGetItem of the markers not
        known yet; a drop's first bookings wait for one read, not one each)."""
        if any(event_id not in self._shard_counts for event_id in event_ids):
            with self._counting:
                unknown = list(dict.fromkeys(e for e in event_ids if e not in self._shard_counts))
                if unknown:
                    markers = self.store.batch_get([(self.locks, marker_key(e)) for e in unknown])
                    for event_id, marker in zip(unknown, markers):
                        if marker is not None:
                            self._shard_counts[event_id] = int(marker.get("shards", SHARDS))
        return {event_id: self._shard_counts.get(event_id, SHARDS) for event_id in event_ids}

    def check_order_shape(self, event):
        check_order_shape(event)

    def provision(self, event):
        new = "attribute_not_exists(event_id)"
        count = shards_for(event)
        shares = seats.shares(event.capacity, [0] * count)
        marker = {**marker_key(event.id), "epoch": 0,
                  **({"shards": count} if count != SHARDS else {})}  # else stored as ever
        self.store.transact_write([
            ("Put", self.events.put_op(items.event_item(event), condition=new)),
            ("Put", self.locks.put_op(marker, condition=new)),
            *[("Put", self.locks.put_op(seats.shard_item(event.id, n, share,
                                                          orders=not event.is_plain),
                                        condition=new))
              for n, share in enumerate(shares)],
            *self.orders.provision_ops(event),
        ])
        self._shard_counts[event.id] = count

    def book(self, event_id, registration, order=None):
        if order is not None:
            return self.orders.book(event_id, registration, order)
        request = Request.booking(registration)
        count = self.shard_count(event_id)
        hint = self.dry.next_turn(event_id, count)
        if hint.every():  # every shard was dry a moment ago: read before writing
            answered = self._answered_by_reading(event_id, registration, request)
            if answered is not None:
                return answered
        at = {"shard": hint.pick()}

        def attempt(shard, over=None):
            at["shard"] = shard
            return Rewrite(self._booking_ops(event_id, registration, request, shard, over),
                           self.tokens.client_token(registration.registration_id,
                                                    f"{'over' if over else 'book'}-{shard}"))

        def decode(cancelled):
            registered, shard = old_item(cancelled, 0), old_item(cancelled, 1)
            if refused_at(cancelled, 0) and self.tokens.is_mine(registered, registration):
                return registration  # a resend of our own transaction that had applied
            if refused_at(cancelled, 1) and shard is None:
                raise EventNotFound() from None
            if refused_at(cancelled, 0):
                raise AlreadyRegistered(existing=items.registration_or_none(registered)) from None
            if refused_at(cancelled, 1):  # this shard is dry: where is a seat?
                self.dry.note(event_id, [at["shard"]])
                return self._elsewhere(event_id, attempt)
            if cancelled.code(1) == THROTTLED:  # this shard is over its capacity: another
                return attempt(self.dry.get(event_id, count).pick(avoid=at["shard"]))
            return None

        first = attempt(at["shard"])
        return self.transact(first.operations, written=registration, decode=decode,
                             request=request, request_at=2, token=first.token)

    def sold_out_lately(self, event_id):
        if not self.dry.get(event_id).dry:  # nothing seen dry: no need to know the count
            return False
        return self.dry.get(event_id, self.shard_count(event_id)).every()

    def full_by_reading(self, event_id, registration, order=None):
        if order is not None or not self.sold_out_lately(event_id):
            return None  # an order's quotas: the cool-down answers it (no read here)
        return self._answered_by_reading(event_id, registration, Request.booking(registration))

    def _answered_by_reading(self, event_id, registration, request):
        """This request's registration, ``AlreadyRegistered``, or "full" from the mark, read
        before any write (``read_before_writing``); None when the event is not marked sold
        out (then the booking writes)."""
        marker, answered = self.read_before_writing(event_id, registration, request)
        if answered is not None:
            return answered
        if marker.get("full_until", 0) > now_ms():
            # still sold out: keep reading first
            self.dry.note(event_id, range(self.shard_count(event_id)))
            raise EventFull()
        return None

    def read_before_writing(self, event_id, registration, request):
        """One consistent BatchGetItem of the marker, the person's registration and the
        request row: (the marker, this request's registration or None); raises
        ``EventNotFound`` or ``AlreadyRegistered``."""
        key = any_marker_key(event_id)  # the marker or a copy: their reads spread
        marker, mine, *row = self.store.batch_get([
            (self.locks, key),
            (self.registrations_table, {"event_id": event_id, "email": registration.email}),
            *self.requests.reads(request)])
        answered = self.requests.answer(request, row[0]) if row else None
        if answered is not None:
            return marker, answered
        if marker is None and key == marker_key(event_id):
            raise EventNotFound()
        marker = marker or {}  # a copy not made yet: not marked (the write decides)
        if self.tokens.is_mine(mine, registration):
            return marker, registration
        if mine is not None:
            raise AlreadyRegistered(existing=items.registration_from_item(mine))
        return marker, None

    def _booking_ops(self, event_id, registration, request, shard, over=None):
        take = over or ("Update", self.locks.update_op(
            shard_key(event_id, shard), COUNT_ONE_MORE,
            condition="attribute_exists(event_id) AND confirmed_count < #capacity",
            names=CAPACITY_NAMES, values={":one": 1}))
        return [("Put", self.registrations_table.put_op(
                    items.registration_item(registration, shard=shard),
                    condition="attribute_not_exists(email)")),
                take, *self.requests.ops(request, registration)]

    def _elsewhere(self, event_id, attempt):
        """After a dry shard: "full" from the sold-out mark, else from one consistent read
        of every shard, which otherwise names the shard (or lapsed hold) to try next."""
        refused = self.shared.clock()  # a snapshot joined must start after this
        marker, now = self.locks.get(any_marker_key(event_id)) or {}, now_ms()
        if marker.get("full_until", 0) > now:
            raise EventFull() from None
        try:
            seen = self.shared.read(event_id, refused, lambda: seats.snapshot(self, event_id))
        except TransactionCancelled as cancelled:
            if not cancelled.conflict:
                raise
            # a booking was landing, or a shard is busy: try one not seen dry
            hint = self.dry.get(event_id, self.shard_count(event_id))
            return AGAIN if hint.every() else attempt(hint.pick())
        self.between_read_and_write()
        free = seen.free()
        self.dry.note(event_id, seen.dry(), replace=True)
        if free:
            return attempt(random.choice(free))
        lapsed = seen.expired_hold(now)
        if lapsed:
            return attempt(lapsed[0], self.take_over_op(event_id, *lapsed, now))
        if not seen.complete:
            raise EventNotFound() from None
        self.mark_sold_out(event_id, seen)
        raise EventFull() from None

    def mark_sold_out(self, event_id, seen):
        """Mark the event sold out as ``seen``, unless a seat was freed since. Once per
        process for one reading (epoch and until): at the sell-out, every booking in flight
        reads "no seat" at the same epoch, and one mark serves them all (each still answers
        "full" from its own read); a freed seat bumps the epoch, so a new mark is made."""
        mark = (event_id, seen.marker["epoch"], seen.full_until())
        with self._counting:
            if mark in self._marks:
                return
            if len(self._marks) > 1000:  # forget old marks: at worst one write more
                self._marks.clear()
            self._marks.add(mark)
        shards_capacity.mark_sold_out(self, event_id, seen)

    def cancel(self, event_id, email, registration_id=None, *, request, known=None, event=None,
               release=None):
        # A link does not name the shards the registration counts on: read it first. An
        # event with orders: the stored order says what to free (``release``: a part).
        def remove(stored):
            if event is None:
                return self._remove(event_id, stored, request)
            return self.orders.remove(event_id, stored, request, event, release)

        return self.remove_as_read(
            lambda: self._stored(event_id, email, registration_id), remove,
            request=request, require_event=lambda: self._require_event(event_id))

    def _remove(self, event_id, stored, request):
        """Delete exactly ``stored``, count its seat back on its shard, bump the marker."""
        removed = items.registration_from_item(stored)
        operations = [
            ("Delete", self.registrations_table.delete_op(
                {"event_id": event_id, "email": removed.email},
                condition="registration_id = :rid", values={":rid": removed.registration_id})),
            ("Update", self.locks.update_op(
                shard_key(event_id, stored["shard"]), COUNT_ONE_LESS,
                condition="attribute_exists(event_id)", values={":one": 1})),
            *seats.freed_ops(self.locks, event_id),
            *self.requests.ops(request, removed),
        ]

        def decode(cancelled):
            if refused_at(cancelled, 1) or refused_at(cancelled, 2):
                raise EventNotFound() from None
            return READ_AGAIN if refused_at(cancelled, 0) else None

        return self.transact_once(operations, written=removed, decode=decode, request=request,
                                  request_at=2 + MARKERS, token=self.tokens.client_token(
                                      f"{removed.registration_id}:{request.request_id}", "cancel"))

    def availability(self, event_id, quotas=()):
        if quotas:
            found, further = self.orders.further(event_id, quotas)
        else:
            found, further = seats.shard_items(self, [event_id]).get(event_id), {}
        if not found:
            raise EventNotFound()
        return dataclasses.replace(availability_of(seats.as_counter(found), now_ms()),
                                   further=further)

    def availabilities(self, event_ids):
        now = now_ms()
        return {event_id: availability_of(seats.as_counter(found), now)
                for event_id, found in seats.shard_items(self, event_ids).items()}

    def change_capacity(self, event_id, *, expected_version, capacity, changes, quotas=None):
        shards_capacity.change_capacity(self, event_id, expected_version=expected_version,
                                        capacity=capacity, changes=changes, quotas=quotas)

    def delete(self, event_id, quotas=()):
        shards_capacity.delete(self, event_id, quotas)

    def audit(self, event):
        return shards_audit.audit_event(self, event)

    def repair(self, event):
        return shards_audit.repair_event(self, event)

    def _require_event(self, event_id):
        marker = self.locks.get(marker_key(event_id))
        if marker is None:
            raise EventNotFound()
        return marker
