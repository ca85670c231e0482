"""Check-in: passes of orders, check-in lists, scans at the door (``booking/checkin/``).

The service validates what the door is asked, finds the list, and hands the decision to
``Door`` (one write per scan); it adds what a person at the door reads (the ticket type's
label, the attendee's name). ``observers`` are told every decided scan (metrics, webhooks).
"""
import dataclasses
import hashlib
import json
import threading
import time
from collections.abc import Callable
from datetime import datetime, timezone
from typing import Any

from booking import validation
from booking.checkin.cancellation import PassCancellation, cancelled_by
from booking.checkin.door import Door, ListKeyReused, NonceReused, layout_of
from booking.checkin.passes import CANCELLED, VALID, Pass, pass_id, read_short
from booking.checkin.records import (CHOOSE_PASS, DIRECTIONS, ENTRY, MESSAGES, CheckinList,
                                     Conflict, ScanResult, at)
from booking.errors import CheckinListNotFound, InvalidBooking
from booking.models import CAPACITY_QUOTA, Event, Registration
from booking.service.catalog import EventCatalog
from booking.strategies.audit import Violation

NAME_MAX = 100
# The one-click list the admin and the scanner offer for an event without one: every
# ticket type, admitted once (docs/checkin.md).
ENTRANCE_NAME = "Entrance"
GATE_MAX = 60
MAX_LIMIT = 1_000_000
MAX_BATCH = 500
NONCE = validation.REQUEST_ID_PATTERN  # 8-64 letters, digits, '-' and '_'
NAMES_SECONDS = 30.0  # attendees' names are read again after this long (or on a miss)
# An offline scan may be uploaded this long after it was made, and not from the future.
MAX_OFFLINE_AGE = 14 * 86400
MAX_CLOCK_AHEAD = 300
SCAN_FIELDS = frozenset({"code", "direction", "nonce", "scanned_at", "gate"})


