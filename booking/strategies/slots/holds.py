"""Waiting-list holds on slot items: a slot held for one e-mail until a time, claimed and
freed as a booking's slots are (docs/strategies/slots.md, "Holds")."""
from collections.abc import Callable
from contextlib import suppress
from typing import Any

from booking.dynamo.access import Table, TransactionCancelled
from booking.dynamo.expressions import projection
from booking.dynamo.expressions import Member, Refusal
from booking.errors import AlreadyRegistered
from booking.models import Event, Order, Registration
from booking.strategies.base import OneItemPerPerson, order_full, quota_order
from booking.strategies.holds import RegistrationItemHolds
from booking.strategies.slots import freed
from booking.strategies.slots.seats import (FREE, HELD_UNTIL, KEEP, claimable, claimed, hold,
                                            hold_ref, held_until, keep_for, partition,
                                            slot_members, slot_op, slots_of, slots_value,
                                            unexpired)

HELD_SLOTS = projection("slot", "holder", "held_until")


class SlotsHolds(OneItemPerPerson, RegistrationItemHolds):
    """``Holds`` on the strategy's ``slots`` (its ``candidates`` find free slots)."""

    slots: Table
    # The strategy's own, declared here for the type checker:
    candidates: Callable[[str, str, int, float], tuple[list[int], Any]]
    freed_ops: Callable[[str], list]

    def hold_ops(self, event: Event, email: str, order: Order, *, until: float, now: float,
                 refused: Refusal | None = None) -> tuple[list[tuple[str, Member]], dict]:
        """Slots found as a booking finds them, held until ``until``; ``ref`` names them."""
        if refused is not None and refused.refused("registration"):
            raise AlreadyRegistered()
        claims = {}
        for quota in quota_order(order):
            found, _ = self.candidates(event.id, quota, order.seats[quota], now)
            if len(found) < order.seats[quota]:
                self._require_event(event.id)
                raise order_full(order, quota)
            claims[quota] = found[:order.seats[quota]]
        return [("registration", self.registration_absent_op(event.id, email)),
                *slot_members(self.slots, event.id, claims, hold(email, until),
                              condition=claimable(now))], hold_ref(claims)

    def accept_ops(self, event: Event, registration: Registration, order: Order, *,
                   now: float, ref: dict, holder: str | None = None) -> list[tuple[str, Member]]:
        """Every held slot kept, only while the hold is unexpired, and the registration (a
        slot held under another key, ``holder``, becomes the person's)."""
        claims = claimed(ref)
        keep = KEEP if holder is None else keep_for(registration.email)
        return [*slot_members(self.slots, event.id, claims, keep,
                              condition=unexpired(holder or registration.email, now)),
                ("registration",
                 self.registration_put(registration, **slots_value(registration, claims)))]

    def release_ops(self, event: Event, email: str, order: Order, *, until: float,
                    ref: dict) -> list[tuple[str, Member]]:
        return [*slot_members(self.slots, event.id, claimed(ref), FREE,
                              condition=held_until(email, until)), *self.freed_ops(event.id)]

    def release_expired(self, event: Event, *, now: float) -> int:
        """Each lapsed slot of every quota freed on its own, with the freed epoch's bump."""
        released = 0
        for quota in event.quota_capacities():
            for item in self._held(partition(event.id, quota)):
                if item["held_until"] > now:
                    continue
                with suppress(TransactionCancelled):  # claimed or released meanwhile
                    freed.freed_together(self, event.id, slot_op(
                        self.slots, event.id, quota, item["slot"], FREE,
                        condition=HELD_UNTIL.le(now)))
                    released += 1
        return released

    def holds(self, event_id: str) -> dict[str, float]:
        """Every hold holds a slot of the capacity (every seat counts in it)."""
        return {item["holder"]: item["held_until"] for item in self._held(event_id)}

    def _held(self, part: str) -> list[dict]:
        """The partition's slots held for an offer (expired ones too)."""
        return [item for item in slots_of(self.slots, part, projection=HELD_SLOTS)
                if "held_until" in item]
