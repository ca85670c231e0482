"""Orders on shards (docs/orders.md): the lock item in a transaction as lock_table's ``orders.py``
(a lock item per quota, one transaction over the quotas an order touches), each quota's
lock item split in ``SHARDS`` shards.

Every quota has ``SHARDS`` shard items (``seats.quota_shard_key``): the capacity quota's
are the event's own shards, a further quota's are ``<event id>#<quota>#<n>``, each with
its share of the quota's seats. An order takes, for every quota it draws on, its seats
from one or more shards of that quota, all in ONE TransactWriteItems with the registration
(its ``tickets`` and ``shard_seats``: quota -> shard -> seats, so a cancellation gives back
exactly those) and the request and outbox rows. Each shard member adds its seats only if
they fit: ``#capacity >= :cap AND confirmed_count <= :cap - n`` (a condition cannot add),
``:cap`` the shard's capacity as guessed or read. DynamoDB serializes transactions on a
shared shard, so two orders that each saw room cannot both commit, and no shard, hence no
quota, ever counts more than it holds.

1. The first try reads nothing: per quota, one shard not seen dry lately whose share (the
   quota's even split, as provisioned) holds all the order's seats of that quota, else
   the whole shares of several such shards.
2. A refused shard, or a quota that no one shard can take, moves the order to the seats:
   the marker item (a touched quota marked sold out answers "full" naming it), else one
   TransactGetItems of the marker and every shard of every touched quota (one instant).
   A quota whose shards together lack room for its seats is "full" (``EventFull`` naming
   the first such quota in ``quota_order``); otherwise the seats are placed over the
   shards with the most room, as read, and written again.
3. A quota read with no seat anywhere is marked sold out on the marker (the capacity:
   ``full_until``, as for single seats; a further quota: in ``full_quotas``), only if the
   marker's ``epoch`` is still the one read. Every write that frees seats (a whole or
   partial cancellation, a capacity edit, a repair) bumps the epoch and removes every mark
   in its own transaction, so a mark is true while it stands.

"Full" comes only from that read (or a mark made from one), never from a dry shard. When
the shards not seen dry cannot hold a quota's seats, the order reads before it writes: one
BatchGetItem of the marker, the person's registration and the request row (a repeat of a
booked request gets its order, a registered person "already registered", a quota marked
sold out "full"), then the shards as in 2.

Limits: a transaction holds at most 100 members, a TransactGetItems 100 items. An order
writes the registration, at most ``min(SHARDS, max_per_order)`` shards per quota it
touches and its request and outbox rows; a cancellation adds the marker and its 3 copies;
the read takes the marker and ``SHARDS`` shards per touched quota. An event has at most 10
further quotas, so that is at most 1 + 8 x 11 + 2 = 91 members (a cancellation 95) and 89
items, whatever the seats: ``check_order_shape`` keeps it so. Creating the event writes
the event item, the marker and 8 shards per quota (at most 90); a capacity edit also the
marker's copies (93).

Waiting-list offers hold an entry's order on these shards (``holds.py``): placed as here,
from one read, held with the same conditions, and released with the marker's bump.
"""
import random

from booking.dynamo import items
from booking.dynamo.access import TransactionCancelled
from booking.errors import AlreadyRegistered, EventFull, EventNotFound, InvalidBooking
from booking.exactly_once.request_log import Request
from booking.models import CAPACITY_QUOTA, Event, Order, QuotaAvailability, Registration
from booking.strategies.base import (CAPACITY_NAMES, READ_AGAIN, Rewrite, client_token,
                                     now_ms, old_item, order_full, part_of, quota_order,
                                     refused_at, tickets_left)
from booking.strategies.holds import availability_of
from booking.strategies.shards import seats
from booking.strategies.shards.seats import SHARDS, quota_shard_key

