"""Access codes: create, list and revoke an event's codes; the rider a booking with a code
carries; the audit of uses against the orders holding each code.

A code's use is counted inside the order's own write (``booking/exactly_once/access_codes.py``);
this module only writes codes and reads them. docs/access-codes.md.
"""
import hashlib
import json
import re
import secrets
import time
from datetime import datetime
from datetime import timezone as dt_timezone
from typing import Any

from django.utils import timezone

from booking.dynamo.access import ConditionFailed, Store, Table
from booking.dynamo.errors import TransactionCancelled
from booking.dynamo.expressions import Actions, attr, if_not_exists
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


# Words an attacker tries first in organizer-chosen codes (with the event's own name's
# words): a code built of them and a number falls to a short word list.
COMMON_WORDS = frozenset("""
    ACCESS ADMIN ADULT ALUMNI ARTIST ARTISTS BACKSTAGE BIRD BRONZE CHILD CLUB CODE COMPANY
    CONF CONFERENCE CREW DAY DEMO DISCOUNT DOOR EARLY EARLYBIRD ELITE ENTRY EVENT FAMILY
    FESTIVAL FREE FRIEND FRIENDS GALA GATE GOLD GUEST GUESTS HALL HELLO INVITE INVITED
    JUNIOR KIDS LETMEIN LIVE MEDIA MEETUP MEMBER MEMBERS MUSIC NIGHT OFFICE ORGANIZER
    PARTNER PARTNERS PARTY PASS PASSWORD PLATINUM PREMIUM PRESS PRIVATE PROMO QWERTY ROOM
    SALE SCHOOL SECRET SENIOR SHOW SILVER SPEAKER SPEAKERS SPECIAL SPONSOR SPONSORS STAFF
    STAGE STUDENT STUDENTS SUMMIT TEAM TEST TICKET TICKETS TOUR VIP VOLUNTEER VOLUNTEERS
    WEEK WELCOME WORKSHOP YEAR
""".split())
WEAK_BITS = 30  # below this a code is guessable (a generated one has about 39.6)
MIN_CHOSEN_LENGTH = 8


def _run_bits(run: str, words: set[str]) -> float:
    """A rough count of the guesses a run of letters or of digits costs, in bits."""
    if run.isdigit():
        if len(run) == 4 and run[:2] in ("19", "20"):
            return 7.0  # a year
        steps = {int(b) - int(a) for a, b in zip(run, run[1:])}
        return 4.0 if len(steps) == 1 and steps <= {-1, 0, 1} else 3.32 * len(run)
    bits = 0.0
    for word in sorted(words, key=len, reverse=True):
        if len(word) >= 3 and word in run:
            bits += 8.0 * run.count(word)
            run = run.replace(word, "")
    return bits + 4.7 * len(run)


def weak_code_warning(code: str, *, event_name: str = "") -> str | None:
    """Why an organizer-chosen ``code`` (as stored) is easy to guess, or None: shorter than
    8 letters and digits, few different characters, or built of common words, the event's
    name, a year or a run of digits. A warning, not a refusal: the wrong-code limit bounds
    guessing, and some codes are read aloud."""
    chars = code.replace("-", "")
    if len(chars) < MIN_CHOSEN_LENGTH:
        reason = f"it has fewer than {MIN_CHOSEN_LENGTH} letters and digits"
    elif len(set(chars)) < 5:
        reason = "it repeats a few characters"
    else:
        words = set(COMMON_WORDS) | {w for w in re.findall(r"[A-Z]+", event_name.upper())}
        bits = sum(_run_bits(run, words) for run in re.findall(r"[A-Z]+|[0-9]+", code))
        if bits >= WEAK_BITS:
            return None
        reason = "it is made of common words, the event's name or a simple number"
    return (f"The code {code} is easy to guess: {reason}. Anyone can try codes, so a code "
            "that unlocks seats should be generated (leave the code empty), or be at least "
            f"{MIN_CHOSEN_LENGTH} random letters and digits.")


def generate_code() -> str:
    chars = "".join(secrets.choice(ALPHABET) for _ in range(GENERATED_LENGTH))
    return f"{chars[:4]}-{chars[4:]}"


