"""Capacity audits and repairs (``check_capacity``): each event's stored data checked
against the invariants by its strategy, derived data fixed under a time-limited lease."""
from collections.abc import Iterator
from typing import Any

from booking import times, validation
from booking.strategies.audit import RepairReport, Violation, fix_version, version_violation
from booking.service.catalog import EventCatalog
from booking.dynamo import items
from booking.dynamo.leases import Leases
from booking.errors import EventNotFound
from booking.models import Event


class Audits:
    """``repair_lease_seconds`` is the default lease of ``repair``; ``checks`` are further
    per-event audits (event -> violations) beside the strategy's own (the waiting list's,
    the access codes'); ``fixes`` further repairs of derived data (event -> what changed)."""

    def __init__(self, *, catalog: EventCatalog, leases: Leases,
                 repair_lease_seconds: float = 300.0, checks: Any = (), fixes: Any = ()) -> None:
        self.catalog = catalog
        self.events = catalog.events
        self.leases = leases
        self.repair_lease_seconds = repair_lease_seconds
        self.checks = tuple(checks)
        self.fixes = tuple(fixes)

    def iter_event_ids(self, *, page_size: int = 100) -> Iterator[str]:
        """Yield every event id page by page (even for event items too damaged to load)."""
        for item in self.events.scan(projection="event_id", page_size=page_size):
            yield item["event_id"]

    def audit(self, event_id: str) -> list[Violation]:
        """Every invariant the event's stored data violates (empty when all hold).

        Raises ``EventNotFound``.
        """
        event, item = self._event_for_audit(event_id)
        found = version_violation(event.id, item) + time_violation(event)
        found += self.catalog.strategies[event.strategy].audit(event)
        for check in self.checks:
            found += check(event)
        return found

    def repair(self, event_id: str, *, lease_seconds: float | None = None) -> RepairReport:
        """Fix the event's derived data under a time-limited lease, then audit it again.

        Registrations are never deleted or invented: what repair cannot fix (overbooking,
        one person under two keys) stays in the report's ``remaining``. Raises
        ``EventNotFound``, or ``LeaseHeld`` while another repair of the event runs.
        """
        event, item = self._event_for_audit(event_id)
        seconds = lease_seconds or self.repair_lease_seconds
        lease = self.leases.acquire(f"repair:{event.id}", seconds=seconds)
        try:
            fixed = []
            if version_violation(event.id, item):
                if fix_version(self.events, {"event_id": event.id}, item):
                    fixed.append(f"event item version {item.get('version')!r} -> 1")
            fixed += self.catalog.strategies[event.strategy].repair(event)
            for fix in self.fixes:
                fixed += fix(event)
        finally:
            self.leases.release(lease)
        return RepairReport(event.id, fixed, self.audit(event.id))

    def _event_for_audit(self, event_id: str) -> tuple[Event, dict]:
        event_id = validation.clean_event_id(event_id)
        item = self.events.get({"event_id": event_id}, projection=items.EVENT_PROJECTION)
        if item is None:
            raise EventNotFound()
        version = item.get("version")
        usable = version if isinstance(version, int) else 0  # reported, not trusted
        return items.event_from_item({**item, "version": usable}), item


TIME_SHOWABLE = "event_time_showable"


def time_violation(event: Event) -> list[Violation]:
    """A stored zone nobody knows, or a start or end that cannot be shown in its zone: the
    pages say "date to be announced" until an organizer sets the time again."""
    bad = [moment for moment in (event.starts_at, event.ends_at)
           if moment is not None and not times.showable(moment, event.time_zone)]
    if not bad:
        return []
    return [Violation(event.id, TIME_SHOWABLE, "a time shown in a known zone",
                      f"{bad[0].isoformat()} in {event.time_zone!r}",
                      "set the event's time zone and start again in the admin")]
