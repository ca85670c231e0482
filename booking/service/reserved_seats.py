"""Seats reserved for an access code's holders (``reserved_seats``): the waiting list's
holds (``Holds``), one seat each, keyed ``code#<CODE>#<n>``, until the code's
``valid_until`` (or until used or revoked). The code's orders take them first
(``reserved_write``: ``Holds.accept_ops(..., holder=key)`` with the code's use, in one
transaction); lapsed ones return to sale (``release_lapsed``, the worker's pass).
docs/access-codes.md#reserved-seats.
"""
import dataclasses
from collections.abc import Callable
from contextlib import suppress

from booking.dynamo.access import ConditionFailed, Store, Table
from booking.dynamo.errors import TransactionCancelled
from booking.dynamo.expressions import Actions, Members, attr
from booking.errors import (AlreadyRegistered, BookingContention, BookingError, EventFull,
                            EventNotFound, InvalidBooking)
from booking.exactly_once.access_codes import (MEMBER, ReservedSeatGone, ReservedSeatUse,
                                               code_key, now_ms, reserved_key)
from booking.exactly_once.request_log import Request, RequestLog
from booking.exactly_once.riders import Riders
from booking.models import CAPACITY_QUOTA, AccessCode, Event, Order, Registration
from booking.service.catalog import EventCatalog
from booking.strategies.base import Strategy
from booking.strategies.contract import Holds

# A reservation without ``valid_until`` lasts until used or revoked: its holds' end.
NO_END_MS = 100 * 365 * 86400 * 1000


