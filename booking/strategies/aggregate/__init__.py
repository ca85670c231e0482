"""The aggregate strategy (aggregate item with a version): the event's own item holds its
attendees, every quota's count and a version; a booking is one conditional update of it.
How it works, what it costs, its limits: docs/strategies/aggregate.md."""
from collections.abc import Iterator
from dataclasses import dataclass

from typing import Unpack

from booking.dynamo import items
from booking.dynamo.tables import EVENTS
from booking.dynamo.expressions import Members, Refusal
from booking.errors import AlreadyRegistered, EventFull, InvalidBooking
from booking.exactly_once.riders import Riders
from booking.models import Availability, Event, Order, Registration
from booking.strategies import event_edits
from booking.strategies.aggregate.holds import (EVENT, AggregateHolds, EventHoldsMap,
                                                attendee_of, present)
from booking.dynamo.expressions import Projection
from booking.strategies.aggregate.item import (
    ATTENDEES, AVAILABILITY, BUMP, MAX_CAPACITY, NEW_EVENT, ORDER_MAX_CAPACITY, attendee_read,
    audit_event, book_update, cancel_update, first_read, repair_event)
from booking.strategies.base import (READ_AGAIN, Rewrite, Strategy,
                                     cancellation, checked_order, expired_holder, now_ms,
                                     quota_order)
from booking.strategies.holds import counted_availability
from booking.strategies.quota_counts import counts_of
from booking.strategies.base import StrategyOptions, TryAgain, hint_key


@dataclass(frozen=True)
class LapsedHold:
    """The order has no room, but ``holder``'s waiting-list hold of one seat has lapsed:
    the booking may take that seat over (``book_over``)."""
    holder: str  # the e-mail the hold was for


