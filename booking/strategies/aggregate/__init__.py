"""The aggregate strategy (aggregate item with a version): the event's own item holds its
attendees, every quota's count and a version, and a booking is one conditional update of
it. How it works, what it costs and its limits: docs/strategies/aggregate.md.
"""
from booking.dynamo import items
from booking.dynamo.tables import EVENTS
from booking.dynamo.transaction import Members, Refusal
from booking.errors import (AlreadyRegistered, EventFull, EventNotFound, InvalidBooking,
                            NotRegistered)
from booking.exactly_once.riders import Riders
from booking.models import Availability, Event, Order, Registration
from booking.strategies import event_edits
from booking.strategies.aggregate import audit as aggregate_audit
from booking.strategies.aggregate.holds import (BUMP, BUMP_VALUES, EVENT, AggregateHolds,
                                                attendee_of)
from booking.strategies.aggregate.writes import (ATTENDEE, ATTENDEES, AVAILABILITY, FIRST_READ,
                                                 book_update, cancel_update, item_availability)
from booking.strategies.base import (CAPACITY_NAMES, READ_AGAIN, Rewrite, Strategy,
                                     checked_order, expired_holder, now_ms, part_of,
                                     quota_order, tickets_left)
from booking.strategies.holds import HoldsMap
from booking.strategies.quota_counts import counts_of
from booking.strategies.sold_out import hint_key

