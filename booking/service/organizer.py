"""Organizer edits: events and registrations page by page, edits with optimistic
locking (version-checked), deletes. Everything it needs is the event catalog."""
import dataclasses
from collections.abc import Callable, Iterable, Iterator
from datetime import datetime
from datetime import timezone as dt_timezone
from typing import Any

from django.utils import timezone

from booking import validation
from booking.service.catalog import EventCatalog
from booking.dynamo import items
from booking.dynamo.access import ConditionFailed
from booking.dynamo.expressions import Actions, Condition, all_of, any_of, attr
from booking.errors import InvalidBooking
from booking.models import Event, Registration

# A name search reads at most this many scan pages per page of results.
_SEARCH_READS = 10
_NO_DATE = datetime.max.replace(tzinfo=dt_timezone.utc)


def _within(organizers: list, event_ids: list) -> Condition | None:
    """The filter for events of ``organizers`` or among ``event_ids`` (None: nothing)."""
    parts = ([attr("organizer").is_in(*organizers)] if organizers else []) + (
        [attr("event_id").is_in(*event_ids)] if event_ids else [])
    return any_of(parts) if parts else None


def _by_start(event: Event) -> tuple:
    """Soonest first; events without a date last."""
    return (event.starts_at or _NO_DATE, event.name.casefold())