class AggregateStrategy(AggregateHolds, Strategy):
    name = "aggregate"
    max_capacity = MAX_CAPACITY
    description = "One event item holds attendees, count and version; one conditional update per booking."
    audit = audit_event
    repair = repair_event
    change_capacity = event_edits.change_counted_event

    def __init__(self, **kwargs: Unpack[StrategyOptions]) -> None:
        super().__init__(**kwargs)
        self.events = self.store.table(EVENTS)
        self.held = EventHoldsMap(self.events, BUMP, counts_quotas=True)

    def check_order_shape(self, event: Event) -> None:  # ticket types: attendees keep tickets
        if event.offers_orders and event.capacity > ORDER_MAX_CAPACITY:
            # Why (for developers): its orders' tickets share the event item's 400 KB.
            raise InvalidBooking(f"An event set up for a small crowd holds at most "
                                 f"{ORDER_MAX_CAPACITY} seats once it has ticket types or "
                                 f"several seats per order: lower the capacity, or create it "
                                 f"for a larger crowd.", field="capacity")

    def provision(self, event: Event) -> None:
        quotas = {"quota_counts": dict.fromkeys(event.quotas, 0)} if event.quotas else {}
        self.events.put({**items.event_item(event), "attendees": {}, "confirmed_count": 0,
                         **quotas}, condition=NEW_EVENT)

    # --- booking and cancelling: one update of the event item, with the riders ------------
    def book(self, event: Event, registration: Registration, order: Order,
             riders: Riders) -> Registration:
        read = self.read_first(event, registration, order, riders)
        if isinstance(read, Registration):
            return read
        order = read
        members = Members([(EVENT, self.update(event.id, *book_update(registration, order))),
                           *riders.members(registration)])

        def decode(refusal: Refusal) -> Registration | Rewrite | None:
            nonlocal order
            if not refusal.refused(EVENT):
                return None
            found = self.next_try(event.id, registration, order, present(refusal.old(EVENT)))
            if isinstance(found, Registration):
                return found  # botocore resent an update whose answer was lost
            if isinstance(found, LapsedHold):  # full, but a lapsed hold's seat is free
                return Rewrite(members.replaced(EVENT, self.book_over(
                    event.id, registration, found.holder, now_ms())),
                    self.tokens.client_token(registration.registration_id, "book-over"))
            order = found  # the capacities the refusal showed: the next guess
            return Rewrite(members.replaced(EVENT, self.update(
                event.id, *book_update(registration, found))), self.token(registration, found))

        return self.transact(members, written=registration, decode=decode, riders=riders,
                             token=self.token(registration, order))

    def full_by_reading(self, event: Event, registration: Registration, order: Order,
                        riders: Riders) -> Registration | None:
        read = self.read_first(event, registration, order, riders)
        return read if isinstance(read, Registration) else None

    def read_first(self, event: Event, registration: Registration, order: Order,
                   riders: Riders) -> Order | Registration:
        """``order`` as it is, unless this process was lately told "full" for a quota of it
        (``sold_out.py``); then what one consistent BatchGetItem of the event item and the
        request row says (``next_try``), hints cleared unless it raises."""
        hints = [hint_key(event.id, quota) for quota in order.seats]
        if not self.sold_out.any_of(hints):
            return order
        item, *rows = self.store.batch_get(
            [(self.events, {"event_id": event.id}), *riders.reads()],
            projections={self.events.name: first_read(registration.email)})
        answered = riders.answer_read(rows)
        found = answered or self.next_try(event.id, registration, order, present(item))
        if isinstance(found, Registration):
            return found
        for key in hints:
            self.sold_out.clear(key)
        return order if isinstance(found, LapsedHold) else found  # a lapsed hold is a seat

    def next_try(self, event_id: str, registration: Registration, order: Order,
                 item: dict) -> Registration | LapsedHold | Order:
        """What ``item`` says to ``order`` ("Reading a refusal" in the doc): ``registration``,
        a lapsed hold to take over, ``order`` with its capacities; or raises (hint noted)."""
        attendee = attendee_of(item, registration.email)
        if self.tokens.is_mine(attendee, registration):
            return registration
        if attendee is not None:
            raise AlreadyRegistered(existing=items.registration_from_attendee(
                item["event_id"], registration.email, attendee))
        holder = expired_holder(item, now_ms()) if order.is_single_seat else None
        if holder:
            return LapsedHold(holder)
        try:
            return checked_order(order, {q: c for q, c in counts_of(item).items()
                                         if q in order.seats})
        except EventFull as full:
            self.sold_out.note(hint_key(event_id, full.quota))
            raise

    def token(self, registration: Registration, order: Order) -> str | None:
        guesses = ",".join(f"{q}={order.capacities.get(q)}" for q in quota_order(order))
        return self.tokens.client_token(f"{registration.registration_id}:{guesses}", "book")

    def cancel(self, event: Event, email: str, registration_id: str | None, *, riders: Riders,
               known: Registration | None = None,
               release: dict[str, int] | None = None) -> Registration:
        # A link's registration (it carries no tickets) is trusted unread where none are stored.
        unread = [known] if known and (known.ticket_counts or not event.offers_orders) else []

        def read() -> Registration | None:
            stored = (unread.pop() if unread else None) or self.find(event.id, email)
            return stored if stored and registration_id in (None, stored.registration_id) else None

        def remove(stored: Registration) -> Registration | TryAgain:
            keep, freed, answer = cancellation(stored, release, riders.request)
            update = self.update(event.id, *cancel_update(stored, event.order(freed).seats, keep))
            token = f"{stored.registration_id}:{riders.request.request_id}"
            return self.transact_once(  # refused: what was read changed (gone, a part cancelled)
                Members([(EVENT, update), *riders.members(answer)]), written=answer, riders=riders,
                decode=lambda refusal: READ_AGAIN if refusal.refused(EVENT) else None,
                token=self.tokens.client_token(token, "cancel"))

        return self.remove_as_read(read, remove, riders=riders, require_event=lambda: None)

    def find(self, event_id: str, email: str) -> Registration | None:
        value = attendee_of(self.get(event_id, attendee_read(email)), email)
        return items.registration_from_attendee(event_id, email, value) if value else None

    def registrations(self, event_id: str) -> Iterator[Registration]:
        for email, value in sorted(self.get(event_id, ATTENDEES)["attendees"].items()):
            yield items.registration_from_attendee(event_id, email, value)

    def availability(self, event: Event) -> Availability:
        return counted_availability(self.get(event.id, AVAILABILITY), now_ms())

    def availabilities(self, events: list[Event]) -> dict[str, Availability]:
        found = self.events.batch_get([{"event_id": event.id} for event in events],
                                      projection=AVAILABILITY)
        return {item["event_id"]: counted_availability(item, now_ms()) for item in found if item}

    def delete(self, event: Event) -> None:
        self.events.delete({"event_id": event.id})  # the registrations live in this item

    def get(self, event_id: str, projection: Projection) -> dict:
        return present(self.events.get({"event_id": event_id}, projection=projection))
