"""Shards strategy (sharded lock items), for ticket drops: each quota's seats split over lock
items; a booking takes its seats from a shard of each quota in one transaction, and "full"
comes only from one read of every shard at one instant. docs/strategies/shards.md.
"""
import dataclasses
import threading

from collections.abc import Collection
from typing import Unpack

from booking.dynamo import items
from booking.dynamo.access import TransactionCancelled
from booking.dynamo.tables import EVENT_LOCKS
from booking.dynamo.expressions import Actions, attr
from booking.dynamo.expressions import Members, Put, Refusal, Update
from booking.errors import AlreadyRegistered, EventFull, EventNotFound
from booking.exactly_once.riders import Riders
from booking.models import CAPACITY_QUOTA, Availability, Event, Order, Registration
from booking.strategies.base import (NOT_REGISTERED, READ_AGAIN, Rewrite, availability_from_batch,
                                     cancellation, now_ms, order_full, quota_order)
from booking.strategies.holds import HoldsMap, availability_of
from booking.strategies.shards import audit as shards_audit
from booking.strategies.shards import capacity as shards_capacity
from booking.strategies.shards import seats
from booking.strategies.shards.holds import OneSeatHoldsMap, ShardsHolds
from booking.strategies.shards.seats import (BUMP, EXISTS, SHARDS, Plan, any_marker_key,
                                            marker_key, member, shard_key)
from booking.strategies.base import ReadAgain, StrategyOptions, TryAgain, hint_key

Lapsed = tuple[int, str, float]  # (shard, holder, now) of a lapsed hold's seat to take over
Placement = tuple[Plan, Lapsed | None]


