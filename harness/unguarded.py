"""Unguarded control strategy: read the count, then write, with nothing tying them.

This is write skew on purpose. Two bookings can both read "one seat
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
from booking.dynamo.access import ConditionFailed, TransactionCancelled
from booking.dynamo.expressions import Members
from booking.errors import AlreadyRegistered, EventFull, InvalidBooking, NotRegistered
from booking.models import CAPACITY_QUOTA, Availability

from booking.strategies import event_edits
from booking.strategies.base import OneItemPerPerson, quota_order
from booking.models import QuotaAvailability


class UnguardedStrategy(OneItemPerPerson):
    name = "unguarded"
    max_capacity = 100_000
    guarded = False
    description = "Control: read the count, then write. Overbooks under concurrency."

    def __init__(self, *, race_delay_ms: float = 0.0, **kwargs):
        super().__init__(**kwargs)
        self.race_delay_ms = race_delay_ms  # widens the read-to-write window of the race

    def provision(self, event):
        self.events.put(items.event_item(event), condition="attribute_not_exists(event_id)")

    def book(self, event, registration, order, riders):
        taken = self._seats_taken(event)
        for quota in quota_order(order):  # quota by quota, from what was read
            if taken.get(quota, 0) + order.seats[quota] > order.capacities[quota]:
                return self._refuse(event.id, registration, riders, EventFull(quota=quota))
        self.between_read_and_write()
        members = Members([("registration", ("Put", self.registrations_table.put_op(
            items.registration_item(registration), condition="attribute_not_exists(email)")))])
        members.extend(riders.members(registration))
        try:
            self.store.transact_write(members.operations,
                                      token=self.tokens.client_token(registration.registration_id,
                                                                     "book"))
        except TransactionCancelled as cancelled:
            refusal = members.refusal(cancelled)
            answered = riders.answer(refusal)
            if answered is not None:
                return answered
            if self.tokens.is_mine(refusal.old("registration"), registration):
                return registration  # botocore resent a put whose answer was lost
            if not refusal.refused("registration"):
                raise
            existing = items.registration_or_none(refusal.old("registration"))
            raise AlreadyRegistered(existing=existing) from None
        return registration

    def _refuse(self, event_id, registration, riders, full):
        answered = riders.recall()
        if answered is not None:
            return answered
        mine = self.find(event_id, registration.email)
        raise AlreadyRegistered(existing=mine) if mine else full

    def _seats_taken(self, event) -> dict[str, int]:
        """Seats per quota of the stored orders, read one by one."""
        self._require_event(event.id)
        taken: dict[str, int] = {}
        for stored in self.registrations(event.id):
            for quota, seats in event.order(stored.tickets).seats.items():
                taken[quota] = taken.get(quota, 0) + seats
        return taken

    def between_read_and_write(self):
        if self.race_delay_ms:
            time.sleep(self.race_delay_ms / 1000)

    def cancel(self, event, email, registration_id=None, *, riders, known=None, release=None):
        if release is not None:
            raise InvalidBooking("The control cancels whole orders only.", field="tickets")
        condition = "registration_id = :rid" if registration_id else None
        values = {":rid": registration_id} if registration_id else None
        try:
            old = self.registrations_table.delete(
                {"event_id": event.id, "email": email}, condition=condition, values=values,
                return_values="ALL_OLD")
        except ConditionFailed:
            old = None
        if old is None:
            self._require_event(event.id)  # EventNotFound for an unknown event
            raise NotRegistered()
        return items.registration_from_item(old)

    def availability(self, event):
        taken = self._seats_taken(event)
        return Availability(capacity=event.capacity, confirmed=taken.get(CAPACITY_QUOTA, 0),
                            further={q: QuotaAvailability(capacity=size, confirmed=taken.get(q, 0))
                                     for q, size in event.quotas.items()})

    def change_capacity(self, event, *, expected_version, capacity, changes, quotas=None):
        # Control strategy: the count is read, then the version-checked write; not atomic.
        confirmed = self.availability(event).confirmed
        if confirmed > capacity:
            raise event_edits.below_confirmed(confirmed)
        update = event_edits.event_update(
            expected_version=expected_version, capacity=capacity, changes=changes)
        try:
            self.events.update({"event_id": event.id}, update.expression, **update.kwargs())
        except ConditionFailed as refused:
            raise event_edits.stale_or_missing(refused.old_item, expected_version) from None

    def delete(self, event):
        self.events.delete({"event_id": event.id})  # bookings check the event item first
        self.registrations_table.delete_partition(event.id)

    def audit(self, event):
        # Nothing derived to drift: only what the registrations themselves must satisfy.
        emails = [r.email for r in self.registrations(event.id)]
        return (audit.capacity_violation(event.id, event.capacity, len(emails))
                + audit.person_violations(event.id, emails))
