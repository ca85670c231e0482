"""Orders on the lock table (docs/orders.md): one lock item per quota.

The event's capacity quota is the lock item every event has (key: the event id); each
further quota has its own lock item in the same table (key: ``<event id>#<quota>``), with
the same ``capacity``, ``confirmed_count`` and ``version``. An order is one
TransactWriteItems: put the registration (with its ``tickets``), add the order's seats to
the lock item of every quota it draws on, each only if they fit, and the request and
outbox rows. DynamoDB serializes transactions on a shared item, so two orders that each
saw room in a shared quota cannot both commit: that is pretix's "lock every quota the
order touches", done by the store, with no read first.

A condition cannot add (``count + n <= capacity``), so each member states
``capacity >= :cap AND confirmed_count <= :cap - n`` with the quota's capacity as last
read; a refusal carries the stored item, which either shows the quota full
(``EventFull(quota=...)``) or corrects the guess for one more attempt. One request per
order and per rejection when the guess is current. Once this process was told "full" for
a quota the order draws on, the order reads first (``sold_out.py``): one consistent
BatchGetItem of every touched quota's lock item, the registration and the request row
answers "full" naming a quota without room for the order, else corrects the guess and
writes.

A cancellation (whole, or some of the order's tickets) frees exactly the seats the stored
order holds: the registration's write is conditional on its ``tickets`` being what was
read, so a concurrent partial cancellation makes it read again.
"""
from booking.dynamo import items
from booking.errors import AlreadyRegistered, EventFull, EventNotFound
from booking.exactly_once.request_log import Request
from booking.models import CAPACITY_QUOTA, Event, Order, Registration
from booking.strategies.base import (CAPACITY_NAMES, READ_AGAIN, Rewrite, checked_order,
                                     old_item, order_token, part_of, quota_order, refused_at,
                                     tickets_left)
from booking.strategies.sold_out import hint_key, read_first

TAKE = "SET confirmed_count = confirmed_count + :n, version = version + :one"
GIVE = "SET confirmed_count = confirmed_count - :n, version = version + :one"
FITS = "attribute_exists(event_id) AND #capacity >= :cap AND confirmed_count <= :room"


def lock_key(event_id: str, quota: str) -> dict:
    return {"event_id": event_id if quota == CAPACITY_QUOTA else f"{event_id}#{quota}"}


def quota_locks(event: Event) -> list[dict]:
    """The further quotas' lock items a new event needs."""
    return [{**lock_key(event.id, quota), "capacity": seats, "confirmed_count": 0, "version": 1}
            for quota, seats in sorted(event.quotas.items())]


