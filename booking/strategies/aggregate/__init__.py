"""Aggregate strategy (aggregate item with a version: docs/concepts/guards.md).

The event item itself is the lock target: it holds the attendees (a map keyed by the
normalized e-mail), the confirmed count and a version. Instead of a read followed by a
version-checked write, a booking is one UpdateItem whose ConditionExpression states the
whole rule: the event exists, a seat is free, the person is not yet in the map. DynamoDB
applies conditional writes to one item one at a time, so two bookings can never both see
the last seat. Bookings and cancellations bump ``booking_version``, never ``version``:
``version`` counts the organizer's edits only (version-checked), so a busy event's bookings never
refuse an edit, and an edit's own condition (``confirmed_count <= :capacity``) already
states what it needs of the attendees.

Idempotency: the update goes out in one TransactWriteItems with the request row (request
id -> this registration, only if no live row holds the id) and the confirmation's outbox
row (``booking/exactly_once/request_log.py``). The attendee itself also carries its request id, but that
is gone after a cancellation, so the request row is what answers a repeat of a request
that booked, at any later time, with the registration it made; a reused id with other
content is refused by the same row; a refused booking wrote nothing, so its repeat runs
again. A resend of the applied transaction is answered by its ClientRequestToken.

One request per booking; once this process was told "full" for the event, a booking reads
before it writes (``sold_out.py``): one consistent BatchGetItem of the event item (its
counts and this person's attendee entry) and the request row answers "full" while the
item shows no seat, with read units instead of a refused write of the whole item, and
otherwise the booking writes as above. A cancellation removes exactly one
registration (by its id), with its request row and the notice's outbox row, in one
transaction: its only request when a signed link names the whole registration, otherwise
after reading the attendee. The price: the item is capped at 400 KB, which bounds the capacity
(``max_capacity``; ``ORDER_MAX_CAPACITY`` for an event with orders, whose attendees hold
their tickets), and every write rewrites the whole item (twice the units, being
transactional), so capacity units per booking grow with the number of attendees.

Orders (several seats, ticket types, further quotas: docs/orders.md) are the same one
conditional update, over every quota's count in this item: ``orders.py``.
"""
import dataclasses

from booking.dynamo import items
from booking.dynamo.tables import EVENTS
from booking.errors import (AlreadyRegistered, EventFull, EventNotFound, InvalidBooking,
                            NotRegistered)
from booking.exactly_once.request_log import Request
from booking.models import Registration

from booking.strategies import event_edits
from booking.strategies.aggregate import audit as aggregate_audit
from booking.strategies.aggregate.holds import BUMP, BUMP_VALUES, AggregateHolds
from booking.strategies.aggregate.orders import AggregateOrders
from booking.strategies.base import (AGAIN, CAPACITY_NAMES, Rewrite, Strategy, expired_holder,
                                     now_ms, refused_at)
from booking.strategies.holds import HoldsMap, availability_of, quota_availability_of
from booking.strategies.sold_out import read_first

