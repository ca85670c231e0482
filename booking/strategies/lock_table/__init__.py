"""lock_table: a lock item per quota, written in the booking's one transaction.

A booking puts the person's registration item and updates each quota's lock item
(``locks.py``), only if its seats fit, in one transaction: DynamoDB serializes bookings
that compete for a seat. docs/strategies/lock_table.md
"""
from typing import Literal, Unpack, overload

from booking.dynamo import items
from booking.dynamo.tables import EVENT_LOCKS
from booking.dynamo.expressions import Actions, Condition, attr
from booking.dynamo.expressions import Members, Put, Refusal, Update
from booking.errors import AlreadyRegistered, EventNotFound, NotRegistered
from booking.exactly_once.riders import Riders
from booking.models import Event, Order, Registration
from booking.strategies.base import (READ_AGAIN, Rewrite, cancellation, expired_holder, now_ms,
                                     order_full, quota_order)
from booking.strategies.holds import HoldsMap
from booking.strategies.lock_table.audit import LockTableAudit
from booking.strategies.lock_table.holds import LockTableHolds
from booking.strategies.lock_table.locks import (BUMP, EXISTS, NEW_ITEM, LockItems, lock_key,
                                                 new_locks, quota_member)
from booking.strategies.base import ReadAgain, StrategyOptions, TryAgain, hint_key
from booking.strategies.sold_out import read_first

COUNT, CAPACITY = attr("confirmed_count"), attr("capacity")


def fits(seats: int, capacity: int) -> Condition:
    """The lock item has room for ``seats`` at ``capacity`` as last read (a condition
    cannot add: "count + n <= capacity" is "capacity >= cap AND count <= cap - n"; a
    refusal shows the stored capacity). One seat needs no guess: the stored count and
    capacity compare themselves."""
    if seats == 1:
        return EXISTS & COUNT.lt(CAPACITY)
    return EXISTS & CAPACITY.ge(capacity) & COUNT.le(capacity - seats)


def taking(seats: int) -> Actions:
    return Actions().set(COUNT, COUNT.plus(seats)) + BUMP


def giving(seats: int) -> Actions:
    return Actions().set(COUNT, COUNT.minus(seats)) + BUMP


