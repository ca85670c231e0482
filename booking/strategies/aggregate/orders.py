"""Orders in the aggregate strategy's event item (docs/orders.md).

The event item already holds the definition of its further quotas
(``quota_capacities``: name -> seats); it also counts them (``quota_counts``), beside
``confirmed_count`` (the capacity quota, in seats). An order is one conditional update of
that one item, in a transaction with its request and outbox rows: add the attendee (with
its ``tickets``) and every quota's seats, only if the person is new and every quota the
order draws on has room for all of them (``capacity >= :cap AND count <= :cap - n``, the
capacities as last read: a refusal returns the item, which says which quota is full or
corrects the guess). DynamoDB applies writes to one item one at a time: no write skew,
whatever the number of quotas. One request per order; once this process was told "full"
for a quota the order draws on, the order reads the item first (``sold_out.py``), which
answers "full" naming a quota without room for it, or corrects the guess before writing.
"""
from booking.dynamo import items
from booking.errors import AlreadyRegistered, EventFull, EventNotFound
from booking.exactly_once.request_log import Request
from booking.models import Event, Order, Registration
from booking.strategies.aggregate.holds import BUMP, BUMP_VALUES
from booking.strategies.base import (AGAIN, Rewrite, checked_order, order_token, part_of,
                                     refused_at, tickets_left)
from booking.strategies.quota_counts import count_changes, counts_of, room_condition
from booking.strategies.sold_out import hint_key


class AggregateOrders:
    """The order paths of ``AggregateStrategy`` (its table, requests and retries)."""

    def __init__(self, strategy):
        self.strategy = strategy

    def book_op(self, event_id: str, registration: Registration, order: Order):
        clauses, _, values = count_changes(order.seats, "+")
        fits, names, room = room_condition(order)
        return ("Update", self.strategy.events.update_op(
            {"event_id": event_id}, f"SET attendees.#email = :attendee, {', '.join(clauses)}, {BUMP}",
            condition="attribute_exists(event_id) AND attribute_not_exists(attendees.#email) "
                      f"AND {fits}",
            names={"#email": registration.email, **names},
            values={":attendee": items.attendee_value(registration), **values, **room,
                    **BUMP_VALUES}))

    def book(self, event_id: str, registration: Registration, order: Order) -> Registration:
        strategy = self.strategy
        request = Request.booking(registration)
        rows = strategy.requests.ops(request, registration)
        if strategy.sold_out.any_of(self._hints(event_id, order)):  # lately "full" here
            order = self._read_first(event_id, registration, request, order)
            if isinstance(order, Registration):
                return order
        guess = [order]

        def decode(cancelled):
            if not refused_at(cancelled, 0):
                return None
            old = cancelled.reasons[0].old_item
            if old is None:
                raise EventNotFound() from None
            attendee = (old.get("attendees") or {}).get(registration.email)
            if strategy.tokens.is_mine(attendee, registration):
                return registration  # botocore resent an update whose answer was lost
            if attendee is not None:
                existing = items.registration_from_attendee(event_id, registration.email, attendee)
                raise AlreadyRegistered(existing=existing) from None
            guess[0] = self._checked(event_id, guess[0], old)
            return Rewrite([self.book_op(event_id, registration, guess[0]), *rows],
                           order_token(registration, guess[0], "book"))

        return strategy.transact([self.book_op(event_id, registration, order), *rows],
                                 written=registration, decode=decode, request=request,
                                 request_at=1, token=order_token(registration, order, "book"))

    def full_by_reading(self, event_id: str, registration: Registration,
                        order: Order) -> Registration | None:
        """``Strategy.full_by_reading`` for an order: the event item read first."""
        if not self.strategy.sold_out.any_of(self._hints(event_id, order)):
            return None
        found = self._read_first(event_id, registration, Request.booking(registration), order)
        return found if isinstance(found, Registration) else None

    @staticmethod
    def _hints(event_id: str, order: Order) -> list[str]:
        return [hint_key(event_id, quota) for quota in order.seats]

    def _read_first(self, event_id, registration, request, order) -> Order | Registration:
        """This request's registration, or the order checked against one consistent read
        of the event item (its hints cleared); raises ``EventFull`` naming a quota without
        room, or ``AlreadyRegistered``."""
        item = self.strategy.read_event(event_id, registration, request)
        if isinstance(item, Registration):
            return item
        order = self._checked(event_id, order, item)
        for key in self._hints(event_id, order):
            self.strategy.sold_out.clear(key)
        return order

    def _checked(self, event_id, order: Order, item: dict) -> Order:
        """``checked_order`` over the item's counts; a quota found without room is noted."""
        try:
            return checked_order(order, {q: c for q, c in counts_of(item).items()
                                         if q in order.seats})
        except EventFull as full:
            self.strategy.sold_out.note(hint_key(event_id, full.quota))
            raise

    def cancel(self, event_id, email, registration_id, *, request, event: Event, release):
        strategy = self.strategy

        def read():
            stored = strategy.find(event_id, email)
            return stored if stored and registration_id in (None, stored.registration_id) else None

        def remove(stored):
            keep = tickets_left(stored, release) if release is not None else {}
            freed = release if keep else stored.tickets
            answer = part_of(stored, freed, request) if keep else stored
            clauses, names, values = count_changes(event.order(freed).seats, "-")
            change = (f"SET attendees.#email.tickets = :keep, {', '.join(clauses)}, {BUMP}" if keep
                      else f"REMOVE attendees.#email SET {', '.join(clauses)}, {BUMP}")
            if keep:
                values[":keep"] = keep
            update = strategy.events.update_op(
                {"event_id": event_id}, change,
                condition="attendees.#email.registration_id = :rid AND attendees.#email.tickets = :old",
                names={"#email": email, **names},
                values={":rid": stored.registration_id, ":old": stored.tickets, **values,
                        **BUMP_VALUES})
            return strategy.transact_once(
                [("Update", update), *strategy.requests.ops(request, answer)],
                written=answer, decode=lambda c: AGAIN if refused_at(c, 0) else None,
                request=request, request_at=1, token=strategy.tokens.client_token(
                    f"{stored.registration_id}:{request.request_id}", "cancel"))

        return strategy.remove_as_read(read, remove, request=request, require_event=lambda: None)