TAKE = "SET confirmed_count = confirmed_count + :n, version = version + :one"
GIVE = "SET confirmed_count = confirmed_count - :n, version = version + :one"
FITS = "attribute_exists(event_id) AND #capacity >= :cap AND confirmed_count <= :room"
TRANSACTION_LIMIT = 100
OTHER_MEMBERS = 3 + seats.MARKERS  # the registration (or its update), the marker and its
# copies, the request and outbox rows


def hint_key(event_id: str, quota: str) -> str:
    """The key of a quota's dry-shard hint (the capacity's is the event's own)."""
    return event_id if quota == CAPACITY_QUOTA else f"{event_id}#{quota}"


def check_order_shape(event: Event) -> None:
    touched = 1 + len({quota for quotas in event.ticket_types.values() for quota in quotas})
    members = touched * min(SHARDS, event.max_per_order) + OTHER_MEMBERS
    if members > TRANSACTION_LIMIT:
        raise InvalidBooking(f"With shards, an order writes up to {SHARDS} items per quota it "
                             f"draws on in one transaction (at most {TRANSACTION_LIMIT}): "
                             f"name fewer quotas in the ticket types.", field="ticket_types")


def stored_plan(plan: dict) -> dict:
    """The registration's ``shard_seats``: quota -> shard (as text) -> seats."""
    return {quota: {str(n): taken for n, (taken, _) in shards.items()}
            for quota, shards in plan.items()}


def placed_on(item: dict) -> dict[str, dict[int, int]]:
    """Quota -> shard -> seats of a stored order."""
    return {quota: {int(n): int(taken) for n, taken in shards.items()}
            for quota, shards in (item.get("shard_seats") or {}).items()}


def place(order: Order, seen: dict[str, seats.Snapshot]) -> dict:
    """Quota -> shard -> (seats, capacity as read): the order over the shards with the most
    room; ``EventFull`` naming the first quota whose shards together lack room."""
    plan = {}
    for quota in quota_order(order):
        room = {n: item["capacity"] - item["confirmed_count"]
                for n, item in enumerate(seen[quota].shards)
                if item["capacity"] > item["confirmed_count"]}
        need = order.seats[quota]
        if sum(room.values()) < need:
            raise order_full(order, quota)
        plan[quota] = {}
        for n in sorted(room, key=lambda n: (-room[n], random.random())):
            if need:
                taken = min(need, room[n])
                plan[quota][n], need = (taken, seen[quota].shards[n]["capacity"]), need - taken
    return plan


def marked(marker: dict, quota: str) -> int:
    """Until when ``quota`` is marked sold out on the marker (0: it is not)."""
    if quota == CAPACITY_QUOTA:
        return marker.get("full_until", 0)
    return (marker.get("full_quotas") or {}).get(quota, 0)


