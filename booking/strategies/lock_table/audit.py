"""Audit and repair of lock_table: every quota's lock item must count what is stored.
docs/strategies/lock_table.md#audit-and-repair
"""
from booking.dynamo.access import ConditionFailed, Table
from booking.dynamo.expressions import Actions, attr, projection
from booking.dynamo.expressions import ConditionCheck, Members, Update
from booking.models import CAPACITY_QUOTA, Event
from booking.strategies import audit
from booking.strategies.base import AGAIN, OneItemPerPerson
from booking.strategies.holds import held_seats
from booking.strategies.lock_table.locks import NEW_ITEM, lock_key

VERSION = attr("version")
EVENT_SIZES = projection("capacity", "quota_capacities", "version")
ORDERS = projection("email", "tickets")


def lock_name(quota: str) -> str:
    """How the audit and the repair name a quota's lock item."""
    return "lock item" if quota == CAPACITY_QUOTA else f"quota {quota} lock item"


class LockTableAudit(OneItemPerPerson):
    """``Audited`` for the lock items (``locks``)."""

    locks: Table

    def _orders(self, event_id: str) -> dict:
        """E-mail key -> stored tickets (None: one seat) of every registration."""
        return {item["email"]: item.get("tickets") for item in self.registrations_table.query(
            key_condition=attr("event_id").eq(event_id), projection=ORDERS)}

    def audit(self, event: Event) -> list:
        locks = {quota: self.locks.get(lock_key(event.id, quota))
                 for quota in event.quota_capacities()}
        orders = self._orders(event.id)
        seats = audit.seats_taken(event, orders.values())
        for quota, lock in locks.items():  # waiting-list holds take seats too
            seats += held_seats(lock, quota=quota)
        lock, taken = locks[CAPACITY_QUOTA], seats[CAPACITY_QUOTA]
        found = audit.capacity_violation(event.id, event.capacity, taken)
        if lock is None:
            found.append(audit.Violation(event.id, audit.LOCK_PRESENT, "present", "missing",
                                         "bookings and cancellations fail until it exists"))
        else:
            found += audit.version_violation(event.id, lock, "lock item")
            if lock.get("confirmed_count") != taken:
                found.append(audit.Violation(event.id, audit.COUNTER, taken,
                                             lock.get("confirmed_count"), "lock item count"))
        for quota, size in event.quota_capacities().items():
            item = locks[quota]
            if item is not None and item.get("capacity") != size:
                found.append(audit.Violation(event.id, audit.LOCK_CAPACITY, size,
                                             item.get("capacity"), f"{lock_name(quota)} capacity"))
        counted = {q: (item or {}).get("confirmed_count") for q, item in locks.items()}
        found += audit.quota_violations(event, seats, counted)
        return found + audit.person_violations(event.id, orders)

    def repair(self, event: Event) -> list[str]:
        return [fixed for quota in event.quota_capacities()
                for fixed in self._repair_lock(event, quota)]

    def _repair_lock(self, event: Event, quota: str) -> list[str]:
        key = lock_key(event.id, quota)
        for _ in self.retry.attempts():
            lock = self.locks.get(key)  # read first: its version guards everything after
            current = self.events.get({"event_id": event.id}, projection=EVENT_SIZES)
            if current is None:
                return []
            sizes = {**event.quotas, **(current.get("quota_capacities") or {}),
                     CAPACITY_QUOTA: current["capacity"]}
            size = int(sizes[quota])
            count = (audit.seats_taken(event, self._orders(event.id).values())[quota]
                     + held_seats(lock, quota=quota)[quota])  # holds take seats too
            if lock is None:  # without it no booking can land, so the count cannot move
                try:
                    self.locks.put({**key, "capacity": size, "confirmed_count": count,
                                    "version": 1}, condition=NEW_ITEM)
                except ConditionFailed:
                    return []
                return [f"{lock_name(quota)} recreated with confirmed_count {count}"]
            if audit.version_violation(event.id, lock):
                audit.fix_version(self.locks, key, lock)
                continue
            if lock.get("confirmed_count") == count and lock.get("capacity") == size:
                return []
            fix = (Actions().set("confirmed_count", count).set("capacity", size)
                   .set(VERSION, VERSION.plus(1)))
            members = Members([
                ("lock", Update(self.locks, key, fix, VERSION.eq(lock["version"]))),
                ("event", ConditionCheck(self.events, {"event_id": event.id},
                                         VERSION.eq(current["version"])))])
            # Refused or a conflict: a booking, cancellation or edit landed while counting.
            if self.transact_once(members, written=None, decode=lambda refusal: AGAIN
                                  if refusal.refused_names() else None) is AGAIN:
                continue
            return [f"{lock_name(quota)} confirmed_count {lock.get('confirmed_count')} -> "
                    f"{count}, capacity {lock.get('capacity')} -> {size}"]
        return []