class ShardsStrategy(ShardsHolds):
    name = "shards"
    max_capacity = 100_000
    description = (f"Registrations in their own table; the seats split over {SHARDS} lock "
                   "items (more for an event expecting more arrivals a second); one "
                   "transaction per booking, for ticket drops.")

    def __init__(self, **kwargs: Unpack[StrategyOptions]) -> None:
        super().__init__(**kwargs)
        self.locks = self.store.table(EVENT_LOCKS)
        self.held = HoldsMap(self.locks, BUMP)
        self.held_one_seat = OneSeatHoldsMap(self.locks, BUMP)  # a bare hold's room as stored
        self.dry = seats.DryShards()
        # one snapshot in flight per event and quotas
        self.shared: seats.SharedReads[dict[str, seats.Snapshot]] = seats.SharedReads()
        self._shard_counts: dict[str, int] = {}  # event id -> its shards (never changes)
        self._counting = threading.Lock()
        self._marks: set = set()  # sold-out marks this process made or is making

    def book(self, event: Event, registration: Registration, order: Order,
             riders: Riders) -> Registration:
        placed = self.guess(event.id, order)
        if placed is None:  # the shards not seen dry cannot hold it: read before writing
            answered = self.read_first(event.id, registration, order, riders)
            if answered is not None:
                return answered
            placed = self.elsewhere(event.id, order, marker={})  # the mark was read
        tried = Members()

        def attempt(plan: Plan, lapsed: Lapsed | None = None) -> Rewrite:
            nonlocal tried
            tried = Members([("registration", Put(
                self.registrations_table,
                items.registration_item(registration, **seats.stored(seats.taken(plan))),
                NOT_REGISTERED))])
            tried.extend((member(quota, n), seats.take_over_op(self.locks, event.id, *lapsed)
                          if lapsed else seats.take_op(self.locks, event.id, quota, n, *part))
                         for quota, parts in plan.items() for n, part in sorted(parts.items()))
            tried.extend(riders.members(registration))
            return Rewrite(tried, self.tokens.client_token(
                registration.registration_id, f"book:{sorted(plan.items())}:{lapsed}"))

        def decode(refusal: Refusal) -> Registration | Rewrite | None:
            registered = refusal.old("registration")
            if refusal.refused("registration") and self.tokens.is_mine(registered, registration):
                return registration  # a resend of our own transaction that had applied
            refused = refusal.refused_names("shard:")
            found = [item for item in map(refusal.old, refused) if item is not None]
            if len(found) < len(refused):
                raise EventNotFound() from None
            if refusal.refused("registration"):
                raise AlreadyRegistered(existing=items.registration_or_none(registered)) from None
            for name, item in zip(refused, found):
                if item["confirmed_count"] >= item["capacity"]:
                    quota, n = seats.shard_of(name)
                    self.dry.note(hint_key(event.id, quota), [n])
            if refused:  # no room where guessed: where is a seat?
                return attempt(*self.elsewhere(event.id, order))
            throttled = [seats.shard_of(name) for name in tried.names
                         if name.startswith("shard:") and refusal.code(name) == "ThrottlingError"]
            if throttled:  # a shard over its capacity: another at once
                return attempt(*(self.guess(event.id, order, avoid=throttled)
                                 or self.elsewhere(event.id, order)))
            return None

        token = attempt(*placed).token
        return self.transact(tried, written=registration, decode=decode, token=token,
                             riders=riders)

    def guess(self, event_id: str, order: Order,
              avoid: Collection[tuple[str, int]] = ()) -> Placement | None:
        """A placement without a read, from the shares as provisioned, over shards not seen
        dry (one in turn per quota, else several); None when they cannot hold the seats."""
        count, plan = self.shard_count(event_id), Plan()
        for quota in quota_order(order):
            hint, need = self.dry.next_turn(hint_key(event_id, quota)), order.seats[quota]
            shares = seats.shares(order.capacities[quota], [0] * count)
            room = {n: share for n, share in enumerate(shares)
                    if share and n not in hint.dry and (quota, n) not in avoid}
            fits = [n for n in room if room[n] >= need]
            parts = {hint.pick(fits): need} if fits else seats.split(need, room)
            if parts is None:
                return None
            plan[quota] = {n: (taken, shares[n]) for n, taken in parts.items()}
        return plan, None

    def elsewhere(self, event_id: str, order: Order, marker: dict | None = None) -> Placement:
        """After a refused (or hopeless) guess: "full" from a mark on ``marker`` (read if not
        given), else a placement, or "full", from one read of every shard it draws on."""
        quotas, since = quota_order(order), self.shared.clock()  # a joined read starts later
        self._full_if_marked(event_id, order, self.locks.get(any_marker_key(event_id)) or {}
                             if marker is None else marker)
        for _ in self.retry.attempts():
            try:
                seen = self.shared.read((event_id, *quotas), since,
                                        lambda: seats.snapshots(self, event_id, quotas))
                break
            except TransactionCancelled as cancelled:
                if not cancelled.conflict:
                    raise
                guessed = self.guess(event_id, order)  # a write was landing: one not seen dry
                if guessed is not None:
                    return guessed
        self.between_read_and_write()
        now = now_ms()
        for quota, snapshot in seen.items():
            self.dry.note(hint_key(event_id, quota), snapshot.dry(), replace=True)
        try:
            return seats.place(order, seen), None
        except EventFull:
            lapsed = seen[CAPACITY_QUOTA].expired_hold(now) if order.is_single_seat else None
            if lapsed is not None:
                return {CAPACITY_QUOTA: {lapsed[0]: (1, 0)}}, (*lapsed, now)
            if not all(snapshot.complete for snapshot in seen.values()):
                raise EventNotFound() from None
            self.mark_sold_out(event_id, seen, [
                quota for quota, snapshot in seen.items()
                if not snapshot.room() and seats.marked(snapshot.marker or {}, quota) <= now])
            raise

    def read_first(self, event_id: str, registration: Registration, order: Order,
                   riders: Riders) -> Registration | None:
        """One BatchGetItem (docs: Reading first): this request's registration, or None."""
        key = any_marker_key(event_id)
        marker, mine, *row = self.store.batch_get([
            (self.locks, key), (self.registrations_table,
                                {"event_id": event_id, "email": registration.email}),
            *riders.reads()])
        answered = riders.answer_read(row)
        if answered is not None:
            return answered
        if marker is None and key == marker_key(event_id):
            raise EventNotFound()
        if self.tokens.is_mine(mine, registration):
            return registration
        if mine is not None:
            raise AlreadyRegistered(existing=items.registration_from_item(mine))
        self._full_if_marked(event_id, order, marker or {})  # a copy not made yet: not marked
        return None

    def _full_if_marked(self, event_id: str, order: Order, marker: dict) -> None:
        for quota in quota_order(order):
            if seats.marked(marker, quota) > now_ms():  # still sold out: keep reading first
                self.dry.note(hint_key(event_id, quota), range(self.shard_count(event_id)))
                raise order_full(order, quota) from None

    def mark_sold_out(self, event_id: str, seen: dict[str, seats.Snapshot],
                      sold_out: list[str]) -> None:
        """Mark ``sold_out`` quotas as ``seen`` (unless a seat was freed since), once per
        process for one reading: every booking in flight at the sell-out read it."""
        if not sold_out:
            return
        marker = seen[sold_out[0]].marker or {}
        marks = {quota: seen[quota].full_until() for quota in sold_out}
        mark = (event_id, marker.get("epoch"), tuple(sorted(marks.items())))
        with self._counting:
            if mark in self._marks:
                return
            if len(self._marks) > 1000:  # forget old marks: at worst one write more
                self._marks.clear()
            self._marks.add(mark)
        shards_capacity.mark_sold_out(self, event_id, marks, marker)

    # --- the rest of the contract: capacity.py holds the event-wide writes, audit.py the audit
    check_order_shape = staticmethod(shards_capacity.check_order_shape)
    change_capacity = shards_capacity.change_capacity
    delete = shards_capacity.delete
    audit = shards_audit.audit_event
    repair = shards_audit.repair_event

    def full_by_reading(self, event: Event, registration: Registration, order: Order,
                        riders: Riders) -> Registration | None:
        if not any(self._seen_sold_out(event.id, quota) for quota in order.seats):
            return None
        return self.read_first(event.id, registration, order, riders)

    def sold_out_lately(self, event_id: str) -> bool:
        return self._seen_sold_out(event_id, CAPACITY_QUOTA)

    def _seen_sold_out(self, event_id: str, quota: str) -> bool:  # every shard seen dry
        dry = self.dry.get(hint_key(event_id, quota)).dry  # none: no need to know the count
        return bool(dry) and len(dry) >= self.shard_count(event_id)

    def shard_count(self, event_id: str) -> int:
        return self.shard_counts([event_id])[event_id]

    def shard_counts(self, event_ids: list[str]) -> dict[str, int]:
        """Event id -> its shards per quota (its marker's ``shards``, else ``SHARDS``), read
        once per process: one BatchGetItem of the markers not known yet."""
        if any(event_id not in self._shard_counts for event_id in event_ids):
            with self._counting:  # the first to ask reads; the others wait for its read
                unknown = [e for e in dict.fromkeys(event_ids) if e not in self._shard_counts]
                found = self.store.batch_get([(self.locks, marker_key(e)) for e in unknown]
                                             ) if unknown else []
                self._shard_counts.update({event_id: int(marker.get("shards", SHARDS))
                                           for event_id, marker in zip(unknown, found) if marker})
        return {event_id: self._shard_counts.get(event_id, SHARDS) for event_id in event_ids}

    def provision(self, event: Event) -> None:
        count = seats.shards_for(event)  # the marker names it, unless SHARDS (stored as ever)
        self.store.transact_write([
            Put(self.events, items.event_item(event), seats.NEW),
            *(Put(self.locks, item, seats.NEW) for item in seats.new_items(event, count))])
        self._shard_counts[event.id] = count

    def cancel(self, event: Event, email: str, registration_id: str | None, *, riders: Riders,
               known: Registration | None = None,
               release: dict[str, int] | None = None) -> Registration:
        # A link does not name the shards the registration holds seats on: read it first.
        return self.remove_as_read(
            lambda: self._stored(event.id, email, registration_id),
            lambda item: self._remove(event, item, riders, release),
            riders=riders, require_event=lambda: self._require_event(event.id))

    def _remove(self, event: Event, item: dict, riders: Riders,
                release: dict | None) -> Registration | TryAgain:
        """Free ``release`` of the order (None: all) on its shards, bumping the marker."""
        stored, held = items.registration_from_item(item), seats.placed_on(item)
        keep, tickets, answer = cancellation(stored, release, riders.request)
        freed = (event.order(tickets).seats if keep
                 else {quota: sum(shards.values()) for quota, shards in held.items()})
        giving = {quota: seats.split(need, held.get(quota, {}), by=int) or {}
                  for quota, need in freed.items()}  # from the first shards: the same on a resend
        left = {quota: {n: k - giving.get(quota, {}).get(n, 0) for n, k in shards.items()}
                for quota, shards in held.items()}
        tickets_as_read = attr("tickets").not_exists() | attr("tickets").eq(stored.tickets)
        first = self.removal_op(
            stored, keep, attr("registration_id").eq(stored.registration_id) & tickets_as_read,
            kept=Actions().set("shard_seats", seats.seat_map(left)))
        members = Members([("registration", first), *(
            (member(quota, n), Update(self.locks, shard_key(event.id, n, quota),
                                      Actions().set(seats.COUNT, seats.COUNT.minus(taken))
                                      + BUMP, EXISTS))
            for quota, parts in giving.items() for n, taken in sorted(parts.items())),
            *seats.freed_ops(self.locks, event.id), *riders.members(answer)])

        def decode(refusal: Refusal) -> ReadAgain | None:
            if refusal.refused_names("shard:") or refusal.refused("marker"):
                raise EventNotFound() from None
            return READ_AGAIN if refusal.refused("registration") else None

        return self.transact_once(members, written=answer, decode=decode, riders=riders,
                                  token=self.tokens.client_token(
                                      f"{stored.registration_id}:{riders.request.request_id}",
                                      "cancel"))

    availability = availability_from_batch

    def availabilities(self, events: list[Event]) -> dict[str, Availability]:
        now = now_ms()
        found = seats.quota_shard_items(self, {e.id: list(e.quota_capacities()) for e in events})
        return {event_id: dataclasses.replace(
            availability_of(seats.as_counter(quotas[CAPACITY_QUOTA]), now), further={
                quota: availability_of(seats.as_counter(shards), now, quota).quotas[CAPACITY_QUOTA]
                for quota, shards in quotas.items() if quota != CAPACITY_QUOTA and shards})
            for event_id, quotas in found.items()}

    def _require_event(self, event_id: str) -> dict:
        marker = self.locks.get(marker_key(event_id))
        if marker is None:
            raise EventNotFound()
        return marker