class ShardsOrders:
    """The order paths of ``ShardsStrategy`` (its tables, hints, requests and retries)."""

    def __init__(self, strategy):
        self.strategy = strategy

    def provision_ops(self, event: Event) -> list:
        new = "attribute_not_exists(event_id)"
        return [("Put", self.strategy.locks.put_op(
                    {**seats.shard_item(event.id, n, share, orders=True),
                     **quota_shard_key(event.id, quota, n)},
                    condition=new))
                for quota, capacity in sorted(event.quotas.items())
                for n, share in enumerate(seats.shares(capacity, [0] * SHARDS))]

    def _pick(self, candidates: list[int]) -> int:
        return random.choice(candidates)

    def guessed(self, event_id: str, order: Order) -> tuple[dict | None, str | None]:
        """A plan without a read, from the quotas' provisioned shares: per quota, one shard
        not seen dry whose share holds the quota's seats, else whole shares of several;
        (None, the quota) when the shards not seen dry cannot hold them."""
        plan = {}
        for quota in quota_order(order):
            need, dry = order.seats[quota], self.strategy.dry.get(hint_key(event_id, quota)).dry
            shares = seats.shares(order.capacities[quota], [0] * SHARDS)
            fits = [n for n in range(SHARDS) if shares[n] >= need and n not in dry]
            if fits:
                shard = self._pick(fits)
                plan[quota] = {shard: (need, shares[shard])}
                continue
            plan[quota] = {}
            for n in sorted((n for n in range(SHARDS) if shares[n] and n not in dry),
                            key=lambda n: (-shares[n], random.random())):
                taken = min(need, shares[n])
                if taken:
                    plan[quota][n], need = (taken, shares[n]), need - taken
            if need:
                return None, quota
        return plan, None

    def book(self, event_id: str, registration: Registration, order: Order) -> Registration:
        strategy = self.strategy
        request = Request.booking(registration)
        rows = strategy.requests.ops(request, registration)
        members: list[tuple[str, int]] = []

        def attempt(plan):
            members[:] = [(quota, n) for quota in plan for n in sorted(plan[quota])]
            put = ("Put", strategy.registrations_table.put_op(
                items.registration_item(registration, shard_seats=stored_plan(plan)),
                condition="attribute_not_exists(email)"))
            takes = [("Update", strategy.locks.update_op(
                quota_shard_key(event_id, quota, n), TAKE, condition=FITS, names=CAPACITY_NAMES,
                values={":n": plan[quota][n][0], ":one": 1, ":cap": plan[quota][n][1],
                        ":room": plan[quota][n][1] - plan[quota][n][0]}))
                for quota, n in members]
            placed = sorted(stored_plan(plan).items())
            token = client_token(f"{registration.registration_id}:{placed}", "order")
            return Rewrite([put, *rows, *takes], token)

        def decode(cancelled):
            registered = old_item(cancelled, 0)
            if refused_at(cancelled, 0) and strategy.tokens.is_mine(registered, registration):
                return registration  # a resend of our own transaction that had applied
            first = 1 + len(rows)
            refused = {member: old_item(cancelled, first + i) for i, member in enumerate(members)
                       if refused_at(cancelled, first + i)}
            if any(item is None for item in refused.values()):
                raise EventNotFound() from None
            if refused_at(cancelled, 0):
                raise AlreadyRegistered(existing=items.registration_or_none(registered)) from None
            if not refused:
                return None
            for (quota, n), item in refused.items():
                if item["confirmed_count"] >= item["capacity"]:
                    strategy.dry.note(hint_key(event_id, quota), [n])
            quota = next(q for q in quota_order(order) if any(m[0] == q for m in refused))
            return attempt(self.elsewhere(event_id, order, quota))

        plan, unfit = self.guessed(event_id, order)
        if plan is None:  # no one shard can take this quota's seats: read first
            plan = self._read_first(event_id, registration, request, order, unfit)
            if isinstance(plan, Registration):
                return plan
        first = attempt(plan)
        return strategy.transact(first.operations, written=registration, decode=decode,
                                 token=first.token, request=request, request_at=1)

    def _read_first(self, event_id, registration, request, order, quota):
        """Read before writing (``read_before_writing``: a repeat, "already registered" or
        a quota marked sold out answer from one batch), then a plan from the shards."""
        marker, answered = self.strategy.read_before_writing(event_id, registration, request)
        if answered is not None:
            return answered
        return self.elsewhere(event_id, order, quota, marker=marker)

    def elsewhere(self, event_id: str, order: Order, quota: str, *, marker=None) -> dict:
        """After ``quota``'s guessed shards could not take its seats: "full" from a mark on
        the ``marker`` (read here when not given), else a plan from one read of every
        touched quota's shards, or "full" from that read."""
        strategy, quotas, now = self.strategy, quota_order(order), now_ms()
        marker = marker or strategy.locks.get(seats.any_marker_key(event_id)) or {}
        for touched in quotas:
            if marked(marker, touched) > now:
                raise order_full(order, touched) from None
        seen = seats.settled_snapshot(strategy, event_id, quotas)
        if not all(snapshot.complete for snapshot in seen.values()):
            raise EventNotFound() from None
        strategy.between_read_and_write()
        for touched, snapshot in seen.items():
            strategy.dry.note(hint_key(event_id, touched), snapshot.dry(), replace=True)
        sold_out = [touched for touched, snapshot in seen.items()
                    if not snapshot.free() and marked(snapshot.marker, touched) <= now]
        if sold_out:
            self.mark_sold_out(event_id, seen, sold_out)
        return place(order, seen)

    def mark_sold_out(self, event_id: str, seen: dict, sold_out: list[str]) -> None:
        """Mark ``sold_out`` quotas as ``seen``, unless a seat was freed since (the epoch)."""
        if CAPACITY_QUOTA in sold_out:
            self.strategy.mark_sold_out(event_id, seen[CAPACITY_QUOTA])
        further = [quota for quota in sold_out if quota != CAPACITY_QUOTA]
        if not further:
            return
        marker = seen[further[0]].marker  # marks standing at this epoch are still true
        marks = {**(marker.get("full_quotas") or {}),
                 **{quota: seen[quota].full_until() for quota in further}}
        try:
            self.strategy.store.transact_write(seats.mark_ops(
                self.strategy.locks, event_id, "SET full_quotas = :marks", {":marks": marks},
                marker["epoch"]))
        except TransactionCancelled:
            pass  # a seat was freed since the read: the next refusal reads again

    def remove(self, event_id, item: dict, request, event: Event, release):
        """Free ``release`` of the stored order (None: all of it) in one transaction, from
        the shards it holds them on, and bump the marker."""
        strategy, stored, held = self.strategy, items.registration_from_item(item), placed_on(item)
        keep = tickets_left(stored, release) if release is not None else {}
        freed = (event.order(release).seats if keep
                 else {quota: sum(shards.values()) for quota, shards in held.items()})
        answer = part_of(stored, release, request) if keep else stored
        giving = {quota: {} for quota in freed}
        for quota, need in freed.items():
            for n in sorted(held.get(quota, {})):
                taken = min(need, held[quota][n])
                if taken:
                    giving[quota][n], need = taken, need - taken
                    held[quota][n] -= taken
        key = {"event_id": event_id, "email": stored.email}
        same = {":rid": stored.registration_id, ":old": stored.tickets}
        condition = "registration_id = :rid AND tickets = :old"
        if keep:
            left = {q: {str(n): k for n, k in s.items() if k} for q, s in held.items()}
            first = ("Update", strategy.registrations_table.update_op(
                key, "SET tickets = :keep, shard_seats = :left", condition=condition,
                values={**same, ":keep": keep, ":left": {q: s for q, s in left.items() if s}}))
        else:
            first = ("Delete", strategy.registrations_table.delete_op(key, condition=condition,
                                                                      values=same))
        rows = strategy.requests.ops(request, answer)
        operations = [first, *rows, *seats.freed_ops(strategy.locks, event_id), *[
            ("Update", strategy.locks.update_op(
                quota_shard_key(event_id, quota, n), GIVE, condition="attribute_exists(event_id)",
                values={":n": taken, ":one": 1}))
            for quota, shards in giving.items() for n, taken in sorted(shards.items())]]

        def decode(cancelled):
            if any(refused_at(cancelled, i) for i in range(1 + len(rows), len(operations))):
                raise EventNotFound() from None
            return READ_AGAIN if refused_at(cancelled, 0) else None

        return strategy.transact_once(
            operations, written=answer, decode=decode, request=request, request_at=1,
            token=client_token(f"{stored.registration_id}:{request.request_id}", "cancel"))

    def further(self, event_id: str, quotas) -> tuple[list[dict], dict[str, QuotaAvailability]]:
        """The capacity quota's shards and every further quota's seats (those held for
        offers apart), in one batch."""
        found = seats.quota_shard_items(self.strategy, event_id, (CAPACITY_QUOTA, *quotas))
        now, further = now_ms(), {}
        for quota, shards in found.items():
            if quota != CAPACITY_QUOTA and shards:
                held = availability_of(seats.as_counter(shards), now, quota)
                further[quota] = QuotaAvailability(capacity=held.capacity,
                                                   confirmed=held.confirmed, held=held.held)
        return found[CAPACITY_QUOTA], further

