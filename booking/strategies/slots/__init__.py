"""Slots strategy: one item per seat, and a booking claims free ones of every quota it
draws on in one transaction with its registration (docs/strategies/slots.md)."""
import random

from typing import Unpack

from booking.dynamo import items
from booking.dynamo.tables import EVENT_LOCKS, SLOTS
from booking.dynamo.expressions import Actions, Condition, attr, projection
from booking.dynamo.expressions import MOST_MEMBERS, Members, Refusal
from booking.errors import AlreadyRegistered, BookingContention, InvalidBooking
from booking.exactly_once.riders import MOST_RIDER_MEMBERS, Riders
from booking.models import (CAPACITY_QUOTA, Availability, Event, Order, QuotaAvailability,
                            Registration)
from booking.strategies.base import (AGAIN, READ_AGAIN, cancellation, client_token, now_ms,
                                     order_full, quota_order)
from booking.strategies.base import StrategyOptions, TryAgain, WriteAgain
from booking.strategies.slots import audit as slots_audit
from booking.strategies.slots import capacity as slots_capacity
from booking.strategies.slots import freed
from booking.strategies.slots.candidates import LOOKUP, FreeSlotPool
from booking.strategies.slots.holds import SlotsHolds
from booking.strategies.slots.seats import (ABSENT, FREE, SHUFFLE_RANGE, claim, claimable,
                                            claimed, free_slot, held_by, partition,
                                            slot_members, slot_name, slots_of, slots_value)
from booking.strategies.sold_out import read_first

COUNTED = projection("holder", "held_until")
# Besides the slots: the registration, the freed epoch's copies, the riders' members.
OTHER_MEMBERS = 1 + freed.EPOCHS + MOST_RIDER_MEMBERS