class ReservedSeats:
    """The reserved-seat half of ``AccessCodes`` (its table, store, catalog, requests)."""

    table: Table
    store: Store
    catalog: EventCatalog
    requests: RequestLog

    def _holds(self, event: Event) -> Holds:
        """The event's strategy as the ``Holds`` reserved seats are (``InvalidBooking``
        for a strategy that holds no seats)."""
        strategy = self.catalog.strategy_for(event.id)
        if not isinstance(strategy, Holds):
            raise InvalidBooking("This event's strategy cannot reserve seats.",
                                 field="reserved_seats")
        return strategy

    # --- reserved seats: holds of one seat each, keyed ``code#<code>#<n>`` ----------------
    @staticmethod
    def _reserved_order(event: Event, types: tuple) -> Order:
        """The order one reserved seat is: one seat of the code's type (of the event's only
        type), which must count against the capacity alone."""
        choices = types or tuple(event.ticket_types)
        if len(choices) != 1 or event.order({choices[0]: 1}).seats != {CAPACITY_QUOTA: 1}:
            raise InvalidBooking("Seats can be reserved for a code of one ticket type that "
                                 "counts against the capacity alone.", field="reserved_seats")
        return event.order({choices[0]: 1})

    def _reserve(self, event: Event, made: list[AccessCode], seat: Order,
                 count: int) -> list[AccessCode]:
        """Hold ``count`` seats for each code (the waiting list's holds, each one write with
        the code's item), until the code's ``valid_until``; all or none (``EventFull``:
        what was held is released and the codes removed)."""
        strategy, now = self._holds(event), now_ms()
        done: list[tuple[str, str, dict]] = []
        try:
            for code in made:
                until = int(code.valid_until.timestamp() * 1000) if code.valid_until \
                    else now + NO_END_MS
                for number in range(1, count + 1):
                    key = reserved_key(code.code, number)
                    ref = self._hold(strategy, event, code.code, key, seat, until)
                    done.append((code.code, key, ref))
        except BookingError as error:
            self._undo(event, made, done)
            if isinstance(error, EventFull):
                raise InvalidBooking(f"There are not {count} free seats to reserve for each "
                                     "code. Nothing was created.",
                                     field="reserved_seats") from None
            raise
        return [dataclasses.replace(code, reserved_seats=count) for code in made]

    def _hold(self, strategy: Holds, event: Event, code: str, key: str, seat: Order,
              until: int) -> dict:
        """One reserved seat held, and recorded on the code's item, in one write."""
        refused = None
        for _ in range(8):
            members, ref = strategy.hold_ops(event, key, seat, until=until, now=now_ms(),
                                             refused=refused)
            write = Members(members).add(MEMBER, ("Update", self.table.update_op(
                code_key(event.id, code),
                Actions().set(attr("reserved", key), ref).set("reserved_until", until)
                .add("reserved_left", 1).add("reserved_seats", 1),
                condition=attr("max_uses").exists())))
            try:
                self.store.transact_write(write.operations)
                return ref
            except TransactionCancelled as cancelled:
                refused = write.refusal(cancelled)
        raise BookingContention()

    def _undo(self, event: Event, made: list[AccessCode], done: list) -> None:
        for code in made:
            held = {key: ref for name, key, ref in done if name == code.code}
            item = self.table.get(code_key(event.id, code.code)) or {}
            self._release(event, code.code, held, int(item.get("reserved_until", 0)))
            self.table.delete(code_key(event.id, code.code))

    def _release(self, event: Event, code: str, reserved: dict, until: int) -> None:
        """Free each seat still reserved for ``code`` (with its record on the code's item)."""
        strategy = self._holds(event)
        seat = Order(seats={CAPACITY_QUOTA: 1}, capacities={CAPACITY_QUOTA: event.capacity})
        for key, ref in reserved.items():
            members = Members(strategy.release_ops(event, key, seat, until=until, ref=ref))
            members.add(MEMBER, ("Update", self.table.update_op(
                code_key(event.id, code), _forget(key),
                condition=attr("reserved", key).exists())))
            try:
                self.store.transact_write(members.operations)
            except TransactionCancelled:  # taken by an order, or lapsed and taken over
                with suppress(ConditionFailed):  # its record goes all the same
                    self.table.update(code_key(event.id, code), _forget(key),
                                      condition=attr("reserved", key).exists())

    def release_lapsed(self, *, now: int | None = None) -> int:
        """The worker's pass: free the seats still reserved for codes whose reservation
        lapsed (``valid_until``), so they return to sale on every strategy (the synchronous
        ones also take a lapsed seat over when a booking finds no other); how many codes."""
        now = now_ms() if now is None else now
        released, start = 0, None
        while True:
            found, start = self.table.filtered_scan_page(
                filter=attr("reserved_left").gt(0) & attr("reserved_until").le(now),
                start_key=start)
            for item in found:
                try:
                    event = self.catalog.get_event(item["event_id"])
                except EventNotFound:
                    continue
                self._release(event, item["code"], dict(item.get("reserved") or {}),
                              int(item["reserved_until"]))
                released += 1
            if start is None:
                return released

    def reserved_write(self, strategy: Strategy, event: Event, registration: Registration,
                       order: Order, request: Request, use: ReservedSeatUse, ref: dict,
                       others: tuple = ()) -> Callable[[], Registration]:
        """The write of an order taking the code's reserved seat ``use.key``: the hold
        turned into the order, the request row, the outbox row, the use and the order's
        other riders (``others``: its answers), in one transaction. Raises the code's errors, ``ReservedSeatsLeft`` / ``ReservedSeatGone``
        (that seat was taken: try another) or ``AlreadyRegistered``."""
        riders = Riders(self.requests, request, others=(use, *others))

        def write() -> Registration:
            members = Members(self._holds(event).accept_ops(
                event, registration, order, now=now_ms(), ref=ref, holder=use.key))
            members.extend(riders.members(registration))
            try:
                self.store.transact_write(members.operations)
                return registration
            except TransactionCancelled as cancelled:
                refusal = members.refusal(cancelled)
                answered = riders.answer(refusal)  # a repeat, or the code's own refusal
                if answered is not None:
                    return answered
                if refusal.conflict:
                    raise BookingContention() from cancelled
                existing = strategy.find(event.id, registration.email)
                if existing is not None and existing.is_confirmed:
                    raise AlreadyRegistered(existing=existing) from None
                raise ReservedSeatGone() from None
        return write


    def reserved(self, event_id: str, code: str) -> dict:
        """The seats still reserved for ``code`` (hold key -> ref), read consistently."""
        item = self.table.get(code_key(event_id, code),
                              projection="reserved, reserved_left") or {}
        return dict(item.get("reserved") or {}) if int(item.get("reserved_left", 0)) > 0 else {}


def _forget(key: str) -> Actions:
    """A reserved seat's record off the code's item (``reserved.<key>``, one fewer left)."""
    return Actions().remove(attr("reserved", key)).add("reserved_left", -1)