ITEM_SIZE_LIMIT = 400 * 1024
# Room for the event's own attributes: name (twice: as typed and case-folded), dates,
# zone, venue, a 2,000-character description (8 KB in the worst case), counters, names.
EVENT_ATTRIBUTES_RESERVE = 12 * 1024
# Worst case for one attendee: a 254-byte e-mail key, a 100-character name (up to 400
# bytes in UTF-8), the timestamp, the registration and request ids, and attribute names.
ATTENDEE_MAX_BYTES = 900
# Orders (docs/orders.md): the event item also defines its ticket types (20 names of 40
# bytes, each naming up to 10 quotas) and counts its quotas (10 names, twice), and every
# attendee holds a ``tickets`` map. Each entry of that map is at least one seat, so a seat
# needs at most one entry more: a 40-byte type name, its number and the map's overhead.
ORDER_DEFINITION_RESERVE = 11 * 1024
TICKET_ENTRY_MAX_BYTES = 60
ORDER_MAX_CAPACITY = ((ITEM_SIZE_LIMIT - EVENT_ATTRIBUTES_RESERVE - ORDER_DEFINITION_RESERVE)
                      // (ATTENDEE_MAX_BYTES + TICKET_ENTRY_MAX_BYTES))
COUNTS = ("#capacity, confirmed_count, holds, hold_seats, quota_capacities, "  # availability
          "quota_counts")

BOOK = f"SET attendees.#email = :attendee, confirmed_count = confirmed_count + :one, {BUMP}"
BOOK_CONDITION = (
    "attribute_exists(event_id) AND confirmed_count < #capacity "
    "AND attribute_not_exists(attendees.#email)"
)
CANCEL = f"REMOVE attendees.#email SET confirmed_count = confirmed_count - :one, {BUMP}"


class AggregateStrategy(AggregateHolds, Strategy):
    name = "aggregate"
    max_capacity = (ITEM_SIZE_LIMIT - EVENT_ATTRIBUTES_RESERVE) // ATTENDEE_MAX_BYTES
    takes_orders = True
    description = "One event item holds attendees, count and version; one conditional update per booking."

    def __init__(self, **kwargs):
        super().__init__(**kwargs)
        self.events = self.store.table(EVENTS)
        self.held = HoldsMap(self.events, BUMP, BUMP_VALUES, counts_quotas=True)
        self.orders = AggregateOrders(self)

    def check_order_shape(self, event):
        if event.capacity > ORDER_MAX_CAPACITY:
            raise InvalidBooking(
                f"With aggregate, an event with ticket types or orders of several seats holds "
                f"at most {ORDER_MAX_CAPACITY} seats (its orders' tickets share the event "
                f"item's 400 KB): lower the capacity, or choose 'lock_table'.", field="capacity")

    def provision(self, event):
        item = {**items.event_item(event), "attendees": {}, "confirmed_count": 0}
        if event.quotas:
            item["quota_counts"] = {quota: 0 for quota in event.quotas}
        self.events.put(item, condition="attribute_not_exists(event_id)")

    def book(self, event_id, registration, order=None):
        if order is not None:
            return self.orders.book(event_id, registration, order)
        request = Request.booking(registration)
        if self.sold_out.any_of([event_id]):  # lately refused "full" here: read first
            answered = self._answered_by_reading(event_id, registration, request)
            if answered is not None:
                return answered
        operations = [("Update", self.events.update_op(
            {"event_id": event_id}, BOOK, condition=BOOK_CONDITION,
            names={"#email": registration.email, **CAPACITY_NAMES},
            values={":attendee": items.attendee_value(registration), **BUMP_VALUES})),
            *self.requests.ops(request, registration)]

        def decode(cancelled):
            if not refused_at(cancelled, 0):
                return None
            old = cancelled.reasons[0].old_item
            attendee = (old or {}).get("attendees", {}).get(registration.email)
            if self.tokens.is_mine(attendee, registration):
                return registration  # botocore resent an update whose answer was lost
            over = old and self.book_over_expired(event_id, old, registration, now_ms())
            if over:  # full, but a waiting-list hold has expired: take its seat
                return Rewrite([over, *operations[1:]],
                               self.tokens.client_token(registration.registration_id, "book-over"))
            refusal = self._booking_refusal(old, registration.email)
            if isinstance(refusal, EventFull):
                self.sold_out.note(event_id)  # the next rejections here read first
            raise refusal from None

        return self.transact(operations, written=registration, decode=decode, request=request,
                             request_at=1,
                             token=self.tokens.client_token(registration.registration_id, "book"))

    def full_by_reading(self, event_id, registration, order=None):
        if order is not None:
            return self.orders.full_by_reading(event_id, registration, order)
        if not self.sold_out.any_of([event_id]):
            return None
        return self._answered_by_reading(event_id, registration, Request.booking(registration))

    def _booking_refusal(self, event_item, email):
        if event_item is None:
            return EventNotFound()
        attendees = event_item.get("attendees", {})
        if email in attendees:
            existing = items.registration_from_attendee(event_item["event_id"], email, attendees[email])
            return AlreadyRegistered(existing=existing)
        return EventFull()

    def _answered_by_reading(self, event_id, registration, request):
        """This request's registration, ``AlreadyRegistered``, ``EventNotFound``, or "full"
        from one consistent read of the event item (no seat, no lapsed hold to take over);
        None when it shows a seat (the hint is cleared and the booking writes)."""
        item = self.read_event(event_id, registration, request)
        if isinstance(item, Registration):
            return item
        if item["confirmed_count"] < item["capacity"] or expired_holder(item, now_ms()):
            self.sold_out.clear(event_id)
            return None
        raise EventFull()

    def read_event(self, event_id, registration, request) -> dict | Registration:
        """The event item's counts (``read_first``: with the request row), or this
        request's registration; raises ``AlreadyRegistered`` for an attendee."""
        read = read_first(self, [(self.events, {"event_id": event_id})], registration, request,
                          projections={self.events.name: (
                              f"event_id, {COUNTS}, attendees.#email",
                              {**CAPACITY_NAMES, "#email": registration.email})})
        if read.answered is not None:
            return read.answered
        item = read.counters[0]
        attendee = (item.get("attendees") or {}).get(registration.email)
        if self.tokens.is_mine(attendee, registration):
            return registration
        if attendee is not None:
            raise self._booking_refusal(item, registration.email)
        return item

    def cancel(self, event_id, email, registration_id=None, *, request, known=None, event=None,
               release=None):
        if event is not None:  # an event with orders: the stored order says what to free
            return self.orders.cancel(event_id, email, registration_id, request=request,
                                      event=event, release=release)
        # Remove only the registration read (or named by a link, unread), in a transaction
        # with the request row: its ClientRequestToken makes botocore's resend of an
        # applied cancel answer success (a plain UpdateItem's resend would find it gone).
        def decode(cancelled):
            if known is not None and refused_at(cancelled, 0):
                if cancelled.reasons[0].old_item is None:
                    raise EventNotFound() from None
                raise NotRegistered() from None
            return AGAIN if refused_at(cancelled, 0) else None  # changed since read: again

        def read():
            stored = known or self.find(event_id, email)
            return stored if stored and registration_id in (None, stored.registration_id) else None

        def remove(stored):
            return self.transact_once(
                [("Update", self.events.update_op(
                    {"event_id": event_id}, CANCEL,
                    condition="attendees.#email.registration_id = :rid", names={"#email": email},
                    values={":rid": stored.registration_id, **BUMP_VALUES})),
                 *self.requests.ops(request, stored)],
                written=stored, decode=decode, request=request, request_at=1,
                token=self.tokens.client_token(
                    f"{stored.registration_id}:{request.request_id}", "cancel"))

        return self.remove_as_read(read, remove, request=request, require_event=lambda: None)

    def find(self, event_id, email):
        item = self._get(event_id, "attendees.#email", {"#email": email})
        value = item.get("attendees", {}).get(email)
        return items.registration_from_attendee(event_id, email, value) if value else None

    def availability(self, event_id, quotas=()):
        return self._availability(self._get(event_id, COUNTS, CAPACITY_NAMES), now_ms())

    def availabilities(self, event_ids):
        found = self.events.batch_get([{"event_id": e} for e in event_ids],
                                      projection=f"event_id, {COUNTS}", names=CAPACITY_NAMES)
        now = now_ms()
        return {item["event_id"]: self._availability(item, now) for item in found if item is not None}

    @staticmethod
    def _availability(item, now):
        seats = availability_of(item, now)
        if not item.get("quota_capacities"):
            return seats
        return dataclasses.replace(seats, further=quota_availability_of(item, now))

    def registrations(self, event_id):
        attendees = self._get(event_id, "attendees")["attendees"]
        for email, value in sorted(attendees.items()):
            yield items.registration_from_attendee(event_id, email, value)

    def change_capacity(self, event_id, *, expected_version, capacity, changes, quotas=None):
        # One conditional update: the version check and "no fewer seats than attendees".
        event_edits.change_counted_event(self.events, event_id, expected_version=expected_version,
                                         capacity=capacity, changes=changes, quotas=quotas)

    def delete(self, event_id, quotas=()):
        self.events.delete({"event_id": event_id})  # the registrations live in this item

    def audit(self, event):
        return aggregate_audit.audit_event(self, event)

    def repair(self, event):
        return aggregate_audit.repair_event(self, event)

    def _get(self, event_id, projection, names=None):
        item = self.events.get(
            {"event_id": event_id}, projection=f"event_id, {projection}", names=names)
        if item is None:
            raise EventNotFound()
        return item
