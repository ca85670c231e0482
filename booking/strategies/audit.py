"""Capacity audits: the checks every strategy shares (``Violation`` records), and what a
repair did (``RepairReport``); each strategy's ``audit``/``repair`` adds its own."""
from collections import Counter
from collections.abc import Iterable
from dataclasses import asdict, dataclass, field

from booking.dynamo.access import ConditionFailed, Table
from booking.dynamo.expressions import Actions, attr
from booking.errors import InvalidBooking
from booking.models import CAPACITY_QUOTA, Event
from booking.validation import normalize_email

# Invariant names (stable: they appear in check_capacity's output and JSON).
WITHIN_CAPACITY = "confirmed_within_capacity"
COUNTER = "counter_matches_registrations"
LOCK_PRESENT = "lock_item_present"
LOCK_CAPACITY = "lock_capacity_matches_event"
EMAIL_NORMALIZED = "email_normalized"
ONE_PER_PERSON = "one_registration_per_person"
VERSION_NUMERIC = "version_numeric"
SLOT_COUNT = "slot_count_matches_capacity"
CLAIM_HAS_REGISTRATION = "claimed_slot_has_registration"
REGISTRATION_HOLDS_SLOT = "registration_holds_its_slot"
SLOT_STATE = "slot_free_xor_held"


@dataclass(frozen=True)
class Violation:
    event_id: str
    invariant: str
    expected: object
    found: object
    detail: str = ""

    def as_dict(self) -> dict:
        return asdict(self)


@dataclass
class RepairReport:
    event_id: str
    fixed: list[str] = field(default_factory=list)
    remaining: list[Violation] = field(default_factory=list)

    def as_dict(self) -> dict:
        return asdict(self)


def canonical_email(email: str) -> str:
    """The normalized form the service stores (or a best effort for an invalid one)."""
    try:
        return normalize_email(email)
    except InvalidBooking:
        return email.strip().casefold() if isinstance(email, str) else str(email)


def person_violations(event_id: str, emails: Iterable[str]) -> list[Violation]:
    """Stored e-mails must be normalized, and one person must hold one registration."""
    found: list[Violation] = []
    seen: dict[str, list[str]] = {}
    for email in emails:
        canonical = canonical_email(email)
        if canonical != email:
            found.append(Violation(event_id, EMAIL_NORMALIZED, canonical, email))
        seen.setdefault(canonical, []).append(email)
    for canonical, keys in seen.items():
        if len(keys) > 1:
            found.append(Violation(event_id, ONE_PER_PERSON, 1, len(keys),
                                   f"{canonical} is stored as {', '.join(sorted(keys))}"))
    return found


def version_violation(event_id: str, item: dict, what: str = "event item") -> list[Violation]:
    version = item.get("version")
    if isinstance(version, int) and not isinstance(version, bool):
        return []
    return [Violation(event_id, VERSION_NUMERIC, "a number", repr(version), what)]


def capacity_violation(event_id: str, capacity: int, confirmed: int) -> list[Violation]:
    if confirmed <= capacity:
        return []
    return [Violation(event_id, WITHIN_CAPACITY, f"<= {capacity}", confirmed,
                      "overbooked: a person must decide whom to move; repair leaves them")]


def fix_version(table: Table, key: dict, item: dict) -> bool:
    """Make a missing or non-numeric version 1, unless the item changed since ``item``."""
    version = attr("version")
    same = version.eq(item["version"]) if "version" in item else version.not_exists()
    try:
        table.update(key, Actions().set(version, 1),
                     condition=attr(next(iter(key))).exists() & same)
    except ConditionFailed:
        return False
    return True


# --- Orders (docs/orders.md): every quota, counted in seats -------------------------------
QUOTA_WITHIN_CAPACITY = "quota_within_capacity"
QUOTA_COUNTER = "quota_counter_matches_orders"


def seats_taken(event: Event, orders: Iterable[dict | None]) -> Counter:
    """Seats per quota of ``orders`` (each its stored ``tickets``; None: one seat of the
    only type, a registration stored before orders existed)."""
    taken: Counter = Counter()
    for tickets in orders:
        taken.update(event.order(tickets or {next(iter(event.ticket_types)): 1}).seats)
    return taken


def quota_violations(event: Event, taken: Counter, counted: dict) -> list[Violation]:
    """The further quotas (the capacity is checked as ever): never over capacity, and
    their stored counts (quota -> count, None: missing) match the stored orders' seats."""
    found = []
    for quota, capacity in sorted(event.quotas.items()):
        if taken[quota] > capacity:
            found.append(Violation(event.id, QUOTA_WITHIN_CAPACITY, f"<= {capacity}",
                                   taken[quota], f"quota {quota} overbooked: a person must "
                                                 "decide whom to move; repair leaves them"))
        if counted.get(quota) != taken[quota]:
            found.append(Violation(event.id, QUOTA_COUNTER, taken[quota], counted.get(quota),
                                   f"quota {quota} count"))
    return found


def seat_violations(event: Event, taken: Counter, counted: dict, detail: str, *,
                    capacity: int | None = None, checks: Iterable[Violation] = ()) -> list:
    """``taken`` within the capacity (the event's, or as stored), the strategy's ``checks``,
    the capacity's count in ``counted`` (``detail``), then ``quota_violations``."""
    seats = taken[CAPACITY_QUOTA]
    size = event.capacity if capacity is None else capacity
    found = capacity_violation(event.id, size, seats) + list(checks)
    if counted.get(CAPACITY_QUOTA) != seats:
        found.append(Violation(event.id, COUNTER, seats, counted.get(CAPACITY_QUOTA), detail))
    return found + quota_violations(event, taken, counted)