ITEM_SIZE_LIMIT = 400 * 1024
# Room for the event's own attributes: name (twice: as typed and case-folded), dates,
# zone, venue, a 2,000-character description (8 KB in the worst case), counters, names.
EVENT_ATTRIBUTES_RESERVE = 12 * 1024
# Worst case for one attendee: a 254-byte e-mail key, a 100-character name (up to 400
# bytes in UTF-8), the timestamp, the registration and request ids, and attribute names.
ATTENDEE_MAX_BYTES = 900
# An event with ticket types also defines them (20 names of 40 bytes, each naming up to 10
# quotas) and counts its quotas (10 names, twice), and every attendee holds a ``tickets``
# map: at most one entry a seat (a 40-byte type name, its number, the map's overhead).
ORDER_DEFINITION_RESERVE = 11 * 1024
TICKET_ENTRY_MAX_BYTES = 60
ORDER_MAX_CAPACITY = ((ITEM_SIZE_LIMIT - EVENT_ATTRIBUTES_RESERVE - ORDER_DEFINITION_RESERVE)
                      // (ATTENDEE_MAX_BYTES + TICKET_ENTRY_MAX_BYTES))
NEW_EVENT = "attribute_not_exists(event_id)"


def hints(event_id: str, order: Order) -> list[str]:
    """The sold-out hints a booking of ``order`` reads first for (``sold_out.py``)."""
    return [hint_key(event_id, quota) for quota in order.seats]


class AggregateStrategy(AggregateHolds, Strategy):
    name = "aggregate"
    max_capacity = (ITEM_SIZE_LIMIT - EVENT_ATTRIBUTES_RESERVE) // ATTENDEE_MAX_BYTES
    description = "One event item holds attendees, count and version; one conditional update per booking."

    def __init__(self, **kwargs):
        super().__init__(**kwargs)
        self.events = self.store.table(EVENTS)
        self.held = HoldsMap(self.events, BUMP, BUMP_VALUES, counts_quotas=True)

    def check_order_shape(self, event: Event) -> None:
        # An event with ticket types stores them, and its attendees their tickets.
        if items.order_attributes(event) and event.capacity > ORDER_MAX_CAPACITY:
            raise InvalidBooking(
                f"With aggregate, an event with ticket types or orders of several seats holds "
                f"at most {ORDER_MAX_CAPACITY} seats (its orders' tickets share the event "
                f"item's 400 KB): lower the capacity, or choose 'lock_table'.", field="capacity")

    def provision(self, event: Event) -> None:
        item = {**items.event_item(event), "attendees": {}, "confirmed_count": 0}
        if event.quotas:
            item["quota_counts"] = {quota: 0 for quota in event.quotas}
        self.events.put(item, condition=NEW_EVENT)

    # --- booking: one update of the event item, with the riders -------------------------
    def book(self, event: Event, registration: Registration, order: Order,
             riders: Riders) -> Registration:
        if self.sold_out.any_of(hints(event.id, order)):  # lately "full" here: read first
            read = self.read_first(event, registration, order, riders)
            if isinstance(read, Registration):
                return read
            order = read
        members = Members([(EVENT, book_update(self.events, event.id, registration, order)),
                           *riders.members(registration)])
        guess = [order]

        def decode(refusal: Refusal):
            if not refusal.refused(EVENT):
                return None
            old = refusal.old(EVENT)
            mine = self.registered(old, registration)
            if mine is not None:
                return mine  # botocore resent an update whose answer was lost
            holder = expired_holder(old, now_ms()) if guess[0].is_single_seat else None
            if holder is not None:  # full, but a waiting-list hold has lapsed: take its seat
                over = self.book_over_op(event.id, registration, holder, now_ms())
                return Rewrite(members.replaced(EVENT, over),
                               self.tokens.client_token(registration.registration_id, "book-over"))
            guess[0] = self.checked(event.id, guess[0], old)  # EventFull, or a stale guess
            return Rewrite(members.replaced(EVENT, book_update(
                self.events, event.id, registration, guess[0])), self.token(registration, guess[0]))

        return self.transact(members, written=registration, decode=decode, riders=riders,
                             token=self.token(registration, order))

    def full_by_reading(self, event: Event, registration: Registration, order: Order,
                        riders: Riders) -> Registration | None:
        if not self.sold_out.any_of(hints(event.id, order)):
            return None
        read = self.read_first(event, registration, order, riders)
        return read if isinstance(read, Registration) else None

    def read_first(self, event: Event, registration: Registration, order: Order,
                   riders: Riders) -> Order | Registration:
        """One consistent BatchGetItem of the event item and the request row: this request's
        registration, or ``order`` checked against the counts (its hints cleared). Raises
        ``EventFull`` (no room, and no lapsed hold a one-seat order could take over),
        ``AlreadyRegistered``, ``EventNotFound``."""
        item, *rows = self.store.batch_get(
            [(self.events, {"event_id": event.id}), *riders.reads()],
            projections={self.events.name: (FIRST_READ, {**CAPACITY_NAMES,
                                                         "#email": registration.email})})
        answered = riders.log.answer(riders.request, rows[0]) if rows else None
        mine = answered or self.registered(item, registration)
        if mine is not None:
            return mine
        if not (order.is_single_seat and expired_holder(item, now_ms())):
            order = self.checked(event.id, order, item)
        for key in hints(event.id, order):
            self.sold_out.clear(key)
        return order

    def registered(self, item: dict | None, registration: Registration) -> Registration | None:
        """``registration`` when ``item`` already holds it (our own write), else None;
        raises ``EventNotFound`` (no item) or ``AlreadyRegistered`` (another of the person's)."""
        if item is None:
            raise EventNotFound()
        attendee = attendee_of(item, registration.email)
        if self.tokens.is_mine(attendee, registration):
            return registration
        if attendee is not None:
            raise AlreadyRegistered(existing=items.registration_from_attendee(
                item["event_id"], registration.email, attendee))
        return None

    def checked(self, event_id: str, order: Order, item: dict) -> Order:
        """``checked_order`` over the item's counts; a quota found without room is noted."""
        try:
            return checked_order(order, {q: c for q, c in counts_of(item).items()
                                         if q in order.seats})
        except EventFull as full:
            self.sold_out.note(hint_key(event_id, full.quota))
            raise

    def token(self, registration: Registration, order: Order) -> str | None:
        """The booking's ClientRequestToken with these capacity guesses."""
        guesses = ",".join(f"{q}={order.capacities.get(q)}" for q in quota_order(order))
        return self.tokens.client_token(f"{registration.registration_id}:{guesses}", "book")

    # --- cancelling: the stored order says which seats go back -------------------------
    def cancel(self, event: Event, email: str, registration_id: str | None, *, riders: Riders,
               known: Registration | None = None,
               release: dict[str, int] | None = None) -> Registration:
        unread = [known]  # a link's whole registration: the first write trusts it unread

        def read():
            stored = (unread.pop() if unread else None) or self.find(event.id, email)
            return stored if stored and registration_id in (None, stored.registration_id) else None

        def decode(refusal: Refusal):
            if not refusal.refused(EVENT):
                return None
            old = refusal.old(EVENT)
            if old is None:
                raise EventNotFound()
            attendee = attendee_of(old, email)
            if attendee is None or registration_id not in (None, attendee["registration_id"]):
                raise NotRegistered()
            return READ_AGAIN  # its tickets changed (a part cancelled) since the read

        def remove(stored: Registration):
            keep = tickets_left(stored, release) if release is not None else {}
            freed = release if keep and release else stored.tickets
            answer = part_of(stored, freed, riders.request) if keep else stored
            update = cancel_update(self.events, event.id, stored, event.order(freed).seats, keep)
            return self.transact_once(
                Members([(EVENT, update), *riders.members(answer)]), written=answer,
                decode=decode, riders=riders, token=self.tokens.client_token(
                    f"{stored.registration_id}:{riders.request.request_id}", "cancel"))

        return self.remove_as_read(read, remove, riders=riders, require_event=lambda: None)

    # --- reading, editing, deleting ------------------------------------------------------
    def find(self, event_id: str, email: str) -> Registration | None:
        item = self.get(event_id, ATTENDEE, {"#email": email})
        value = attendee_of(item, email)
        return items.registration_from_attendee(event_id, email, value) if value else None

    def registrations(self, event_id: str):
        attendees = self.get(event_id, ATTENDEES)["attendees"]
        for email, value in sorted(attendees.items()):
            yield items.registration_from_attendee(event_id, email, value)

    def availability(self, event: Event) -> Availability:
        return item_availability(self.get(event.id, AVAILABILITY, CAPACITY_NAMES), now_ms())

    def availabilities(self, events: list[Event]) -> dict[str, Availability]:
        found = self.events.batch_get([{"event_id": event.id} for event in events],
                                      projection=AVAILABILITY, names=CAPACITY_NAMES)
        now = now_ms()
        return {item["event_id"]: item_availability(item, now) for item in found if item}

    def change_capacity(self, event: Event, *, expected_version: int, capacity: int,
                        changes: dict, quotas: dict[str, int] | None = None) -> None:
        # One conditional update: the version check and "no fewer seats than taken".
        event_edits.change_counted_event(self.events, event.id, expected_version=expected_version,
                                         capacity=capacity, changes=changes, quotas=quotas)

    def delete(self, event: Event) -> None:
        self.events.delete({"event_id": event.id})  # the registrations live in this item

    def audit(self, event: Event) -> list:
        return aggregate_audit.audit_event(self, event)

    def repair(self, event: Event) -> list[str]:
        return aggregate_audit.repair_event(self, event)

    def get(self, event_id: str, projection: str, names: dict | None = None) -> dict:
        item = self.events.get({"event_id": event_id}, projection=projection, names=names)
        if item is None:
            raise EventNotFound()
        return item