class Checkin:
    def __init__(self, *, catalog: EventCatalog, door: Door,
                 registrations: Callable[[str], list[Registration]]) -> None:
        self.catalog = catalog
        self.door = door
        self.registrations = registrations
        self.observers: list[Callable[[CheckinList, ScanResult], None]] = []
        self._names: dict[str, tuple[float, dict[str, str]]] = {}
        self._lock = threading.Lock()
        self._reading = threading.Lock()
        self._expected_seen: dict[str, tuple[float, int]] = {}
        self._references: dict[str, tuple[float, dict[str, list[Registration]]]] = {}

    # --- passes --------------------------------------------------------------------
    def pass_public_key(self, event_id: str) -> str:
        """The event's Ed25519 public key (raw, base64url): scanners check codes with it."""
        return self.door.signer.public_key(validation.clean_event_id(event_id))

    def pass_public_keys(self, event_id: str) -> list[str]:
        """The event's public keys: the signing one, then those of SECRET_KEY_FALLBACKS."""
        return self.door.signer.public_keys(validation.clean_event_id(event_id))

    def passes(self, registration: Registration) -> list[Pass]:
        """Every pass of the order, seat 1 first, with its state at the door."""
        if not registration.is_confirmed:
            return []
        order = self.door.order_item(registration.registration_id)
        return self._passes(registration, order, with_admissions=True)

    def issued_passes(self, registration: Registration) -> list[Pass]:
        """The order's passes as its booking issued them (no read: all valid)."""
        return self._passes(registration, {}, with_admissions=False) \
            if registration.is_confirmed else []

    def passes_of(self, registrations: list[Registration]) -> dict[str, list[Pass]]:
        """Passes by registration id for many orders (one batch of reads, no admissions)."""
        orders = self.door.order_items(r.registration_id for r in registrations)
        return {r.registration_id: self._passes(r, orders.get(r.registration_id, {}),
                                                with_admissions=False)
                for r in registrations if r.is_confirmed}

    def _passes(self, registration: Registration, order: dict, *,
                with_admissions: bool) -> list[Pass]:
        layout = layout_of(order, registration.tickets)
        gone = set(order.get("cancelled", ()))
        firsts = {}
        if with_admissions and order.get("admitted"):
            firsts = self.door.first_admissions(
                registration.registration_id, self.door.lists(registration.event_id),
                len(layout))
        signer = self.door.signer
        event = self.catalog.event_for(registration.event_id)  # labels as typed (remembered)
        found = []
        for n, ticket_type in enumerate(layout, start=1):
            pid = pass_id(registration.registration_id, n)
            cancelled = order.get("cancelled_all") or str(n) in gone
            first = firsts.get(pid)
            found.append(Pass(pass_id=pid, registration_id=registration.registration_id,
                              event_id=registration.event_id, ticket_type=ticket_type,
                              ticket_label=event.label(ticket_type),
                              code=signer.code(registration.event_id, pid, ticket_type),
                              status=CANCELLED if cancelled else VALID,
                              admitted_at=at(first[0]) if first else None,
                              gate=(first[1] or None) if first else None))
        return found

    def cancellation_rider(self, event_id: str, request_id: str, whole: Registration | None,
                           seats: tuple[int, ...] | None = None) -> PassCancellation:
        """The rider a cancellation carries (``whole``: the order as read, for a part;
        ``seats``: the seats named to give up, else its unused ones are chosen)."""
        return PassCancellation(self.door, request_id, whole, seats)

    def release_of(self, whole: Registration, pass_ids: Any, request_id: str
                   ) -> tuple[dict[str, int] | None, tuple[int, ...] | None]:
        """What cancelling the passes ``pass_ids`` of the order ``whole`` gives up: (its
        tickets, its seat numbers), or (None, None) when they are every seat it has left
        (the whole order). ``InvalidBooking`` for none, or for a pass that is not the
        order's or is cancelled (except by this very request: a repeat answers the same)."""
        if not isinstance(pass_ids, (list, tuple)) or not pass_ids or not all(
                isinstance(p, str) for p in pass_ids):
            raise InvalidBooking("Choose at least one pass to cancel.", field="passes")
        order = self.door.order_item(whole.registration_id)
        layout = layout_of(order, whole.tickets)
        gone = set(order.get("cancelled", ())) - {
            p.rsplit("-", 1)[1] for p in order.get(f"by:{request_id}", ())}
        by_id = {pass_id(whole.registration_id, n): n for n in range(1, len(layout) + 1)
                 if str(n) not in gone}
        if any(p not in by_id for p in pass_ids):
            raise InvalidBooking("That pass is not one of this order's passes left to "
                                 "cancel.", field="passes")
        seats = tuple(sorted({by_id[p] for p in pass_ids}))
        if len(seats) == len(by_id):
            return None, None
        tickets: dict[str, int] = {}
        for seat in seats:
            tickets[layout[seat - 1]] = tickets.get(layout[seat - 1], 0) + 1
        return tickets, seats

    def cancelled_passes(self, removed: Registration, request_id: str) -> tuple[str, ...]:
        """The passes ``removed`` (a cancellation's answer) cancelled; a whole one-seat
        order's without a read (its one pass cannot have been cancelled before)."""
        if removed.part_request_id is None and removed.seats == 1:
            return (pass_id(removed.registration_id, 1),)
        order = self.door.order_item(removed.registration_id)
        return tuple(cancelled_by(removed, order, request_id))

    # --- lists ---------------------------------------------------------------------
    def create_checkin_list(self, event_id: str, *, name: str, ticket_types: Any = None,
                            allow_reentry: bool = False, occupancy_limit: int | None = None,
                            opens_at: Any = None, closes_at: Any = None,
                            request_id: str | None = None) -> CheckinList:
        """A new list (``request_id``: a repeat answers the same list; the same id with
        other settings is ``InvalidBooking``)."""
        event = self.catalog.get_event(validation.clean_event_id(event_id))
        name = validation.clean_text(name, field="name", label="Name", max_length=NAME_MAX)
        types = _clean_types(ticket_types, event.ticket_types)
        if not isinstance(allow_reentry, bool):
            raise InvalidBooking("Re-entry must be true or false.", field="allow_reentry")
        limit = _clean_limit(occupancy_limit)
        opens_at = _clean_time(opens_at, "opens_at")
        closes_at = _clean_time(closes_at, "closes_at")
        if opens_at and closes_at and closes_at <= opens_at:
            raise InvalidBooking("The list must close after it opens.", field="closes_at")
        settings = [event.id, name, types, allow_reentry, limit,
                    opens_at and opens_at.timestamp(), closes_at and closes_at.timestamp()]
        try:
            return self.door.create_list(
                event.id, name=name, ticket_types=types, allow_reentry=allow_reentry,
                occupancy_limit=limit, opens_at=opens_at, closes_at=closes_at,
                request_id=validation.clean_request_id(request_id) if request_id else None,
                fingerprint=hashlib.sha256(json.dumps(settings).encode()).hexdigest()[:32])
        except ListKeyReused:
            raise InvalidBooking("This key was already used to create a different list.",
                                 field="Idempotency-Key") from None

    def checkin_lists(self, event_id: str) -> list[CheckinList]:
        return self.door.lists(validation.clean_event_id(event_id))

    def find_list(self, list_id: str) -> CheckinList:
        """The list (without counts), or ``CheckinListNotFound``."""
        if not isinstance(list_id, str) or not validation.EVENT_ID_PATTERN.match(list_id):
            raise CheckinListNotFound()
        found = self.door.get_list(list_id)
        if found is None:
            raise CheckinListNotFound()
        return found

    def checkin_list(self, list_id: str) -> CheckinList:
        """The list with its live counts: expected, admitted, inside now, conflicts. The
        counts are the list's counter items (``Door.counts``) and the event's confirmed
        seats (``expected``): a few reads, however many people are booked."""
        found = self.find_list(list_id)
        counts = self.door.counts(found)
        if found.occupancy_limit is not None:
            counts["inside"] = self.door.room_counter(found.id)
        return dataclasses.replace(found, expected=self._expected(found),
                                   admitted=counts["admitted"], inside=counts["inside"],
                                   conflicts=counts["conflicts"])

    def _expected(self, found: CheckinList) -> int:
        """Valid passes the list admits: the event's confirmed seats (one pass a seat) for a
        list of every ticket type, or the seats of a quota exactly its types draw on; else
        counted from the orders (one read per order, kept ``NAMES_SECONDS``)."""
        event = self.catalog.event_for(found.event_id)
        quota = _quota_of(found, event.ticket_types)
        if quota is not None:
            seats = self.catalog.strategy_for(event.id).availability(event)
            return seats.quotas[quota].confirmed if quota in seats.quotas else 0
        now = time.monotonic()
        with self._lock:
            read_at, expected = self._expected_seen.get(found.id, (0.0, 0))
        if now - read_at < NAMES_SECONDS:
            return expected
        expected = sum(len([p for p in passes if p.is_valid and found.admits_type(p.ticket_type)])
                       for passes in self.passes_of(self.registrations(found.event_id)).values())
        with self._lock:
            if len(self._expected_seen) > 200:
                self._expected_seen.clear()
            self._expected_seen[found.id] = (now, expected)
        return expected

    # --- scans ---------------------------------------------------------------------
    def scan(self, list_id: str, code: str, *, direction: str = ENTRY, nonce: str | None = None,
             gate: str | None = None) -> ScanResult:
        """One scan decided now, stamped with the server's time (never the client's)."""
        found = self.find_list(list_id)
        cleaned = self._clean_scan(code, direction, nonce, gate)
        return self._scan(found, *cleaned, scanned_at=None, offline=False)

    def scan_batch(self, list_id: str, scans: list) -> list[ScanResult]:
        """An offline scanner's queue: each scan (``code``, ``direction``, ``nonce``,
        ``scanned_at``, ``gate``) decided in the order they were made; the answers in the
        order given. A scan sent again (its nonce) answers as the first time. Every scan is
        checked before any is decided: a batch refused as bad input changed nothing."""
        found = self.find_list(list_id)
        if not isinstance(scans, (list, tuple)) or not scans or len(scans) > MAX_BATCH:
            raise InvalidBooking(f"A batch holds 1 to {MAX_BATCH} scans.", field="scans")
        cleaned = []
        for index, scan in enumerate(scans):
            if not isinstance(scan, dict):
                raise InvalidBooking("Each scan must be an object.", field="scans")
            unknown = sorted(set(scan) - SCAN_FIELDS)
            if unknown:
                raise InvalidBooking(f"Unknown field {unknown[0]!r} in scan {index + 1}.",
                                     field="scans")
            when = self._clean_scanned_at(scan.get("scanned_at"), required=True)
            fields = self._clean_scan(scan.get("code"), scan.get("direction", ENTRY),
                                      scan.get("nonce"), scan.get("gate"))
            cleaned.append((when, index, fields))
        self._refuse_reused_nonces(found, [fields for _, _, fields in cleaned])
        answers: dict[int, ScanResult] = {}
        for when, index, fields in sorted(cleaned, key=lambda entry: (entry[0], entry[1])):
            answers[index] = self._scan(found, *fields, scanned_at=when, offline=True)
        return [answers[index] for index in range(len(scans))]

    def _clean_scan(self, code: Any, direction: Any, nonce: Any, gate: Any) -> tuple:
        """(code, direction, nonce, gate) checked, or ``InvalidBooking``."""
        if direction not in DIRECTIONS:
            raise InvalidBooking("The direction must be \"entry\" or \"exit\".",
                                 field="direction")
        if not isinstance(nonce, str) or not NONCE.match(nonce):
            raise InvalidBooking("A scan needs a nonce: 8-64 letters, digits, '-' or '_'.",
                                 field="nonce")
        if not isinstance(code, str) or not code.strip() or len(code) > 1000:
            raise InvalidBooking("A scan needs the pass's code.", field="code")
        if gate is not None:
            gate = validation.clean_text(gate, field="gate", label="Gate", max_length=GATE_MAX)
        return code.strip(), direction, nonce, gate

    def _refuse_reused_nonces(self, found: CheckinList, scans: list[tuple]) -> None:
        """A nonce used twice in the batch, or already by a scan of another code or
        direction, refuses the whole batch before anything is decided."""
        by_nonce: dict[str, tuple] = {}
        for code, direction, nonce, _ in scans:
            if read_short(code) is not None:
                continue  # stored under its pass's code: its own write tells a reuse
            if by_nonce.setdefault(nonce, (code, direction)) != (code, direction):
                raise InvalidBooking("This nonce was already used for another scan.",
                                     field="nonce")
        if not self.door.nonces_fit(found.id, by_nonce):
            raise InvalidBooking("This nonce was already used for another scan.",
                                 field="nonce")

    def _scan(self, found: CheckinList, code: str, direction: str, nonce: str,
              gate: str | None, *, scanned_at: Any, offline: bool) -> ScanResult:
        short = read_short(code)
        if short is not None:  # a short code or a booking reference: its pass's code
            passes = self._passes_of_short(found, *short)
            if len(passes) > 1:
                return self._choose(found, passes, direction, nonce, gate, offline)
            code = passes[0].code if passes else code  # none: refused as unknown_code
        try:
            result = self.door.scan(found, code, direction=direction, nonce=nonce,
                                    scanned_at=scanned_at, gate=gate, offline=offline)
        except NonceReused:
            raise InvalidBooking("This nonce was already used for another scan.",
                                 field="nonce") from None
        result = self._described(found, result)
        for observer in self.observers:
            observer(found, result)
        return result

    def _passes_of_short(self, found: CheckinList, prefix: str, seat: int | None) -> list[Pass]:
        """The passes a short code (``seat``) or booking reference (None) names on the
        list: looked up among the event's orders (``_orders_by_reference``), never from the
        text itself; a reference of an order with one pass on the list names that one."""
        passes = [p for r in self._orders_by_reference(found.event_id, prefix)
                  for p in self.issued_passes(r) if found.admits_type(p.ticket_type)]
        if seat is not None:
            return [p for p in passes if p.pass_id.rsplit("-", 1)[1] == str(seat)]
        return passes

    def _orders_by_reference(self, event_id: str, prefix: str) -> list[Registration]:
        """The event's confirmed orders whose id starts with ``prefix`` (read again after
        ``NAMES_SECONDS``, or on a miss at most once a second)."""
        now = time.monotonic()
        with self._lock:
            read_at, orders = self._references.get(event_id, (0.0, {}))
        if prefix not in orders and now - read_at >= 1.0 or now - read_at >= NAMES_SECONDS:
            orders = {}
            for registration in self.registrations(event_id):
                if registration.is_confirmed:
                    orders.setdefault(registration.registration_id[:8], []).append(registration)
            with self._lock:
                if len(self._references) > 200:
                    self._references.clear()
                self._references[event_id] = (time.monotonic(), orders)
        return orders.get(prefix, [])

    def _choose(self, found: CheckinList, passes: list[Pass], direction: str, nonce: str,
                gate: str | None, offline: bool) -> ScanResult:
        """A reference of several passes: nothing decided, nothing stored; the passes to
        pick from (their state at the door too)."""
        states = {p.pass_id: p for r in {p.registration_id for p in passes}
                  for p in self.passes(self._registration_of(passes, r))}
        choices = tuple((p.short_code, p.ticket_label, p.code,
                         states.get(p.pass_id, p).status) for p in passes)
        return ScanResult(status=CHOOSE_PASS, list_id=found.id, nonce=nonce,
                          direction=direction, scanned_at=datetime.now(timezone.utc),
                          gate=gate, offline=offline, choices=choices,
                          attendee_name=self._attendee(found.event_id,
                                                       passes[0].registration_id),
                          message=MESSAGES[CHOOSE_PASS])

    def _registration_of(self, passes: list[Pass], registration_id: str) -> Registration:
        orders = self._orders_by_reference(passes[0].event_id, registration_id[:8])
        return next(r for r in orders if r.registration_id == registration_id)

    def _clean_scanned_at(self, value: Any, *, required: bool) -> float:
        if isinstance(value, (int, float)) and not isinstance(value, bool):
            when = float(value)
        elif isinstance(value, datetime):
            if value.tzinfo is None:
                raise InvalidBooking("The scan's time needs a time zone.", field="scanned_at")
            when = value.timestamp()
        elif isinstance(value, str):
            try:
                parsed = datetime.fromisoformat(value.replace("Z", "+00:00"))
            except ValueError:
                raise InvalidBooking("The scan's time is not an ISO 8601 time.",
                                     field="scanned_at") from None
            if parsed.tzinfo is None:
                raise InvalidBooking("The scan's time needs a time zone.", field="scanned_at")
            when = parsed.timestamp()
        else:
            raise InvalidBooking("Each offline scan needs the time it was made."
                                 if required else "The scan's time is not valid.",
                                 field="scanned_at")
        now = time.time()
        if not now - MAX_OFFLINE_AGE <= when <= now + MAX_CLOCK_AHEAD:
            raise InvalidBooking("The scan's time is too far from now.", field="scanned_at")
        return when

    def _described(self, found: CheckinList, result: ScanResult) -> ScanResult:
        if result.pass_id is None:
            return result
        label = self.catalog.event_for(found.event_id).label(result.ticket_type) \
            if result.ticket_type else None
        name = self._attendee(found.event_id, result.pass_id.rsplit("-", 1)[0])
        return dataclasses.replace(result, ticket_label=label, attendee_name=name)

    def _attendee(self, event_id: str, registration_id: str) -> str | None:
        now = time.monotonic()
        with self._lock:
            read_at, names = self._names.get(event_id, (0.0, {}))
        if registration_id in names and now - read_at < NAMES_SECONDS:
            return names[registration_id]
        if now - read_at < 1.0:  # just read: a miss stays a miss for a moment
            return names.get(registration_id)
        with self._reading:  # one read at a time: scans arriving together wait for it
            with self._lock:
                read_at, names = self._names.get(event_id, (0.0, {}))
            if registration_id in names or time.monotonic() - read_at < 1.0:
                return names.get(registration_id)
            names = {r.registration_id: r.name for r in self.registrations(event_id)}
            with self._lock:
                if len(self._names) > 200:
                    self._names.clear()
                self._names[event_id] = (time.monotonic(), names)
        return names.get(registration_id)

    def search_passes(self, list_id: str, text: str, *, limit: int = 20) -> list[tuple[str, Pass]]:
        """(attendee name, pass) of the list's event whose name or e-mail contains
        ``text`` (case-insensitive, at least 2 characters), passes the list admits only:
        the scanner page's search by name."""
        found = self.find_list(list_id)
        text = text.strip().casefold() if isinstance(text, str) else ""
        if len(text) < 2:
            return []
        people = [r for r in self.registrations(found.event_id)
                  if text in r.name.casefold() or text in r.email]
        people.sort(key=lambda r: (r.name.casefold(), r.registration_id))
        passes = self.passes_of(people[:limit])
        return [(r.name, p) for r in people[:limit]
                for p in passes.get(r.registration_id, []) if found.admits_type(p.ticket_type)]

    def roster(self, list_id: str) -> list[tuple[str, Pass]]:
        """(attendee name, pass) of every confirmed order's passes the list admits: the
        scanner's offline look-up of short codes (one read per order)."""
        found = self.find_list(list_id)
        people = [r for r in self.registrations(found.event_id) if r.is_confirmed]
        passes = self.passes_of(people)
        return [(r.name, p) for r in people for p in passes.get(r.registration_id, [])
                if found.admits_type(p.ticket_type)]

    # --- the log, conflicts, audit -------------------------------------------------
    def scan_log(self, list_id: str, *, limit: int | None = None) -> list[ScanResult]:
        found = self.find_list(list_id)
        return [self._described(found, r) for r in self.door.scans(found.id, limit=limit)]

    def checkin_conflicts(self, list_id: str) -> list[Conflict]:
        return self.door.conflicts(self.find_list(list_id).id)

    def audit(self, event: Event) -> list[Violation]:
        """Nobody inside twice, no list over its limit, no pass admitted twice on a list
        without re-entry, each list's counters equal to its items (``check_capacity``)."""
        found: list[Violation] = []
        for lst in self.door.lists(event.id):
            items = self.door.pass_items(lst.id)
            inside = [item for item in items if item.get("state") == "inside"]
            if lst.occupancy_limit is not None:
                counter = self.door.room_counter(lst.id)
                if len(inside) > lst.occupancy_limit:
                    found.append(Violation(event.id, "checkin_room_limit",
                                           f"at most {lst.occupancy_limit} inside {lst.name!r}",
                                           len(inside)))
                if counter != len(inside):
                    found.append(Violation(event.id, "checkin_room_counter",
                                           f"counter of {lst.name!r} = passes inside",
                                           f"{counter} != {len(inside)}"))
            counted = self.door.counts(lst)
            truth = {"admitted": len(items), "inside": len(inside),
                     "conflicts": len(self.door.conflicts(lst.id))}
            if counted != truth:
                found.append(Violation(event.id, "checkin_counts",
                                       f"counts of {lst.name!r} = passes, inside, conflicts",
                                       f"{counted} != {truth}"))
            if not lst.allow_reentry:
                twice = [item["sk"] for item in items if int(item.get("entries", 1)) > 1]
                if twice:
                    found.append(Violation(event.id, "checkin_admitted_once",
                                           f"each pass admitted once on {lst.name!r}",
                                           f"{len(twice)} admitted more than once"))
        return found