class LockTableStrategy(LockTableHolds, LockTableAudit, LockItems):
    name = "lock_table"
    max_capacity = 100_000
    description = ("Registrations in their own table; a lock item per quota counts them; "
                   "one transaction per booking.")

    def __init__(self, **kwargs: Unpack[StrategyOptions]) -> None:
        super().__init__(**kwargs)
        self.locks = self.store.table(EVENT_LOCKS)
        self.held = HoldsMap(self.locks, BUMP)

    def provision(self, event: Event) -> None:
        self.store.transact_write([Put(self.events, items.event_item(event), NEW_ITEM),
                                   *[Put(self.locks, lock, NEW_ITEM) for lock in new_locks(event)]])

    # --- booking: the registration and every quota's lock item, in one transaction -------
    def book(self, event: Event, registration: Registration, order: Order,
             riders: Riders) -> Registration:
        if self.sold_out.any_of(hint_key(event.id, q) for q in order.seats):
            found = self.read_first(event, registration, order, riders)  # lately "full"
            if isinstance(found, Registration):
                return found
            order = found
        put = ("registration", self.registration_put(registration))

        def members(order: Order, over: dict) -> Members:
            return Members([put, *((quota_member(quota), self._take(event.id, quota, order, over))
                                   for quota in quota_order(order)),
                            *riders.members(registration)])

        def decode(refusal: Refusal) -> Registration | Rewrite | None:
            nonlocal order
            stored = refusal.old("registration")  # None unless refused
            if self.tokens.is_mine(stored, registration):
                return registration  # a resend of our own transaction that had applied
            refused = refusal.refused_names("quota:")
            locks = {name.removeprefix("quota:"): lock for name in refused
                     if (lock := refusal.old(name)) is not None}
            if len(locks) < len(refused):
                raise EventNotFound()
            if refusal.refused("registration"):
                raise AlreadyRegistered(existing=items.registration_or_none(stored))
            if not locks:
                return None
            order, over = self._settle(event.id, order, locks, now_ms())
            return Rewrite(members(order, over), self._token(registration, order, over))

        return self.transact(members(order, {}), written=registration, decode=decode,
                             riders=riders, token=self._token(registration, order, {}))

    def _token(self, registration: Registration, order: Order, over: dict) -> str | None:
        """The write's ClientRequestToken: one per capacity guess and hold taken over."""
        guesses = ",".join(f"{q}={order.capacities[q]}" for q in quota_order(order))
        taken = "".join(f";{q}>{holder}@{now}" for q, (holder, now) in sorted(over.items()))
        return self.tokens.client_token(f"{registration.registration_id}:{guesses}{taken}",
                                        "book")

    def _take(self, event_id: str, quota: str, order: Order, over: dict) -> Update:
        """The quota's lock item taking the order's seats, or a lapsed hold's (``over``):
        a plain booking stays one write whatever capacity was last read."""
        key = lock_key(event_id, quota)
        if quota in over:  # a lapsed hold's seat becomes the booking's
            holder, now = over[quota]
            lapsed = attr("holds", holder)
            return Update(self.locks, key, Actions().remove(lapsed) + BUMP, lapsed.le(now))
        seats = order.seats[quota]
        return Update(self.locks, key, taking(seats), fits(seats, order.capacities[quota]))

    def _settle(self, event_id: str, order: Order, locks: dict[str, dict],
                now: float) -> tuple[Order, dict]:
        """What the lock items read (or shown by a refusal) allow: the order with their
        capacities, and quota -> (holder, now) of a lapsed hold of one seat to take over
        where the order wants one seat and finds none free. ``EventFull`` naming the first
        quota without either (noted: the next booking reads first)."""
        over = {}
        for quota in (q for q in quota_order(order) if q in locks):
            capacity, taken = int(locks[quota]["capacity"]), int(locks[quota]["confirmed_count"])
            order = order.with_capacity(quota, capacity)
            if taken + order.seats[quota] > capacity:
                holder = expired_holder(locks[quota], now) if order.seats[quota] == 1 else None
                if holder is None:
                    self.sold_out.note(hint_key(event_id, quota))
                    raise order_full(order, quota)
                over[quota] = (holder, now)
        return order, over

    def full_by_reading(self, event: Event, registration: Registration, order: Order,
                        riders: Riders) -> Registration | None:
        if not self.sold_out.any_of(hint_key(event.id, q) for q in order.seats):
            return None
        found = self.read_first(event, registration, order, riders)
        return found if isinstance(found, Registration) else None

    def read_first(self, event: Event, registration: Registration, order: Order,
                   riders: Riders) -> Order | Registration:
        """This request's registration, or the order with the capacities of one consistent
        read of its quotas' lock items (with the registration and the request row); raises
        ``EventFull`` when the write's condition would, ``AlreadyRegistered``. A hook: a
        control answers "full" from its memory instead."""
        event_id = event.id
        quotas = quota_order(order)
        read = read_first(self, [(self.locks, lock_key(event_id, q)) for q in quotas],
                          registration, riders, registrations=self.registrations_table)
        if read.answered is not None:
            return read.answered
        if None in read.counters:
            raise EventNotFound()
        order, _ = self._settle(event_id, order, dict(zip(quotas, read.counters)), now_ms())
        for quota in quotas:
            self.sold_out.clear(hint_key(event_id, quota))
        return order

    # --- cancelling: the registration and its seats back, in one transaction --------------
    def cancel(self, event: Event, email: str, registration_id: str | None, *, riders: Riders,
               known: Registration | None = None,
               release: dict[str, int] | None = None) -> Registration:
        # A link's whole registration (links carry no tickets), trusted unread only where no
        # registration keeps tickets: nothing in it can change but its removal.
        if known is not None and known.ticket_counts is None and not items.order_attributes(event):
            return self._remove(event, known, riders, release, read=False)
        return self.remove_as_read(
            lambda: self._stored(event.id, email, registration_id),
            lambda stored: self._remove(event, items.registration_from_item(stored), riders,
                                        release, read=True),
            riders=riders, require_event=lambda: self._require_event(event.id))

    @overload
    def _remove(self, event: Event, stored: Registration, riders: Riders,
                release: dict[str, int] | None, *, read: Literal[False]) -> Registration: ...

    @overload
    def _remove(self, event: Event, stored: Registration, riders: Riders,
                release: dict[str, int] | None, *,
                read: Literal[True]) -> Registration | TryAgain: ...

    def _remove(self, event: Event, stored: Registration, riders: Riders,
                release: dict[str, int] | None, *,
                read: bool) -> Registration | TryAgain:
        """Free ``release`` of the stored registration (None: all of it), only if it is
        still as read (``READ_AGAIN`` otherwise; without a read, ``NotRegistered``)."""
        keep, freed, answer = cancellation(stored, release, riders.request)
        condition = attr("registration_id").eq(stored.registration_id)
        if stored.ticket_counts is not None:  # an order: its tickets too, as read
            condition &= attr("tickets").eq(stored.tickets)
        members = Members([("registration", self.removal_op(stored, keep, condition))])
        for quota, seats in sorted(event.order(freed).seats.items()):
            members.add(quota_member(quota), Update(self.locks, lock_key(event.id, quota),
                                                    giving(seats), EXISTS))
        members.extend(riders.members(answer))

        def decode(refusal: Refusal) -> ReadAgain | None:
            if refusal.refused_names("quota:"):
                raise EventNotFound()
            if refusal.refused("registration"):
                if read:
                    return READ_AGAIN
                raise NotRegistered()
            return None

        token = f"{stored.registration_id}:{riders.request.request_id}"
        return self.transact(members, written=answer, decode=decode, riders=riders,
                             token=self.tokens.client_token(token, "cancel"))