class OrganizerEdits:
    """``capacity_changed(event_id)`` runs after an edit that set the capacity (the service
    offers a freed seat to the first in line)."""

    def __init__(self, catalog: EventCatalog,
                 capacity_changed: Callable[[str], object] = lambda event_id: None) -> None:
        self.catalog = catalog
        self.events = catalog.events
        self.capacity_changed = capacity_changed

    def events_page(self, *, start_key: dict | None = None, limit: int = 25, search: str = "",
                    when: str = "", organizers: Any = None, event_ids: Iterable[str] = ()) -> tuple[list[Event], dict | None]:
        """One page of events, soonest first within the page, and the key that continues
        after it (or None).

        A Scan with Limit and ExclusiveStartKey: never the whole table (DynamoDB keeps no
        order across a table's partitions, so only an index could sort all events; within
        a page they are sorted by start). ``search`` keeps names containing it, ignoring
        case (``contains`` on the stored case-folded name; events stored before that
        attribute existed match on the name as written); ``when`` is ``upcoming`` (or no
        date yet) or ``past``. A filtered page reads at most ``_SEARCH_READS`` scan pages
        per call, so it may hold fewer events.

        ``organizers`` (slugs; None: every organizer) and ``event_ids`` keep the events
        of those organizers and those events: what the asker may see, decided by the
        entry point (``booking/organizers/rights.py``).
        """
        clauses: list[Condition] = []
        if organizers is not None:
            owned = _within(sorted(organizers), sorted(event_ids))
            if owned is None:
                return [], None
            clauses.append(owned)
        if search:
            clauses.append(attr("name_folded").contains(search.casefold()) | (
                attr("name_folded").not_exists() & attr("name").contains(search)))
        if when in ("upcoming", "past"):
            now = timezone.now().astimezone(dt_timezone.utc).isoformat()
            starts = attr("starts_at")
            clauses.append(starts.ge(now) | starts.is_type("NULL") | starts.not_exists()
                           if when == "upcoming" else starts.lt(now))
        found, key = [], start_key
        for _ in range(_SEARCH_READS if clauses else 1):
            options: dict[str, Any] = {
                "start_key": key, "limit": limit, "projection": items.EVENT_PROJECTION}
            if clauses:
                page, key = self.events.filtered_scan_page(filter=all_of(clauses), **options)
            else:
                page, key = self.events.scan_page(**options)
            found.extend(page)
            if len(found) >= limit or key is None:
                break
        if len(found) > limit:
            found = found[:limit]
            key = {"event_id": found[-1]["event_id"]}  # any item's key can continue a scan
        events = [items.event_from_item(item) for item in found]
        if organizers is not None:  # the filter above, checked again on the records
            events = [e for e in events if e.organizer in organizers or e.id in event_ids]
        return sorted(events, key=_by_start), key

    def assign_organizer(self, organizer: str) -> list[str]:
        """Give every event stored without an organizer to ``organizer``; return their ids.

        Each write is conditional on the event still having none, so running it again (or
        two at once) changes nothing already assigned.
        """
        organizer = validation.clean_organizer(organizer)
        if not organizer:
            raise InvalidBooking("Name the organizer.", field="organizer")
        assigned = []
        for item in self.events.scan(projection="event_id, organizer"):
            if item.get("organizer"):
                continue
            try:
                self.events.update({"event_id": item["event_id"]},
                                   Actions().set("organizer", organizer),
                                   condition=attr("event_id").exists()
                                   & attr("organizer").not_exists())
            except ConditionFailed:
                continue  # deleted or assigned meanwhile
            self.catalog.forget(item["event_id"])
            assigned.append(item["event_id"])
        return assigned

    def update_event(self, event_id: str, *, expected_version: int, name: str | None = None,
                     capacity: int | None = None, starts_at: Any = None, ends_at: Any = None,
                     time_zone: str | None = None, description: str | None = None,
                     venue: str | None = None, quotas: dict[str, int] | None = None,
                     max_per_order: int | None = None,
                     ticket_descriptions: dict[str, str] | None = None, ticket_types: Any = None,
                     ticket_labels: dict[str, str] | None = None) -> Event:
        """Apply an organizer's edit of the event as read at ``expected_version``; return it.

        Only the given fields change (``starts_at=""`` clears the start, ``ends_at=""``
        the end). Times without an offset are read in the event's zone (the new one, if
        ``time_zone`` is given); the end is checked against the start it will have. The write happens
        only if the event is still at ``expected_version`` and bumps it (version-checked), so an
        edit based on a stale read never overwrites a newer change. A capacity change goes
        through the event's strategy, atomically with that check; it never drops a
        registration. ``quotas`` resizes further quotas (name -> seats; docs/orders.md) the
        same way, each never below the seats it has confirmed or held. ``max_per_order``
        changes the seats one order may hold on an event that already sells several per
        order (from 2 up: an event created for one seat per order keeps it, since its
        bookings are stored that way); ``ticket_descriptions`` replaces the types' sentences.
        ``ticket_types`` (type -> further quotas, as at creation) adds types to an event
        that already sells them: every existing type must be given as it is (none is
        removed or moved to other quotas, since bookings may hold it), a new one counts
        against the capacity and existing quotas only, and the write is the same
        version-checked one. ``ticket_labels`` replaces the labels (docs/admin.md).

        Raises ``InvalidBooking`` (nothing stored; ``field`` names the input, including a
        capacity below the confirmed count or beyond the strategy's limit, and ``quotas``
        for an unknown quota, a size that is not a whole number from 0 to the strategy's
        limit, or one below what the quota has confirmed or held, naming it and the count),
        ``EventNotFound``, ``StaleEdit`` (re-read, let the organizer re-apply), or
        ``BookingContention``.
        """
        event = self.catalog.get_event(event_id)
        if isinstance(expected_version, bool) or not isinstance(expected_version, int):
            raise InvalidBooking("This form is out of date. Reload the page.", field="version")
        changes: dict[str, object] = {}
        if name is not None:
            changes["name"] = validation.clean_event_name(name)
            changes["name_folded"] = validation.clean_event_name(name).casefold()
        zone_name: str | None = event.time_zone
        if time_zone is not None:
            zone_name = changes["time_zone"] = validation.clean_time_zone(
                time_zone, default=self.catalog.default_time_zone)
        start = event.starts_at
        if starts_at is not None:
            start = validation.clean_starts_at(starts_at, time_zone=zone_name)
            changes["starts_at"] = start.isoformat() if start else None
        if ends_at is not None or (starts_at is not None and event.ends_at is not None):
            end = validation.clean_ends_at(event.ends_at if ends_at is None else ends_at,
                                           starts_at=start, time_zone=zone_name)
            changes["ends_at"] = end.isoformat() if end else None
        if description is not None:
            changes["description"] = validation.clean_description(description)
        if venue is not None:
            changes["venue"] = validation.clean_venue(venue)
        strategy = self.catalog.strategies[event.strategy]
        shape = event
        if max_per_order is not None and max_per_order != event.max_per_order:
            per_order = self._clean_new_max_per_order(max_per_order, event)
            changes["max_per_order"] = per_order
            shape = dataclasses.replace(shape, max_per_order=per_order)
        types = event.ticket_types
        if ticket_types is not None:
            types = self._clean_added_types(ticket_types, event)
            if types != event.ticket_types:
                changes["ticket_types"] = {name: list(q) for name, q in types.items()}
                shape = dataclasses.replace(shape, ticket_types=types)
        if ticket_descriptions is not None:
            changes["ticket_descriptions"] = validation.clean_ticket_descriptions(
                ticket_descriptions, ticket_types=types) or None
        if ticket_labels is not None:
            changes["ticket_labels"] = validation.clean_ticket_labels(
                ticket_labels, names={**types, **event.quotas}) or None
        if capacity is not None:
            capacity = self.catalog.clean_capacity(capacity, event.strategy)
            shape = dataclasses.replace(shape, capacity=capacity)
        if shape is not event:
            strategy.check_order_shape(shape)
        sizes = None if quotas is None else self._clean_quota_sizes(
            quotas, event, strategy.max_capacity)
        strategy.change_capacity(
            event, expected_version=expected_version, changes=changes,
            # Unchanged capacity: the value read now is the one at expected_version, or the
            # version check refuses the write.
            capacity=event.capacity if capacity is None else capacity, quotas=sizes)
        if capacity is not None:
            self.capacity_changed(event.id)
        return self.catalog.get_event(event.id)

    @staticmethod
    def _clean_added_types(value: Any, event: Event) -> dict:
        """The event's types with those added (``InvalidBooking(field="ticket_types")``)."""
        if not event.offers_orders:
            raise InvalidBooking(
                "Ticket types can be added only to an event created with ticket types: this "
                "event's bookings are stored as single seats.", field="ticket_types")
        types = validation.clean_ticket_types(value, quotas=event.quotas)
        for name, quotas in event.ticket_types.items():
            if name not in types:
                raise InvalidBooking(
                    f"The ticket type {event.label(name)} cannot be removed: bookings may "
                    "hold it.", field="ticket_types")
            if types[name] != quotas:
                raise InvalidBooking(
                    f"The ticket type {event.label(name)} keeps the quotas it counts "
                    "against: bookings may hold it.", field="ticket_types")
        return types

    @staticmethod
    def _clean_new_max_per_order(value: Any, event: Event) -> int:
        """A new "seats per order" (``InvalidBooking(field="max_per_order")``)."""
        value = validation.clean_max_per_order(value)
        if event.max_per_order == 1 or value == 1:
            raise InvalidBooking(
                "Seats per order can change between 2 and more only: an event created for one "
                "seat per order keeps one, and one with several keeps at least 2, because its "
                "bookings are stored that way.", field="max_per_order")
        return value

    @staticmethod
    def _clean_quota_sizes(quotas: dict[str, int] | None, event: Event, max_capacity: int) -> dict[str, int]:
        """New sizes of ``event``'s further quotas (``InvalidBooking(field="quotas")``)."""
        if not event.quotas:
            raise InvalidBooking("This event has no quotas besides its capacity: change "
                                 "the capacity instead.", field="quotas")
        sizes = validation.clean_quotas(quotas, max_capacity=max_capacity)
        unknown = sorted(set(sizes) - set(event.quotas))
        if unknown:
            raise InvalidBooking(f"This event has no quota {unknown[0]!r} (its quotas: "
                                 f"{', '.join(sorted(event.quotas))}).", field="quotas")
        return sizes

    def delete_event(self, event_id: str) -> None:
        """Delete the event with its registrations and the strategy's slots or lock item.

        The event becomes unbookable first; repeating an interrupted delete finishes it.
        Raises ``EventNotFound``.
        """
        event = self.catalog.get_event(event_id)
        self.catalog.strategies[event.strategy].delete(event)
        self.catalog.forget(event.id)

    def iter_registrations(self, event_id: str, *, search: str = "") -> Iterator[Registration]:
        """The event's registrations in e-mail order, read lazily; ``search`` matches name or e-mail."""
        event_id = validation.clean_event_id(event_id)
        needle = search.strip().casefold()
        for registration in self.catalog.strategy_for(event_id).registrations(event_id):
            if not needle or needle in registration.email or needle in registration.name.casefold():
                yield registration

    def registrations_page(self, event_id: str, *, after: str | None = None, limit: int = 50,
                           search: str = "", order: str = "email") -> tuple[list[Registration], object]:
        """Up to ``limit`` registrations and the next page's cursor (None on the last page).

        ``order="email"``: after the e-mail ``after``. ``order="time"`` (oldest first) or
        ``"-time"`` (newest first): the event's registrations are read (one query of the
        event's own items, never a table scan), sorted, and ``after`` is an offset.
        """
        if order in ("time", "-time"):
            found = sorted(self.iter_registrations(event_id, search=search),
                           key=lambda r: (r.registered_at, r.email), reverse=order == "-time")
            offset = after if isinstance(after, int) and after > 0 else 0
            page = found[offset:offset + limit]
            return page, offset + limit if offset + limit < len(found) else None
        page = []
        for registration in self.iter_registrations(event_id, search=search):
            if after is not None and registration.email <= after:
                continue
            if len(page) == limit:
                return page, page[-1].email
            page.append(registration)
        return page, None
