"""Access codes: create, list and revoke an event's codes; the rider a booking with a code
carries; the audit of uses against the orders holding each code.

A code's use is counted inside the order's own write (``booking/exactly_once/access_codes.py``);
this module only writes codes and reads them. docs/access-codes.md.
"""
import re
import secrets
from datetime import datetime
from datetime import timezone as dt_timezone

from django.utils import timezone

from booking.dynamo.access import ConditionFailed, Store, Table
from booking.dynamo.errors import TransactionCancelled
from booking.dynamo.tables import ACCESS_CODES
from booking.errors import InvalidAccessCode, InvalidBooking
from booking.exactly_once.access_codes import (AccessCodeReturn, AccessCodeUse, code_key,
                                               now_ms, why_refused)
from booking.exactly_once.request_log import RequestLog
from booking.models import REJECTED, AccessCode, Event
from booking.service.catalog import EventCatalog
from booking.service.reserved_seats import ReservedSeats
from booking.strategies.audit import Violation

# Generated codes: no 0/O, 1/I/L, so a code read aloud or off paper is typed right.
ALPHABET = "ABCDEFGHJKMNPQRSTUVWXYZ23456789"
GENERATED_LENGTH = 8  # two groups of four: 31**8, about 8.5e11 codes per event
CODE_PATTERN = re.compile(r"^[A-Z0-9][A-Z0-9-]{2,31}$")
# Codes created in one call are written in one transaction (all or none): its limit.
MAX_CODES_PER_CALL = 100
MAX_USES_LIMIT = 100_000
MAX_RESERVED = 1000  # seats reserved per code
USES_INVARIANT = "access_code_uses"


def generate_code() -> str:
    chars = "".join(secrets.choice(ALPHABET) for _ in range(GENERATED_LENGTH))
    return f"{chars[:4]}-{chars[4:]}"


def normalize_code(value) -> str:
    """A code as stored: trimmed, in capitals (codes are case-insensitive)."""
    if not isinstance(value, str):
        raise InvalidAccessCode()
    code = value.strip().upper()
    if not CODE_PATTERN.match(code):
        raise InvalidAccessCode()
    return code


def clean_new_code(value) -> str:
    """A code an organizer gives: 3-32 letters, digits and '-' (any case)."""
    code = value.strip().upper() if isinstance(value, str) else ""
    if not CODE_PATTERN.match(code):
        raise InvalidBooking("A code is 3 to 32 letters, digits or '-', starting with a letter "
                             "or digit.", field="code")
    return code


def _whole(value, *, field: str, low: int, high: int, what: str) -> int:
    if isinstance(value, bool) or not isinstance(value, int) or not low <= value <= high:
        raise InvalidBooking(f"{what} must be a whole number from {low} to {high:,}.",
                             field=field)
    return value


def code_item(code: AccessCode) -> dict:
    created = code.created_at or timezone.now()
    item: dict = {"event_id": code.event_id, "code": code.code, "max_uses": code.max_uses,
                  "uses": code.uses, "created_at": created.isoformat(),
            "reserved": {}}  # hold key -> its ref, per seat still reserved for the code
    if code.valid_until is not None:
        item["valid_until"] = int(code.valid_until.timestamp() * 1000)
    if code.ticket_types:
        item["ticket_types"] = list(code.ticket_types)
    if code.reserved_seats:
        item["reserved_seats"] = code.reserved_seats
    return item


def code_from_item(item: dict) -> AccessCode:
    until, revoked = item.get("valid_until"), item.get("revoked_at")
    return AccessCode(
        event_id=item["event_id"], code=item["code"], max_uses=int(item["max_uses"]),
        uses=int(item.get("uses", 0)),
        valid_until=datetime.fromtimestamp(until / 1000, dt_timezone.utc) if until else None,
        ticket_types=tuple(item.get("ticket_types") or ()),
        reserved_seats=int(item.get("reserved_seats", 0)),
        revoked_at=datetime.fromisoformat(revoked) if revoked else None,
        created_at=datetime.fromisoformat(item["created_at"]) if item.get("created_at") else None)