def normalize_code(value: Any) -> str:
    """A code as stored: trimmed, in capitals (codes are case-insensitive)."""
    if not isinstance(value, str):
        raise InvalidAccessCode()
    code = value.strip().upper()
    if not CODE_PATTERN.match(code):
        raise InvalidAccessCode()
    return code


def clean_new_code(value: Any) -> str:
    """A code an organizer gives: 3-32 letters, digits and '-' (any case)."""
    code = value.strip().upper() if isinstance(value, str) else ""
    if not CODE_PATTERN.match(code):
        raise InvalidBooking("A code is 3 to 32 letters, digits or '-', starting with a letter "
                             "or digit.", field="code")
    return code


def _whole(value: Any, *, field: str, low: int, high: int, what: str) -> int:
    if isinstance(value, bool) or not isinstance(value, int) or not low <= value <= high:
        raise InvalidBooking(f"{what} must be a whole number from {low} to {high:,}.",
                             field=field)
    return value


CREATE_CODES = "create_access_codes"  # a keyed creation's request row's operation
KEY_REUSED = "This key was already used to create other access codes."


def _creation_fingerprint(event_id: str, names: Any, count: int, max_uses: int, until: Any,
                          types: Any, reserved: int) -> str:
    settings = [event_id, names, None if names else count, max_uses,
                until.isoformat() if until else None, list(types), reserved]
    return hashlib.sha256(json.dumps(settings).encode()).hexdigest()[:32]


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

    def __init__(self, *, store: Store, catalog: EventCatalog, requests: RequestLog) -> None:
        self.table: Table = store.table(ACCESS_CODES)
        self.store = store
        self.catalog = catalog
        self.requests = requests

    # --- writing codes ------------------------------------------------------------------
    def create(self, event_id: str, count: int = 1, codes: Any = None, max_uses: int = 1,
               valid_until: Any = None, ticket_types: Any = None, reserved_seats: int = 0,
               request_id: str | None = None) -> list[AccessCode]:
        """Create ``codes`` (given) or ``count`` generated ones, all or none (a given code
        the event already has: ``InvalidBooking`` with ``field="code"``, nothing stored).

        ``request_id`` (an API Idempotency-Key, scoped) rides in the codes' own write: a
        request row naming the codes made, put only if absent. A repeat is refused by that
        row and answers the codes it names (generated ones too), creating and reserving
        nothing; the same id for other settings is ``InvalidBooking`` on ``request_id``."""
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
        puts = [("Put", self.table.put_op(
            code_item(code), condition=attr("max_uses").not_exists())) for code in made]
        fingerprint = _creation_fingerprint(event.id, names, count, max_uses, until, types,
                                            reserved_seats)
        if request_id:
            puts.append(self._request_row(request_id, event.id, fingerprint, made))
        try:
            self.store.transact_write(puts)
        except TransactionCancelled as cancelled:
            if cancelled.conflict:
                raise
            if request_id and cancelled.reasons[-1].old_item is not None:
                return self._created_by(cancelled.reasons[-1].old_item, event.id, fingerprint)
            taken = [code.code for code, reason in zip(made, cancelled.reasons)
                     if reason.old_item is not None]
            raise InvalidBooking(f"This event already has the code {', '.join(taken)}."
                                 if given and taken else
                                 "Please try again.", field="code") from None
        if seat is not None:
            made = self._reserve(event, made, seat, reserved_seats)
        return made

    def _request_row(self, request_id: str, event_id: str, fingerprint: str,
                     made: list[AccessCode]) -> tuple[str, dict]:
        """The request row riding in a keyed creation's write (``booking/exactly_once``'s
        request rows, their table and retention): put only if no live row holds the id."""
        at = int(time.time())
        row = {"request_id": request_id, "operation": CREATE_CODES, "event_id": event_id,
               "fingerprint": fingerprint, "codes": [code.code for code in made],
               "created_at": at, "ttl": at + self.requests.retention_seconds}
        return ("Put", self.requests.table.put_op(
            row, condition=attr("request_id").not_exists() | attr("ttl").le(at)))

    def _created_by(self, row: dict, event_id: str, fingerprint: str) -> list[AccessCode]:
        """What a repeat of a keyed creation answers: the codes its first request made."""
        if (row.get("operation") != CREATE_CODES or row.get("event_id") != event_id
                or row.get("fingerprint") != fingerprint):
            raise InvalidBooking(KEY_REUSED, field="request_id")
        found = [self.table.get(code_key(event_id, name)) for name in row.get("codes", [])]
        return [code_from_item(item) for item in found if item]

    def revoke(self, event_id: str, code: str) -> AccessCode:
        """Revoke ``code``: no further order may use it (orders holding it keep it); the
        seats still reserved for it return to sale."""
        event = self.catalog.get_event(event_id)
        code = normalize_code(code)
        try:
            item = self.table.update(
                code_key(event.id, code), Actions().set(
                    "revoked_at", if_not_exists("revoked_at", timezone.now().isoformat())),
                condition=attr("max_uses").exists(), return_values="ALL_NEW")
        except ConditionFailed:
            raise InvalidAccessCode() from None
        item = item or {}
        self._release(event, code, item.get("reserved") or {}, int(item.get("reserved_until", 0)))
        return code_from_item(self.table.get(code_key(event.id, code)) or item)

    def _clean_until(self, value: Any) -> datetime | None:
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
    def _clean_types(event: Event, value: Any) -> tuple:
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
    def of_event(self, event_id: str) -> list[AccessCode]:
        """Every code of the event with its uses, in code order."""
        return self._codes(self.catalog.get_event(event_id).id)

    def _codes(self, event_id: str) -> list[AccessCode]:
        return [code_from_item(item) for item in self.table.query(
            key_condition=attr("event_id").eq(event_id))]

    def get(self, event_id: str, code: str) -> AccessCode | None:
        item = self.table.get(code_key(event_id, normalize_code(code)))
        return code_from_item(item) if item else None

    def unlocks(self, event_id: str, code: str) -> tuple[str, ...]:
        """The code-only ticket types ``code`` unlocks now (empty when it is not valid now):
        what a ``?code=...`` link shows. The booking's own write decides."""
        return self.check(event_id, code) or ()

    def check(self, event_id: str, code: str) -> tuple[str, ...] | None:
        """The code-only types ``code`` unlocks if it is valid now (maybe none), else None
        (unknown, malformed, expired, revoked: all alike)."""
        event = self.catalog.event_for(event_id)
        try:
            found = self.get(event.id, code)
        except InvalidAccessCode:
            return None
        if found is None or found.status(timezone.now()) != "valid":
            return None
        return tuple(t for t in event.code_only_types if found.unlocks(t))

    def check_tickets(self, event_id: str, code: str, tickets: dict[str, int] | None) -> None:
        """Raise what a booking of ``tickets`` with ``code`` would be refused for by the
        code (``InvalidAccessCode``, ``AccessCodeUsedUp``), told with a form's other errors
        before any write; one read, nothing stored. The booking's own write still decides."""
        event = self.catalog.event_for(event_id)
        item = self.table.get(code_key(event.id, normalize_code(code)))
        types, now = tuple(sorted(tickets or {})), now_ms()
        usable = item is not None and "revoked_at" not in item and not (
            "valid_until" in item and int(item["valid_until"]) <= now) and not (
            item.get("ticket_types") and any(t not in item["ticket_types"] for t in types)) \
            and int(item.get("uses", 0)) < int(item["max_uses"])
        if not usable:
            raise why_refused(item, types, now, {t: event.label(t) for t in types})

    # --- bookings -----------------------------------------------------------------------
    def use(self, event: Event, access_code: str | None, tickets: dict[str, int]) -> AccessCodeUse | None:
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
                self.table.update(code_key(event.id, code.code), Actions().set("uses", orders),
                                  condition=attr("uses").eq(code.uses))
            except ConditionFailed:
                continue  # used or given back meanwhile: the next audit tells
            fixed.append(f"access code {code.code} uses {code.uses} -> {orders}")
        return fixed

    def forget_event(self, event_id: str) -> None:
        """Remove every code of a deleted event."""
        self.table.delete_partition(event_id)
