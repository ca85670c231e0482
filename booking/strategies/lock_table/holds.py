"""Waiting-list holds on lock_table's lock items (each quota's, in the offer's one
transaction): docs/strategies/lock_table.md#holds"""
from booking.dynamo.access import Table
from booking.dynamo.expressions import Member
from booking.models import Event, Order, Registration
from booking.strategies.base import quota_order
from booking.strategies.holds import HoldsMap, MapHolds, RegistrationItemHolds
from booking.strategies.lock_table.locks import lock_id, quota_member


class LockTableHolds(RegistrationItemHolds, MapHolds):
    """``Holds`` on the lock items (``locks``), the registration in ``registrations_table``."""

    locks: Table
    held: HoldsMap

    def hold_items(self, event: Event, order: Order) -> list[tuple[str, str, Order]]:
        return [(quota_member(quota), lock_id(event.id, quota),
                 Order(seats={quota: order.seats[quota]},
                       capacities={quota: order.capacities[quota]}))
                for quota in quota_order(order)]

    def hold_keys(self, event: Event) -> list[str]:
        return [lock_id(event.id, quota) for quota in event.quota_capacities()]

    def accept_ops(self, event: Event, registration: Registration, order: Order, *,
                   now: float, ref: dict, holder: str | None = None) -> list[tuple[str, Member]]:
        return [*self.unhold_members(event, holder or registration.email, order, now=now),
                ("registration", self.registration_put(registration))]
