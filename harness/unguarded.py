"""Unguarded control strategy: read the count, then write, with nothing tying them.

This is the write skew of seed 004 on purpose. Two bookings can both read "one seat
left" and both write their (different) registration items, so the event overbooks. It
exists only so that tests and the harnesses can prove they detect overbooking: it is not
in the product's strategy registry, and only tests and harnesses build it
(``harness.controls.control_service``). (It still refuses an exact duplicate, because the
registration's key is the e-mail: the put is conditional on the key being new.)

Its booking carries its request like the guarded ones, so comparisons stay fair: the put
goes out in one TransactWriteItems with the request row and the confirmation's outbox row
(``booking/exactly_once/request_log.py``), and a repeat of a request that booked answers with the
registration it made. Its cancellation is a plain DeleteItem with no request row: a
second control, which answers "not registered" to a resend of a cancel that applied.

Orders (docs/orders.md) are checked the careless way too: it reads the stored orders,
checks the new order's seats quota by quota, then writes the registration; two orders
that each saw room in a shared quota both commit.
"""
import time

from booking.strategies import audit
from booking.dynamo import items
from booking.dynamo.access import (CONDITION_FAILED as CCF, ConditionFailed,
                                   TransactionCancelled)
from booking.errors import AlreadyRegistered, EventFull, InvalidBooking, NotRegistered
from booking.models import Availability
from booking.exactly_once.request_log import Request

from booking.strategies import event_edits
from booking.strategies.base import OneItemPerPerson, quota_order
from booking.models import QuotaAvailability


class UnguardedStrategy(OneItemPerPerson):
    name = "unguarded"
    max_capacity = 100_000
    guarded = False
    takes_orders = True
    description = "Control: read the count, then write. Overbooks under concurrency."

    def __init__(self, *, race_delay_ms: float = 0.0, **kwargs):
        super().__init__(**kwargs)
        self.race_delay_ms = race_delay_ms  # widens the read-to-write window of the race

    def provision(self, event):
        self.events.put(items.event_item(event), condition="attribute_not_exists(event_id)")

    def book(self, event_id, registration, order=None):
        request = Request.booking(registration)
        if order is not None:
            taken = self._seats_taken(event_id)
            for quota in quota_order(order):  # quota by quota, from what was read
                if taken.get(quota, 0) + order.seats[quota] > order.capacities[quota]:
                    return self._refuse(event_id, registration, request, EventFull(quota=quota))
        elif self.availability(event_id).is_full:
            return self._refuse(event_id, registration, request, EventFull())
        self.between_read_and_write()
        operations = [("Put", self.registrations_table.put_op(
            items.registration_item(registration), condition="attribute_not_exists(email)"))]
        try:
            self.store.transact_write(operations + self.requests.ops(request, registration),
                           token=self.tokens.client_token(registration.registration_id, "book"))
        except TransactionCancelled as cancelled:
            answered = self.requests.answer_refusal(request, cancelled, 1)
            if answered is not None:
                return answered
            if self.tokens.is_mine(cancelled.reasons[0].old_item, registration):
                return registration  # botocore resent a put whose answer was lost
            if cancelled.code(0) != CCF:
                raise
            existing = items.registration_or_none(cancelled.reasons[0].old_item)
            raise AlreadyRegistered(existing=existing) from None
        return registration

    def _refuse(self, event_id, registration, request, full):
        answered = self.requests.recall(request)
        if answered is not None:
            return answered
        mine = self.find(event_id, registration.email)
        raise AlreadyRegistered(existing=mine) if mine else full

    def _seats_taken(self, event_id) -> dict[str, int]:
        """Seats per quota of the stored orders (the event item names the types' quotas)."""
        event = items.event_from_item(self.events.get({"event_id": event_id}))
        taken: dict[str, int] = {}
        for stored in self.registrations(event_id):
            for quota, seats in event.order(stored.tickets).seats.items():
                taken[quota] = taken.get(quota, 0) + seats
        return taken

    def between_read_and_write(self):
        if self.race_delay_ms:
            time.sleep(self.race_delay_ms / 1000)

    def cancel(self, event_id, email, registration_id=None, *, request=None, known=None,
               event=None, release=None):
        if release is not None:
            raise InvalidBooking("The control cancels whole orders only.", field="tickets")
        condition = "registration_id = :rid" if registration_id else None
        values = {":rid": registration_id} if registration_id else None
        try:
            old = self.registrations_table.delete(
                {"event_id": event_id, "email": email}, condition=condition, values=values,
                return_values="ALL_OLD")
        except ConditionFailed:
            old = None
        if old is None:
            self.availability(event_id)  # raises EventNotFound for an unknown event
            raise NotRegistered()
        return items.registration_from_item(old)

    def availability(self, event_id, quotas=None):
        event = self._require_event(event_id)
        if quotas is None:
            return Availability(capacity=event["capacity"], confirmed=self._stored_count(event_id))
        taken, capacities = self._seats_taken(event_id), items.event_from_item(
            self.events.get({"event_id": event_id})).quotas
        return Availability(capacity=event["capacity"], confirmed=taken.get("capacity", 0),
                            further={q: QuotaAvailability(capacity=capacities[q],
                                                          confirmed=taken.get(q, 0))
                                     for q in quotas})

    def change_capacity(self, event_id, *, expected_version, capacity, changes):
        # Control strategy: the count is read, then the version-checked write; not atomic.
        confirmed = self.availability(event_id).confirmed
        if confirmed > capacity:
            raise event_edits.below_confirmed(confirmed)
        update = event_edits.event_update(
            expected_version=expected_version, capacity=capacity, changes=changes)
        try:
            self.events.update({"event_id": event_id}, update.expression, **update.kwargs())
        except ConditionFailed as refused:
            raise event_edits.stale_or_missing(refused.old_item, expected_version) from None

    def delete(self, event_id, quotas=()):
        self.events.delete({"event_id": event_id})  # bookings check the event item first
        self.registrations_table.delete_partition(event_id)

    def audit(self, event):
        # Nothing derived to drift: only what the registrations themselves must satisfy.
        emails = [r.email for r in self.registrations(event.id)]
        return (audit.capacity_violation(event.id, event.capacity, len(emails))
                + audit.person_violations(event.id, emails))
