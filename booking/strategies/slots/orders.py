"""Orders on slots (docs/orders.md): slot items per quota, all claimed in one transaction.

The capacity quota's slots are the event's slots as ever; each further quota has its own
slot items, in the partition ``<event id>#<quota>`` of the same table (and of the sparse
free-slot index), so a quota's free seats are looked up exactly as an event's are. An
order looks up enough free slots in every quota it draws on, then claims all of them and
puts the registration (with its ``tickets`` and the ``slots`` it holds per quota) in one
TransactWriteItems, with its request and outbox rows: a slot taken meanwhile cancels the
whole transaction and the order looks again; a quota with fewer free slots than the order
needs refuses it (``EventFull(quota=...)``), nothing stored.

The 100-action limit of a transaction bounds an order: one member per claimed slot (a
seat counts once in the capacity and once in every further quota its type names), plus
the registration, up to three request/outbox rows and (a cancellation) the freed epoch's
items. ``check_order_shape`` refuses an event whose largest order could pass it
(``max_per_order`` x (1 + the most quotas a type names) + 4 + ``freed.EPOCHS`` > 100).

"Full" for a quota is verified as for the event's own seats (``freed.py``): when the index
shows too few free slots, the quota's slot items are read consistently (the event's one
freed epoch read first); none free is remembered per quota (``hint_key``), and the next
order drawing on a quota so remembered is refused from one consistent BatchGetItem of an
epoch item, the person's registration and the request row.
"""
import random

from booking.dynamo import items
from booking.errors import AlreadyRegistered, InvalidBooking
from booking.exactly_once.request_log import Request
from booking.models import CAPACITY_QUOTA, Event, Order, QuotaAvailability, Registration
from booking.strategies.base import (AGAIN, READ_AGAIN, client_token, now_ms, order_full,
                                     part_of, quota_order, refused_at, tickets_left)
from booking.strategies.slots import freed
from booking.strategies.slots.capacity import SHUFFLE_RANGE, free_slot, partition
from booking.strategies.sold_out import hint_key, read_first

TRANSACTION_LIMIT = 100
# the registration, the request row, up to two outbox rows, and (a cancellation) the freed
# epoch and its copies
OTHER_MEMBERS = 4 + freed.EPOCHS


def check_order_shape(event: Event) -> None:
    widest = max(len(quotas) for quotas in event.ticket_types.values())
    if event.max_per_order * (1 + widest) + OTHER_MEMBERS > TRANSACTION_LIMIT:
        most = (TRANSACTION_LIMIT - OTHER_MEMBERS) // (1 + widest)
        raise InvalidBooking(f"With slots, an order claims one item per seat and quota in one "
                             f"transaction (at most {TRANSACTION_LIMIT}): allow at most {most} "
                             f"seats per order here.", field="max_per_order")