class SlotsStrategy(SlotsHolds):
    name = "slots"
    max_capacity = 10_000
    description = "One pre-created item per seat; a booking claims a free slot in a transaction."
    change_capacity = slots_capacity.change_capacity
    delete = slots_capacity.delete
    audit = slots_audit.audit_event
    repair = slots_audit.repair_event
    freed_ops = freed.freed_ops  # (methods: the controls in harness/controls.py override them)
    see_slots = freed.see

    def __init__(self, **kwargs: Unpack[StrategyOptions]) -> None:
        super().__init__(**kwargs)
        self.slots = self.store.table(SLOTS)
        self.locks = self.store.table(EVENT_LOCKS)  # the freed epoch (freed.py)
        self.free_pool = FreeSlotPool()

    def check_order_shape(self, event: Event) -> None:
        """Refuse an event whose largest order would pass a transaction's 100 members
        (docs/strategies/slots.md, "The 100-member bound")."""
        widest = max(len(quotas) for quotas in event.ticket_types.values())
        if event.max_per_order * (1 + widest) + OTHER_MEMBERS > MOST_MEMBERS:
            most = (MOST_MEMBERS - OTHER_MEMBERS) // (1 + widest)
            # Why (for developers): one slot item per seat and quota, in one transaction.
            raise InvalidBooking(f"Allow at most {most} seats per order here: each seat of "
                                 f"an order is written together with its quotas, and one "
                                 f"write holds at most {MOST_MEMBERS} of them.",
                                 field="max_per_order")

    def provision(self, event: Event) -> None:
        # Slots first: the event becomes visible (bookable) only once all its seats exist.
        for quota, size in event.quota_capacities().items():
            self.slots.batch_put([free_slot(partition(event.id, quota), n) for n in range(size)])
        self.events.put(items.event_item(event), condition=ABSENT)

    # --- booking: claim the order's slots, or say why not --------------------------------
    def book(self, event: Event, registration: Registration, order: Order,
             riders: Riders) -> Registration:
        answered = self.full_by_reading(event, registration, order, riders)
        if answered is not None:  # verified sold out here: one read answered
            return answered
        for _ in self.retry.attempts():
            found = {}
            for quota in quota_order(order):
                found[quota], seen = self.candidates(event.id, quota, order.seats[quota])
                if len(found[quota]) < order.seats[quota]:
                    return self._refused(event, registration, order, quota, seen, riders)
            self.between_read_and_write()
            outcome = self._claim(event, registration, order, found, riders)
            if not isinstance(outcome, WriteAgain):
                return outcome
        raise BookingContention()  # (the attempts raise it first)

    def candidates(self, event_id: str, quota: str, needed: int,
                   now: float | None = None) -> tuple[list[int], freed.Seen | None]:
        """Slots of ``quota`` to try (``needed`` and spares): from this process's pool or a
        lookup of the free-slot index, else (the index may lag) from a consistent read of
        the slot items themselves (``Seen``), lapsed holds' slots after the free ones."""
        part = partition(event_id, quota)
        found = self.pooled(part, needed)
        if len(found) >= needed:
            return found, None
        seen = self.see_slots(event_id, part, now)
        return random.sample(seen.free, len(seen.free)) + seen.lapsed, seen

    def pooled(self, part: str, needed: int) -> list[int]:
        """From this process's pool, else from a lookup that leaves the rest there."""
        found = self.free_pool.take(part, needed=needed)
        if found:
            return found
        looked = [] if self.free_pool.recently_none(part) else self._lookup(
            part, needed, start=random.randrange(SHUFFLE_RANGE))
        if len(looked) < needed:
            looked = list(dict.fromkeys(looked + self._lookup(part, needed)))
        random.shuffle(looked)
        return self.free_pool.take(part, looked, needed=needed)

    def _lookup(self, part: str, needed: int, start: int | None = None) -> list[int]:
        """Free slots of ``part`` from the free-slot index (from a random point ``start``)."""
        condition: Condition = attr("free_in").eq(part)
        if start is not None:
            condition &= attr("shuffle").ge(start)
        return [int(item["slot"]) for item in self.slots.query(
            index="free_slots", key_condition=condition, limit=max(LOOKUP, 2 * needed))]

    def _claim(self, event: Event, registration: Registration, order: Order, found: dict,
               riders: Riders) -> Registration | WriteAgain:
        """Claim ``order``'s seats from ``found``, the next candidates replacing those taken
        meanwhile; ``AGAIN`` when too few are left to try."""
        taken: list[str] = []

        def decode(refusal: Refusal) -> Registration | WriteAgain | None:
            registered = refusal.old("registration")
            if self.tokens.is_mine(registered, registration):
                return registration  # a resend of our own claim that had applied
            if refusal.refused("registration"):
                raise AlreadyRegistered(existing=items.registration_or_none(registered)) from None
            taken[:] = refusal.refused_names("slot:")
            return AGAIN if taken else None

        while all(len(found[q]) >= n for q, n in order.seats.items()):
            claims, now = {q: found[q][:n] for q, n in order.seats.items()}, now_ms()
            members = Members([("registration", self.registration_put(
                registration, **slots_value(registration, claims)))])
            members.extend(slot_members(self.slots, event.id, claims, claim(registration.email),
                                        condition=claimable(now)))
            members.extend(riders.members(registration))
            token = self.tokens.client_token(
                f"{registration.registration_id}:{sorted(claims.items())}", f"claim-{now}")
            outcome = self.transact_once(members, written=registration, decode=decode,
                                         token=token, riders=riders)
            if isinstance(outcome, Registration):
                return outcome
            gone = set(taken) or {slot_name(q, n) for q, slots in claims.items() for n in slots}
            found = {q: [n for n in slots if slot_name(q, n) not in gone]
                     for q, slots in found.items()}
        return AGAIN

    def _refused(self, event: Event, registration: Registration, order: Order, quota: str,
                 seen: freed.Seen | None, riders: Riders) -> Registration:
        """No room in ``quota``: this request's own earlier booking, else
        ``AlreadyRegistered`` or ``EventNotFound``, else ``EventFull`` naming the quota
        (remembered with what ``seen`` verified when it found no slot at all)."""
        answered = read_first(self, [(self.events, {"event_id": event.id})], registration, riders,
                              registrations=self.registrations_table).answered
        if answered is not None:
            return answered
        if seen is not None and not seen.free and not seen.lapsed:
            self.sold_out.note(partition(event.id, quota), seen)
        raise order_full(order, quota)

    def full_by_reading(self, event: Event, registration: Registration, order: Order,
                        riders: Riders) -> Registration | None:
        """From one read of an epoch item, when quotas of ``order`` were verified sold out
        here (``freed.py``): "full" naming the first still so; None clears the others."""
        marks = {q: self.sold_out.mark(partition(event.id, q)) for q in quota_order(order)}
        if not any(marks.values()):
            return None
        read = read_first(self, [(self.locks, freed.any_epoch_key(event.id))], registration,
                          riders, registrations=self.registrations_table)
        if read.answered is not None:
            return read.answered
        now = now_ms()
        for quota, seen in marks.items():
            if seen is not None and seen.holds(read.counters[0], now):
                raise order_full(order, quota)
            self.sold_out.clear(partition(event.id, quota))
        return None

    # --- cancelling: free the slots the stored registration names -------------------------
    def cancel(self, event: Event, email: str, registration_id: str | None, *, riders: Riders,
               known: Registration | None = None,
               release: dict[str, int] | None = None) -> Registration:
        return self.remove_as_read(  # a link does not name the slots: read them first
            lambda: self._stored(event.id, email, registration_id),
            lambda item: self._free(event, item, riders, release), riders=riders,
            require_event=lambda: self._require_event(event.id))

    def _free(self, event: Event, item: dict, riders: Riders,
              release: dict[str, int] | None) -> Registration | TryAgain:
        stored, held = items.registration_from_item(item), claimed(item)
        keep, tickets, answer = cancellation(stored, release, riders.request)
        seats = event.order(tickets).seats if keep else {q: len(s) for q, s in held.items()}
        freeing = {q: held[q][:n] for q, n in seats.items()}
        kept = {q: held[q][seats.get(q, 0):] for q in held}
        stored_tickets = attr("tickets")
        same = (attr("registration_id").eq(stored.registration_id)
                & (stored_tickets.not_exists() | stored_tickets.eq(stored.tickets)))
        members = Members([("registration", self.removal_op(
            stored, keep, same,
            kept=Actions().set("slots", {q: s for q, s in kept.items() if s}))),
        ])
        members.extend(slot_members(self.slots, event.id, freeing, FREE,
                                    condition=held_by(stored.email)))
        members.extend([*riders.members(answer), *self.freed_ops(event.id)])
        return self.transact_once(
            members, written=answer, riders=riders,
            decode=lambda refusal: READ_AGAIN if refusal.refused("registration") else None,
            token=client_token(f"{stored.registration_id}:{riders.request.request_id}", "cancel"))

    # --- reading and editing --------------------------------------------------------------
    def availability(self, event: Event) -> Availability:
        """Every quota's seats as its slot items say (a held slot is held until it lapses)."""
        self._require_event(event.id)
        now, found = now_ms(), {}
        for quota in event.quota_capacities():
            slots = list(slots_of(self.slots, partition(event.id, quota), projection=COUNTED))
            holds = [s["held_until"] for s in slots if "held_until" in s]
            found[quota] = (len(slots), sum(1 for s in slots if "holder" in s) - len(holds),
                            sum(1 for until in holds if until > now))
        (capacity, confirmed, held), further = found.pop(CAPACITY_QUOTA), found
        return Availability(capacity=capacity, confirmed=confirmed, held=held,
                            further={q: QuotaAvailability(*seats) for q, seats in further.items()})