def _quota_of(found: CheckinList, ticket_types: dict) -> str | None:
    """The quota whose seats are exactly the passes ``found`` admits: ``capacity`` for a
    list of every type; a quota drawn on by exactly the list's types; else None."""
    if found.ticket_types is None or set(found.ticket_types) >= set(ticket_types):
        return CAPACITY_QUOTA
    drawing: dict[str, set] = {}
    for name, quotas in ticket_types.items():
        for quota in quotas:
            drawing.setdefault(quota, set()).add(name)
    wanted = set(found.ticket_types)
    return next((quota for quota, names in sorted(drawing.items()) if names == wanted), None)


def _clean_types(value: Any, event_types: dict) -> tuple[str, ...] | None:
    if value is None:
        return None
    if not isinstance(value, (list, tuple)) or not value or not all(
            isinstance(v, str) for v in value):
        raise InvalidBooking("Ticket types must be a list of the event's ticket types.",
                             field="ticket_types")
    unknown = [v for v in value if v not in event_types]
    if unknown:
        raise InvalidBooking(f"The event has no ticket type {unknown[0]!r}.",
                             field="ticket_types")
    return tuple(dict.fromkeys(value))


def _clean_limit(value: Any) -> int | None:
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, int) or not 1 <= value <= MAX_LIMIT:
        raise InvalidBooking(f"The occupancy limit must be a whole number from 1 to "
                             f"{MAX_LIMIT}.", field="occupancy_limit")
    return value


def _clean_time(value: Any, field: str) -> datetime | None:
    if value is None:
        return None
    if isinstance(value, str):
        try:
            value = datetime.fromisoformat(value.replace("Z", "+00:00"))
        except ValueError:
            raise InvalidBooking("Not an ISO 8601 time.", field=field) from None
    if not isinstance(value, datetime) or value.tzinfo is None:
        raise InvalidBooking("A time with its time zone is needed.", field=field)
    return value.astimezone(timezone.utc)