class SlotsOrders:
    """The order paths of ``SlotsStrategy`` (its tables, requests and retries)."""

    def __init__(self, strategy):
        self.strategy = strategy

    def provision(self, event: Event) -> None:
        for quota, seats in sorted(event.quotas.items()):
            self.strategy.slots.batch_put([free_slot(partition(event.id, quota), n)
                                           for n in range(seats)])

    def free_slots(self, part: str, needed: int) -> list[int]:
        """``needed`` free slots of a partition, picked at random (fewer: not that many)."""
        limit = max(2 * needed, 8)
        found = set(self._lookup(part, "free_in = :e AND shuffle >= :start",
                                 {":start": random.randrange(SHUFFLE_RANGE)}, limit))
        if len(found) < needed:
            found |= set(self._lookup(part, "free_in = :e", {}, limit))
        return random.sample(sorted(found), needed) if len(found) >= needed else []

    def _lookup(self, part, condition, values, limit):
        return [item["slot"] for item in self.strategy.slots.query(
            index="free_slots", key_condition=condition, values={":e": part, **values},
            limit=limit)]

    def _claim(self, part: str, slot: int, email: str):
        return ("Update", self.strategy.slots.update_op(
            {"event_id": part, "slot": slot}, "SET holder = :email REMOVE free_in",
            condition="attribute_exists(free_in)", values={":email": email}))

    def _free_op(self, part: str, slot: int, email: str):
        return ("Update", self.strategy.slots.update_op(
            {"event_id": part, "slot": slot}, "SET free_in = :e REMOVE holder",
            condition="holder = :email", values={":e": part, ":email": email}))

    def book(self, event_id: str, registration: Registration, order: Order) -> Registration:
        strategy = self.strategy
        request = Request.booking(registration)

        def decode(cancelled):
            registered = cancelled.reasons[0].old_item if refused_at(cancelled, 0) else None
            if strategy.tokens.is_mine(registered, registration):
                return registration
            if refused_at(cancelled, 0):
                raise AlreadyRegistered(existing=items.registration_or_none(registered)) from None
            return AGAIN  # a slot was taken since the lookup (or a conflict): look again

        if strategy.sold_out.any_of([hint_key(event_id, q) for q in quota_order(order)]):
            answered = self._answered_by_reading(event_id, registration, request, order)
            if answered is not None:  # verified sold out here: one read answers
                return answered
        for _ in strategy.retry.attempts():
            claims = {}
            for quota in quota_order(order):
                part, needed = partition(event_id, quota), order.seats[quota]
                claims[quota], seen = self.free_slots(part, needed), None
                if not claims[quota]:  # the index may lag: read the slots themselves
                    seen = strategy.see_slots(event_id, part)
                    if len(seen.free) >= needed:
                        claims[quota] = random.sample(seen.free, needed)
                if not claims[quota]:
                    return self._refusal(event_id, registration, request, order, quota, seen)
            strategy.between_read_and_write()
            operations = [
                ("Put", strategy.registrations_table.put_op(
                    items.registration_item(registration, slots=claims),
                    condition="attribute_not_exists(email)")),
                *[self._claim(partition(event_id, q), slot, registration.email)
                  for q, slots in claims.items() for slot in slots],
            ]
            token = client_token(f"{registration.registration_id}:{sorted(claims.items())}", "order")
            outcome = strategy.transact_once(
                operations + strategy.requests.ops(request, registration), written=registration,
                decode=decode, token=token, request=request, request_at=len(operations))
            if outcome is not AGAIN:
                return outcome

    def _answered_by_reading(self, event_id, registration, request, order):
        """As ``SlotsStrategy._answered_by_reading``, for the quotas of ``order`` this
        process verified sold out: "full" naming the first whose mark still holds."""
        strategy = self.strategy
        read = read_first(strategy, [(strategy.locks, freed.any_epoch_key(event_id))],
                          registration, request, registrations=strategy.registrations_table)
        if read.answered is not None:
            return read.answered
        now = now_ms()
        for quota in quota_order(order):
            key = hint_key(event_id, quota)
            if strategy.sold_out.any_of([key]):
                verified = strategy.sold_out.mark(key)
                if verified is not None and verified.holds(read.counters[0], now):
                    raise order_full(order, quota)
                strategy.sold_out.clear(key)
        return None

    def _refusal(self, event_id, registration, request, order, quota, seen):
        """No room for the order in ``quota``: unless this request already booked, or the
        person holds an order, or the event is gone, ``EventFull`` naming the quota (a
        quota ``seen`` with no free slot is remembered: the next refusal reads)."""
        refusal = self.strategy._no_free_slot(event_id, registration, request)
        if isinstance(refusal, Exception) and refusal.code == "event_full":
            if seen is not None and not seen.free:
                self.strategy.sold_out.note(hint_key(event_id, quota), seen.verified)
            raise order_full(order, quota)
        if isinstance(refusal, Exception):
            raise refusal
        return refusal

    def cancel(self, event_id, email, registration_id, *, request, event: Event, release):
        strategy = self.strategy
        return strategy.remove_as_read(
            lambda: strategy._stored(event_id, email, registration_id),
            lambda stored: self._remove(event_id, stored, request, event, release),
            request=request, require_event=lambda: strategy._require_event(event_id))

    def _remove(self, event_id, item: dict, request, event: Event, release):
        stored = items.registration_from_item(item)
        held = {q: list(slots) for q, slots in (item.get("slots") or {}).items()}
        keep = tickets_left(stored, release) if release is not None else {}
        freed = event.order(release).seats if keep else {q: len(s) for q, s in held.items()}
        answer = part_of(stored, release, request) if keep else stored
        key = {"event_id": event_id, "email": stored.email}
        same = {":rid": stored.registration_id, ":old": stored.tickets}
        condition = "registration_id = :rid AND tickets = :old"
        releasing = {q: held[q][:n] for q, n in freed.items()}
        if keep:
            kept = {q: held[q][freed.get(q, 0):] for q in held}
            first = ("Update", self.strategy.registrations_table.update_op(
                key, "SET tickets = :keep, slots = :slots", condition=condition,
                values={**same, ":keep": keep, ":slots": {q: s for q, s in kept.items() if s}}))
        else:
            first = ("Delete", self.strategy.registrations_table.delete_op(
                key, condition=condition, values=same))
        operations = [first, *[self._free_op(partition(event_id, q), slot, stored.email)
                               for q, slots in releasing.items() for slot in slots]]
        return self.strategy.transact_once(
            operations + self.strategy.requests.ops(request, answer)
            + self.strategy.freed_ops(event_id), written=answer,
            decode=lambda cancelled: READ_AGAIN if refused_at(cancelled, 0) else None,
            request=request, request_at=len(operations),
            token=client_token(f"{stored.registration_id}:{request.request_id}", "cancel"))

    def availability(self, event_id: str, quotas) -> dict[str, QuotaAvailability]:
        """Every quota's seats as its slot items say (claimed ones are confirmed, those
        held for a waiting-list offer held: a lapsed one too, until it is released)."""
        found = {}
        for quota in (CAPACITY_QUOTA, *quotas):
            slots = list(self.strategy.slots.query(
                key_condition="event_id = :e", values={":e": partition(event_id, quota)},
                projection="holder, held_until"))
            held = sum(1 for s in slots if "held_until" in s)
            found[quota] = QuotaAvailability(
                capacity=len(slots), confirmed=sum(1 for s in slots if "holder" in s) - held,
                held=held)
        return found

    def delete(self, event_id: str, quotas) -> None:
        for quota in quotas:
            self.strategy.slots.delete_partition(partition(event_id, quota))
