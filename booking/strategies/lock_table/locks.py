"""The lock items of lock_table, one per quota of an event (keyed by the event id, or
``<event id>#<quota>``): their reads and their edits. docs/strategies/lock_table.md
"""
import dataclasses

from booking.dynamo.access import Table
from booking.dynamo.expressions import Actions, attr, projection
from booking.dynamo.expressions import Members, Refusal, Update
from booking.errors import EventNotFound
from booking.models import CAPACITY_QUOTA, Availability, Event
from booking.strategies import event_edits
from booking.strategies.base import OneItemPerPerson, availability_from_batch, now_ms
from booking.strategies.holds import availability_of

VERSION = attr("version")
BUMP = Actions().set(VERSION, VERSION.plus(1))  # every write of a lock item: the repair's check
EXISTS = attr("event_id").exists()
NEW_ITEM = attr("event_id").not_exists()  # an event or lock item not written yet
SEATS = projection("event_id", "capacity", "confirmed_count", "holds", "hold_seats")


def lock_id(event_id: str, quota: str) -> str:
    return event_id if quota == CAPACITY_QUOTA else f"{event_id}#{quota}"


def lock_key(event_id: str, quota: str) -> dict:
    return {"event_id": lock_id(event_id, quota)}


def new_locks(event: Event) -> list[dict]:
    """The lock items a new event needs, the capacity's first."""
    return [{**lock_key(event.id, quota), "capacity": seats, "confirmed_count": 0, "version": 1}
            for quota, seats in event.quota_capacities().items()]


def quota_member(quota: str) -> str:
    """A lock item's name in a transaction."""
    return f"quota:{quota}"


class LockItems(OneItemPerPerson):
    """Availability, capacity edits and deletion over an event's lock items (``locks``)."""

    locks: Table

    availability = availability_from_batch

    def availabilities(self, events: list[Event]) -> dict[str, Availability]:
        """One consistent read of every quota's lock item of every event."""
        keys = [lock_key(event.id, q) for event in events for q in event.quota_capacities()]
        locks = {item["event_id"]: item for item in
                 self.locks.batch_get(keys, projection=SEATS) if item}
        now, found = now_ms(), {}
        for event in (e for e in events if e.id in locks):
            # Each further quota's seats, those held for offers apart, as the capacity's.
            further = {quota: availability_of(lock, now, quota).quotas[CAPACITY_QUOTA]
                       for quota in event.quotas
                       if (lock := locks.get(lock_id(event.id, quota))) is not None}
            found[event.id] = dataclasses.replace(availability_of(locks[event.id], now),
                                                  further=further)
        return found

    def change_capacity(self, event: Event, *, expected_version: int, capacity: int,
                        changes: dict, quotas: dict[str, int] | None = None) -> None:
        """The version check (event item) and every resized quota's count check (its lock
        item) in one transaction."""
        update = event_edits.event_update(expected_version=expected_version, capacity=capacity,
                                          changes=changes, quotas=quotas)
        members = Members([("event", Update(self.events, {"event_id": event.id},
                                            update.expression, update.condition))])
        for quota, size in {CAPACITY_QUOTA: capacity, **(quotas or {})}.items():
            members.add(quota_member(quota), Update(
                self.locks, lock_key(event.id, quota), Actions().set("capacity", size),
                EXISTS & attr("confirmed_count").le(size)))

        def decode(refusal: Refusal) -> None:
            if refusal.refused("event"):
                # The event refused only for a moved version or a missing item: never None.
                raise event_edits.stale_or_missing(  # type: ignore[misc]
                    refusal.old("event"), expected_version)
            for name in refusal.refused_names("quota:"):
                lock, quota = refusal.old(name), name.removeprefix("quota:")
                if lock is None:
                    raise EventNotFound()
                taken = int(lock["confirmed_count"])  # holds are counted in it too
                raise event_edits.below_taken(quota, taken)
            return None

        self.transact(members, written=None, decode=decode)

    def delete(self, event: Event) -> None:
        # The lock items first: without them every booking fails, so nothing new arrives.
        for quota in event.quota_capacities():
            self.locks.delete(lock_key(event.id, quota))
        self.registrations_table.delete_partition(event.id)
        self.events.delete({"event_id": event.id})

    def _require_event(self, event_id: str) -> dict:
        """The capacity's lock item, or ``EventNotFound``."""
        lock = self.locks.get({"event_id": event_id})
        if lock is None:
            raise EventNotFound()
        return lock