class AccessCodes(ReservedSeats):
    """An event's access codes in ``ACCESS_CODES``, beside the catalog's events."""

    def __init__(self, *, store: Store, catalog: EventCatalog, requests: RequestLog):
        self.table: Table = store.table(ACCESS_CODES)
        self.store = store
        self.catalog = catalog
        self.requests = requests

    # --- writing codes ------------------------------------------------------------------
    def create(self, event_id, *, count=1, codes=None, max_uses=1, valid_until=None,
               ticket_types=None, reserved_seats=0) -> list[AccessCode]:
        """Create ``codes`` (given) or ``count`` generated ones, all or none (a given code
        the event already has: ``InvalidBooking`` with ``field="code"``, nothing stored)."""
        event = self.catalog.get_event(event_id)
        given = codes is not None
        names = [clean_new_code(c) for c in (codes or [])] if given else None
        if given and not names:
            raise InvalidBooking("Give at least one code.", field="code")
        count = len(names) if names else _whole(count, field="count", low=1,
                                                high=MAX_CODES_PER_CALL, what="The number of codes")
        if count > MAX_CODES_PER_CALL:
            raise InvalidBooking(f"Create at most {MAX_CODES_PER_CALL} codes at once.",
                                 field="code")
        if names and len(set(names)) != len(names):
            raise InvalidBooking("A code is given twice.", field="code")
        max_uses = _whole(max_uses, field="max_uses", low=1, high=MAX_USES_LIMIT,
                          what="Uses per code")
        until = self._clean_until(valid_until)
        types = self._clean_types(event, ticket_types)
        reserved_seats = _whole(reserved_seats or 0, field="reserved_seats", low=0,
                                high=MAX_RESERVED, what="Reserved seats")
        seat = self._reserved_order(event, types) if reserved_seats else None
        now = timezone.now()
        made = [AccessCode(event_id=event.id, code=name, max_uses=max_uses, valid_until=until,
                           ticket_types=types, created_at=now)
                for name in (names or [generate_code() for _ in range(count)])]
        try:
            self.store.transact_write([("Put", self.table.put_op(
                code_item(code), condition="attribute_not_exists(max_uses)")) for code in made])
        except TransactionCancelled as cancelled:
            if cancelled.conflict:
                raise
            taken = [code.code for code, reason in zip(made, cancelled.reasons)
                     if reason.old_item is not None]
            raise InvalidBooking(f"This event already has the code {', '.join(taken)}."
                                 if given and taken else
                                 "Please try again.", field="code") from None
        if seat is not None:
            made = self._reserve(event, made, seat, reserved_seats)
        return made

    def revoke(self, event_id, code) -> AccessCode:
        """Revoke ``code``: no further order may use it (orders holding it keep it); the
        seats still reserved for it return to sale."""
        event = self.catalog.get_event(event_id)
        code = normalize_code(code)
        try:
            item = self.table.update(
                code_key(event.id, code), "SET revoked_at = if_not_exists(revoked_at, :at)",
                condition="attribute_exists(max_uses)",
                values={":at": timezone.now().isoformat()}, return_values="ALL_NEW")
        except ConditionFailed:
            raise InvalidAccessCode() from None
        item = item or {}
        self._release(event, code, item.get("reserved") or {}, int(item.get("reserved_until", 0)))
        return code_from_item(self.table.get(code_key(event.id, code)) or item)

    def _clean_until(self, value) -> datetime | None:
        if value in (None, ""):
            return None
        if isinstance(value, str):
            try:
                value = datetime.fromisoformat(value)
            except ValueError:
                raise InvalidBooking("Give the end of validity as an ISO date and time.",
                                     field="valid_until") from None
        if not isinstance(value, datetime):
            raise InvalidBooking("Give the end of validity as a date and time.",
                                 field="valid_until")
        if value.tzinfo is None:
            value = timezone.make_aware(value, dt_timezone.utc)
        return value.astimezone(dt_timezone.utc)

    @staticmethod
    def _clean_types(event: Event, value) -> tuple:
        if value in (None, "", [], ()):
            return ()
        if isinstance(value, str):
            value = [value]
        if not isinstance(value, (list, tuple)):
            raise InvalidBooking("Give a list of ticket types.", field="ticket_types")
        unknown = [t for t in value if t not in event.ticket_types]
        if unknown:
            raise InvalidBooking(f"{str(unknown[0])[:40]!r} is not a ticket type of this event "
                                 f"(types: {', '.join(event.ticket_types)}).",
                                 field="ticket_types")
        return tuple(sorted(set(value)))

    # --- reading ------------------------------------------------------------------------
    def of_event(self, event_id) -> list[AccessCode]:
        """Every code of the event with its uses, in code order."""
        return self._codes(self.catalog.get_event(event_id).id)

    def _codes(self, event_id: str) -> list[AccessCode]:
        return [code_from_item(item) for item in self.table.query(
            key_condition="event_id = :e", values={":e": event_id})]

    def get(self, event_id, code) -> AccessCode | None:
        item = self.table.get(code_key(event_id, normalize_code(code)))
        return code_from_item(item) if item else None

    def unlocks(self, event_id, code) -> tuple[str, ...]:
        event = self.catalog.event_for(event_id)
        try:
            found = self.get(event.id, code)
        except InvalidAccessCode:
            return ()
        if found is None or found.status(timezone.now()) != "valid":
            return ()
        return tuple(t for t in event.code_only_types if found.unlocks(t))

    def check(self, event_id, code, tickets: dict[str, int]) -> None:
        """Raise what a booking of ``tickets`` with ``code`` would be refused for by the
        code (``InvalidAccessCode``, ``AccessCodeUsedUp``), told with a form's other errors
        before any write; one read, nothing stored. The booking's own write still decides."""
        event = self.catalog.event_for(event_id)
        item = self.table.get(code_key(event.id, normalize_code(code)))
        types, now = tuple(sorted(tickets)), now_ms()
        usable = item is not None and "revoked_at" not in item and not (
            "valid_until" in item and int(item["valid_until"]) <= now) and not (
            item.get("ticket_types") and any(t not in item["ticket_types"] for t in types)) \
            and int(item.get("uses", 0)) < int(item["max_uses"])
        if not usable:
            raise why_refused(item, types, now, {t: event.label(t) for t in types})

    # --- bookings -----------------------------------------------------------------------
    def use(self, event: Event, access_code, tickets: dict[str, int]) -> AccessCodeUse | None:
        """The rider of a booking of ``tickets`` with ``access_code`` (None: no code). A
        code-only type booked without a code is refused here (``InvalidAccessCode``,
        nothing sent)."""
        if access_code in (None, ""):
            locked = [t for t in tickets if t in event.code_only_types]
            if locked:
                raise InvalidAccessCode("These tickets need an access code.")
            return None
        return AccessCodeUse(self.table, event.id, normalize_code(access_code),
                             tuple(sorted(tickets)), now_ms(),
                             tuple((t, event.label(t)) for t in sorted(tickets)))

    def giving_back(self) -> AccessCodeReturn:
        """The rider of a cancellation: a whole order's use of its code given back."""
        return AccessCodeReturn(self.table)

    # --- audit and repair ---------------------------------------------------------------
    def _holders(self, event: Event) -> dict[str, int]:
        strategy = self.catalog.strategies[event.strategy]
        held: dict[str, int] = {}
        for registration in strategy.registrations(event.id):
            if registration.access_code and registration.status != REJECTED:
                held[registration.access_code] = held.get(registration.access_code, 0) + 1
        return held

    def audit(self, event: Event) -> list[Violation]:
        """Each code whose ``uses`` is not the number of orders holding it, or above its
        ``max_uses`` (read consistently; a booking in flight may show as a difference)."""
        held, found = self._holders(event), []
        codes = {c.code: c for c in self._codes(event.id)}
        for name in sorted(set(codes) | set(held)):
            code, orders = codes.get(name), held.get(name, 0)
            if code is None:
                found.append(Violation(event.id, USES_INVARIANT, "a stored code",
                                       f"{orders} orders hold unknown code {name}"))
                continue
            if orders > code.max_uses:
                found.append(Violation(event.id, USES_INVARIANT,
                                       f"at most {code.max_uses} orders hold {name}",
                                       orders, "more orders hold the code than it allows"))
            if code.uses != orders:
                found.append(Violation(event.id, USES_INVARIANT,
                                       f"uses of {name} = {orders} orders", code.uses,
                                       "repair sets uses to the orders holding the code"))
        return found

    def repair(self, event: Event) -> list[str]:
        """Set each code's ``uses`` to the orders holding it, each write conditional on the
        uses read (a derived count; orders are never touched)."""
        held, fixed = self._holders(event), []
        for code in self._codes(event.id):
            orders = held.get(code.code, 0)
            if code.uses == orders:
                continue
            try:
                self.table.update(code_key(event.id, code.code), "SET uses = :orders",
                                  condition="uses = :read",
                                  values={":orders": orders, ":read": code.uses})
            except ConditionFailed:
                continue  # used or given back meanwhile: the next audit tells
            fixed.append(f"access code {code.code} uses {code.uses} -> {orders}")
        return fixed

    def forget_event(self, event_id: str) -> None:
        """Remove every code of a deleted event."""
        self.table.delete_partition(event_id)