class LockTableOrders:
    """The order paths of ``LockTableStrategy`` (its tables, requests and retries)."""

    def __init__(self, strategy):
        self.strategy = strategy

    def take_ops(self, event_id: str, order: Order) -> list:
        return [("Update", self.strategy.locks.update_op(
            lock_key(event_id, quota), TAKE, condition=FITS, names=CAPACITY_NAMES,
            values={":n": order.seats[quota], ":one": 1, ":cap": order.capacities[quota],
                    ":room": order.capacities[quota] - order.seats[quota]}))
            for quota in quota_order(order)]

    def give_ops(self, event_id: str, seats: dict[str, int]) -> list:
        return [("Update", self.strategy.locks.update_op(
            lock_key(event_id, quota), GIVE, condition="attribute_exists(event_id)",
            values={":n": seats[quota], ":one": 1})) for quota in sorted(seats)]

    def book(self, event_id: str, registration: Registration, order: Order) -> Registration:
        strategy = self.strategy
        request = Request.booking(registration)
        quotas = quota_order(order)
        put = ("Put", strategy.registrations_table.put_op(
            items.registration_item(registration), condition="attribute_not_exists(email)"))
        hints = [hint_key(event_id, quota) for quota in quotas]
        if strategy.sold_out.any_of(hints):  # lately refused "full" here: read first
            order = self._read_first(event_id, registration, request, order)
            if isinstance(order, Registration):
                return order
        guess = [order]

        def operations(current):
            return [put, *self.take_ops(event_id, current), *strategy.requests.ops(request, registration)]

        def decode(cancelled):
            registered = old_item(cancelled, 0)
            if refused_at(cancelled, 0) and strategy.tokens.is_mine(registered, registration):
                return registration  # a resend of our own transaction that had applied
            locks = {q: old_item(cancelled, 1 + i) for i, q in enumerate(quotas)
                     if refused_at(cancelled, 1 + i)}
            if any(lock is None for lock in locks.values()):
                raise EventNotFound() from None
            if refused_at(cancelled, 0):
                raise AlreadyRegistered(existing=items.registration_or_none(registered)) from None
            if not locks:
                return None
            guess[0] = self._checked(event_id, guess[0], locks)
            return Rewrite(operations(guess[0]), order_token(registration, guess[0], "book"))

        return strategy.transact(operations(order), written=registration, decode=decode,
                                 request=request, request_at=1 + len(quotas),
                                 token=order_token(registration, order, "book"))

    def full_by_reading(self, event_id: str, registration: Registration,
                        order: Order) -> Registration | None:
        """``Strategy.full_by_reading`` for an order: its quotas' lock items read first."""
        if not self.strategy.sold_out.any_of([hint_key(event_id, q) for q in quota_order(order)]):
            return None
        found = self._read_first(event_id, registration, Request.booking(registration), order)
        return found if isinstance(found, Registration) else None

    def _read_first(self, event_id, registration, request, order) -> Order | Registration:
        """This request's registration, or the order with the capacities of one consistent
        read of its quotas' lock items (with the registration and the request row); raises
        ``EventFull`` naming a quota without room for it, or ``AlreadyRegistered``."""
        quotas = quota_order(order)
        read = read_first(self.strategy, [(self.strategy.locks, lock_key(event_id, quota))
                                          for quota in quotas],
                          registration, request, registrations=self.strategy.registrations_table)
        if read.answered is not None:
            return read.answered
        if None in read.counters:
            raise EventNotFound()
        checked = self._checked(event_id, order, dict(zip(quotas, read.counters)))
        for quota in quotas:
            self.strategy.sold_out.clear(hint_key(event_id, quota))
        return checked

    def _checked(self, event_id, order: Order, locks: dict[str, dict]) -> Order:
        """``checked_order`` over these lock items; a quota found without room is noted."""
        try:
            return checked_order(order, {q: (int(lock["capacity"]), int(lock["confirmed_count"]))
                                         for q, lock in locks.items()})
        except EventFull as full:
            self.strategy.sold_out.note(hint_key(event_id, full.quota))
            raise

    def cancel(self, event_id, email, registration_id, *, request, event: Event, release):
        strategy = self.strategy
        return strategy.remove_as_read(
            lambda: strategy._stored(event_id, email, registration_id),
            lambda stored: self._remove(event_id, items.registration_from_item(stored), request,
                                        event, release),
            request=request, require_event=lambda: strategy._require_event(event_id))

    def _remove(self, event_id, stored: Registration, request, event: Event, release):
        """Free ``release`` of the stored order (None: all of it) in one transaction."""
        keep = tickets_left(stored, release) if release is not None else {}
        freed = release if keep else stored.tickets
        answer = part_of(stored, freed, request) if keep else stored
        table = self.strategy.registrations_table
        key = {"event_id": event_id, "email": stored.email}
        same = {"condition": "registration_id = :rid AND tickets = :old",
                "values": {":rid": stored.registration_id, ":old": stored.tickets}}
        if keep:
            first = ("Update", table.update_op(key, "SET tickets = :keep", condition=same["condition"],
                                               values={**same["values"], ":keep": keep}))
        else:
            first = ("Delete", table.delete_op(key, **same))
        seats = event.order(freed).seats
        operations = [first, *self.give_ops(event_id, seats), *self.strategy.requests.ops(request, answer)]

        def decode(cancelled):
            if any(refused_at(cancelled, 1 + i) for i in range(len(seats))):
                raise EventNotFound() from None
            return READ_AGAIN if refused_at(cancelled, 0) else None

        return self.strategy.transact(
            operations, written=answer, decode=decode, request=request, request_at=1 + len(seats),
            token=self.strategy.tokens.client_token(
                f"{stored.registration_id}:{request.request_id}", "cancel"))
