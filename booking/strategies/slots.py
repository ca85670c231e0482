"""Slots strategy (seed 004, pattern 2-3).

Creating the event creates one item per seat. A booking claims a free slot with a
conditional update (``attribute_exists(free_in)``: still free) and, in the same
TransactWriteItems, puts the registration only if (event, e-mail) does not exist yet. A
seat can be claimed once, so there can never be more confirmed registrations than slots.

Spreading contention: free slots sit in a sparse index (``free_in`` is set only while a
slot is free) sorted by a random ``shuffle`` key. Each booking looks up a few free slots
from a random point of that order and tries them in random order, so concurrent clients
rarely fight over the same slot. The index is eventually consistent on real DynamoDB: a
slot it lists may already be taken, which the claim's condition catches (then the next
candidate is tried).

Costs: creating an event writes ``capacity`` items (batched, 25 per request); a booking is
an index query plus one transaction. Slots are freed, never deleted, by cancellations.
"""
import random

from booking.dynamo import items
from booking.dynamo.store import (CONDITION_FAILED as CCF, Table, TransactionCancelled,
                                   batch_get, transact_write)
from booking.dynamo.tables import EVENTS, REGISTRATIONS, SLOTS
from booking.errors import AlreadyRegistered, EventFull, EventNotFound, NotRegistered
from booking.models import Availability

from . import slots_audit, slots_capacity
from .base import Strategy, client_token, is_mine

SHUFFLE_RANGE = 2**31
CANDIDATES_PER_LOOKUP = 8


class SlotsStrategy(Strategy):
    name = "slots"
    max_capacity = 10_000
    description = "One pre-created item per seat; a booking claims a free slot in a transaction."

    def __init__(self, **kwargs):
        super().__init__(**kwargs)
        self.events = Table(EVENTS)
        self.slots = Table(SLOTS)
        self.registrations_table = Table(REGISTRATIONS)

    def provision(self, event):
        # Slots first: the event becomes visible (bookable) only once all its seats exist.
        self.slots.batch_put([self._free_slot(event.id, n) for n in range(event.capacity)])
        self.events.put(items.event_item(event), condition="attribute_not_exists(event_id)")

    @staticmethod
    def _free_slot(event_id, number):
        return {"event_id": event_id, "slot": number, "free_in": event_id,
                "shuffle": random.randrange(SHUFFLE_RANGE)}

    def book(self, event_id, registration):
        for _ in self.retry.attempts():
            candidates = self._free_candidates(event_id)
            if not candidates:
                refusal = self._no_free_slot(event_id, registration)
                if refusal is None:
                    return registration  # our own earlier claim took the last slot
                raise refusal
            self.between_read_and_write()
            for slot in candidates:
                token = client_token(registration.registration_id, f"slot-{slot}")
                try:
                    transact_write(self._claim(event_id, slot, registration), token=token)
                    return registration
                except TransactionCancelled as cancelled:
                    if is_mine(cancelled.reasons[1].old_item if cancelled.code(1) == CCF
                               else None, registration):
                        return registration  # a resend of our own claim that had applied
                    if cancelled.code(1) == CCF:
                        existing = items.registration_or_none(cancelled.reasons[1].old_item)
                        raise AlreadyRegistered(existing=existing) from None
                    if not (cancelled.code(0) == CCF or cancelled.conflict):
                        raise
                    # Someone else took this slot (or collided with us): try the next one.

    def _no_free_slot(self, event_id, registration):
        event, mine = batch_get([
            (self.events, {"event_id": event_id}),
            (self.registrations_table, {"event_id": event_id, "email": registration.email}),
        ])
        if event is None:
            return EventNotFound()
        if is_mine(mine, registration):
            return None
        if mine is not None:
            return AlreadyRegistered(existing=items.registration_from_item(mine))
        return EventFull()

    def _free_candidates(self, event_id):
        start = random.randrange(SHUFFLE_RANGE)
        found = self._lookup(event_id, "free_in = :e AND shuffle >= :start", {":start": start})
        if not found:
            found = self._lookup(event_id, "free_in = :e", {})
        random.shuffle(found)
        return found

    def _lookup(self, event_id, condition, values):
        return [item["slot"] for item in self.slots.query(
            index="free_slots", key_condition=condition, values={":e": event_id, **values},
            limit=CANDIDATES_PER_LOOKUP)]

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

    def cancel(self, event_id, email, registration_id=None):
        key = {"event_id": event_id, "email": email}
        for _ in self.retry.attempts():
            stored = self.registrations_table.get(key)
            if stored is None or registration_id not in (None, stored["registration_id"]):
                self._require_event(event_id)
                raise NotRegistered()
            try:
                transact_write([
                    ("Delete", self.registrations_table.delete_op(
                        key, condition="registration_id = :rid",
                        values={":rid": stored["registration_id"]})),
                    ("Update", self.slots.update_op(
                        {"event_id": event_id, "slot": stored["slot"]},
                        "SET free_in = :e REMOVE holder", condition="holder = :email",
                        values={":e": event_id, ":email": email})),
                ], token=client_token(stored["registration_id"], "cancel"))
                return items.registration_from_item(stored)
            except TransactionCancelled as cancelled:
                if not (cancelled.conflict or cancelled.code(0) == CCF):
                    raise

    def find(self, event_id, email):
        item = self.registrations_table.get({"event_id": event_id, "email": email})
        if item is None:
            self._require_event(event_id)
        return items.registration_or_none(item)

    def availability(self, event_id):
        event = self._require_event(event_id)
        confirmed = self.registrations_table.count(
            key_condition="event_id = :e", values={":e": event_id})
        return Availability(capacity=event["capacity"], confirmed=confirmed)

    def registrations(self, event_id):
        for item in self.registrations_table.query(
            key_condition="event_id = :e", values={":e": event_id}
        ):
            yield items.registration_from_item(item)

    def change_capacity(self, event_id, *, expected_version, capacity, changes):
        slots_capacity.change_capacity(
            self, event_id, expected_version=expected_version, capacity=capacity,
            changes=changes)

    def delete(self, event_id):
        slots_capacity.delete(self, event_id)

    def audit(self, event):
        return slots_audit.audit_event(self, event)

    def repair(self, event):
        return slots_audit.repair_event(self, event)

    def _require_event(self, event_id):
        event = self.events.get({"event_id": event_id}, projection="event_id, #capacity",
                               names={"#capacity": "capacity"})
        if event is None:
            raise EventNotFound()
        return event
