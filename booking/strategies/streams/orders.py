"""Orders on streams (docs/orders.md): the decider decides whole orders in arrival order.

An order is accepted as one pending registration with its ``tickets``, exactly like a
single seat. The decider reaches it in the stream's order and decides all of it against
every quota it draws on, counted in the event item (``quota_counts`` beside
``confirmed_count``, ``booking/strategies/quota_counts.py``): it reads the event item
(the types and the quotas' capacities and counts), then writes one transaction,
conditional on the registration still being pending:

- it fits: ``confirmed``, every quota's count plus the order's seats, each only if still
  room at the capacities read, and the confirmation's e-mail;
- it does not: ``rejected``, only if those capacities still hold and some quota still has
  no room for it (a ConditionCheck), and the rejection's e-mail.

A refusal of the event's member (a cancellation or an edit meanwhile) reads again. So an
order is confirmed whole or rejected whole, and a later smaller order that fits is still
confirmed after a larger one that did not: each is decided, in arrival order, against
the seats left at its turn. Two requests per decision (the read and the write).

Cancelling part of an order is for a confirmed one; a pending order can be withdrawn
whole (its decision would otherwise be made for tickets it no longer holds).
"""
from dataclasses import replace
from decimal import Decimal

from booking.errors import EventNotFound, InvalidBooking
from booking.models import (CAPACITY_QUOTA, CONFIRMATION, CONFIRMED, PENDING, REJECTED,
                            REJECTION, Event, Order, Registration)
from booking.strategies.base import (CAPACITY_NAMES, READ_AGAIN, part_of, refused_at,
                                     tickets_left)
from booking.strategies.quota_counts import count_changes, counts_of, room_condition

STATUS_NAMES = {"#status": "status"}
# What ``decide`` reports besides CONFIRMED and REJECTED (``StreamsStrategy.decide``).
NOT_PENDING, EVENT_GONE = "not_pending", "event_gone"
EVENT_ORDER_FIELDS = "event_id, #capacity, confirmed_count, quota_capacities, quota_counts, ticket_types"


def order_of(event_item: dict, tickets: dict[str, int]) -> Order:
    """What ``tickets`` take from each quota, at the capacities the event item holds."""
    seats: dict[str, int] = {}
    types = event_item.get("ticket_types") or {}
    for ticket_type, quantity in tickets.items():
        for quota in (CAPACITY_QUOTA, *types.get(ticket_type, ())):
            seats[quota] = seats.get(quota, 0) + quantity
    found = counts_of(event_item)
    return Order(seats=seats, capacities={q: found[q][0] for q in seats})


def fits(event_item: dict, order: Order) -> bool:
    found = counts_of(event_item)
    return all(found[q][1] + n <= found[q][0] for q, n in order.seats.items())


class StreamsOrders:
    """The order paths of ``StreamsStrategy`` (its tables, requests and retries)."""

    def __init__(self, strategy):
        self.strategy = strategy

    def decide(self, registration: Registration, now: float) -> str:
        strategy = self.strategy
        key = {"event_id": registration.event_id, "email": registration.email}
        for _ in strategy.retry.attempts():
            event_item = strategy.events.get({"event_id": registration.event_id},
                                             projection=EVENT_ORDER_FIELDS, names=CAPACITY_NAMES)
            if event_item is None:
                strategy._forget_orphan(key, registration)
                return EVENT_GONE
            order = order_of(event_item, registration.tickets)
            status = CONFIRMED if fits(event_item, order) else REJECTED

            def decode(cancelled):
                if refused_at(cancelled, 0):
                    return NOT_PENDING  # decided before, or withdrawn
                return READ_AGAIN if refused_at(cancelled, 1) else None

            outcome = strategy.transact_once(self._decision(key, registration, order, status, now),
                                             written=status, decode=decode)
            if outcome in (CONFIRMED, REJECTED, NOT_PENDING):
                return outcome

    def _decision(self, key, registration, order: Order, status: str, now: float) -> list:
        strategy = self.strategy
        decided = [("Update", strategy.registrations_table.update_op(
            key, "SET #status = :status, decided_at = :now", condition=strategy.decidable,
            names=STATUS_NAMES,
            values={":status": status, ":now": Decimal(f"{now:.3f}"), ":pending": PENDING,
                    ":rid": registration.registration_id}))]
        event_key = {"event_id": registration.event_id}
        condition, names, values = room_condition(order, lacking=status == REJECTED)
        if status == CONFIRMED:
            clauses, _, counts = count_changes(order.seats, "+")
            decided.append(("Update", strategy.events.update_op(
                event_key, f"SET {', '.join(clauses)} ADD count_changes :one",
                condition=f"attribute_exists(event_id) AND {condition}", names=names,
                values={**values, **counts, ":one": 1})))
        else:
            decided.append(("ConditionCheck", strategy.events.delete_op(
                event_key, condition=f"attribute_exists(event_id) AND {condition}",
                names=names, values=values)))
        kind = CONFIRMATION if status == CONFIRMED else REJECTION
        return decided + strategy.requests.outbox.ops(kind, replace(registration, status=status),
                                                      at=int(now))

    def remove(self, key, stored: Registration, request, event: Event, release):
        """Withdraw or cancel ``stored`` (or ``release`` of a confirmed order) as read."""
        if release is not None and stored.status != CONFIRMED:
            raise InvalidBooking("Your order is still being decided: cancel all of it, or "
                                 "part of it once it is confirmed.", field="tickets")
        keep = tickets_left(stored, release) if release is not None else {}
        answer = part_of(stored, release, request) if keep else stored
        same = {":rid": stored.registration_id, ":status": stored.status, ":old": stored.tickets}
        condition = "registration_id = :rid AND #status = :status AND tickets = :old"
        table = self.strategy.registrations_table
        if keep:
            operations = [("Update", table.update_op(key, "SET tickets = :keep", condition=condition,
                                                     names=STATUS_NAMES, values={**same, ":keep": keep}))]
        else:
            operations = [("Delete", table.delete_op(key, condition=condition, names=STATUS_NAMES,
                                                     values=same))]
        if stored.status == CONFIRMED:
            clauses, names, counts = count_changes(event.order(answer.tickets).seats, "-")
            operations.append(("Update", self.strategy.events.update_op(
                {"event_id": key["event_id"]}, f"SET {', '.join(clauses)} ADD count_changes :one",
                condition="attribute_exists(event_id)", names=names or None,
                values={**counts, ":one": 1})))

        def decode(cancelled):
            if len(operations) > 1 and refused_at(cancelled, 1):
                raise EventNotFound() from None
            return READ_AGAIN if refused_at(cancelled, 0) else None

        return self.strategy.transact(operations + self.strategy.requests.ops(request, answer),
                                      written=answer, decode=decode, request=request,
                                      request_at=len(operations))
