"""Check-in's plain records: lists, scan answers, conflicts (no boto3 here)."""
from dataclasses import dataclass, field
from datetime import datetime, timezone

ENTRY, EXIT = "entry", "exit"
DIRECTIONS = (ENTRY, EXIT)

# A scan's answer. Every one is a normal answer at the door (the API's 200).
ADMITTED, EXITED = "admitted", "exited"
ALREADY_ADMITTED = "already_admitted"  # with the first admission's time and gate
NOT_INSIDE = "not_inside"  # an exit of a pass that is not inside
ROOM_FULL = "room_full"  # the list's occupancy limit is reached
NOT_ON_LIST = "not_on_list"  # the list does not admit the pass's ticket type
CANCELLED = "cancelled"  # the pass (or its whole order) was cancelled
UNKNOWN_CODE = "unknown_code"  # malformed, forged, altered, or another event's code
NOT_OPEN = "not_open"  # outside the list's opening hours
# A booking reference of an order with several passes on the list: nothing was decided or
# stored; ``choices`` lists them (each with its own short code) to scan one.
CHOOSE_PASS = "choose_pass"
STATUSES = (ADMITTED, EXITED, ALREADY_ADMITTED, NOT_INSIDE, ROOM_FULL, NOT_ON_LIST,
            CANCELLED, UNKNOWN_CODE, NOT_OPEN, CHOOSE_PASS)
# Answers that let someone through (green at the door); every other one is red.
ACCEPTED = (ADMITTED, EXITED)


def at(epoch: float | None) -> datetime | None:
    return None if epoch is None else datetime.fromtimestamp(float(epoch), tz=timezone.utc)


@dataclass(frozen=True)
class CheckinList:
    """One list an event's door staff scan against, with its live counts."""

    id: str
    event_id: str
    name: str
    ticket_types: tuple[str, ...] | None  # None: every ticket type of the event
    allow_reentry: bool
    occupancy_limit: int | None
    opens_at: datetime | None
    closes_at: datetime | None
    created_at: datetime
    # Live counts (``BookingService.checkin_list``; zero on a bare listing).
    expected: int = 0  # valid passes the list admits
    admitted: int = 0  # passes admitted at least once
    inside: int = 0  # passes inside now
    conflicts: int = 0  # offline double admissions reported

    def admits_type(self, ticket_type: str) -> bool:
        return self.ticket_types is None or ticket_type in self.ticket_types

    def is_open(self, when: datetime) -> bool:
        return ((self.opens_at is None or self.opens_at <= when)
                and (self.closes_at is None or when < self.closes_at))


@dataclass(frozen=True)
class ScanResult:
    """What the door answers to one scan."""

    status: str
    list_id: str
    nonce: str
    direction: str
    scanned_at: datetime
    gate: str | None = None
    pass_id: str | None = None
    ticket_type: str | None = None
    ticket_label: str | None = None
    attendee_name: str | None = None
    # For ALREADY_ADMITTED (and a conflict): when and where the pass was first admitted.
    first_admitted_at: datetime | None = None
    first_gate: str | None = None
    offline: bool = False  # uploaded from an offline scanner's queue
    conflict: bool = False  # an offline admission of a pass already admitted elsewhere
    message: str = field(default="", compare=False)
    # For CHOOSE_PASS: (short code, ticket label, code, status) of each pass to pick from.
    choices: tuple = ()

    @property
    def accepted(self) -> bool:
        return self.status in ACCEPTED


@dataclass(frozen=True)
class Conflict:
    """A pass let in offline although it had been admitted already: both admissions."""

    list_id: str
    pass_id: str
    ticket_type: str
    first_at: datetime | None
    first_gate: str | None
    second_at: datetime
    second_gate: str | None
    nonce: str
    reported_at: datetime


MESSAGES = {
    ADMITTED: "Admitted.",
    EXITED: "Exit recorded.",
    ALREADY_ADMITTED: "This pass was already admitted.",
    NOT_INSIDE: "This pass is not inside.",
    ROOM_FULL: "The room is full.",
    NOT_ON_LIST: "This ticket type is not admitted on this list.",
    CANCELLED: "This pass was cancelled.",
    UNKNOWN_CODE: "This is not a valid pass for this event.",
    NOT_OPEN: "This list is not open now.",
    CHOOSE_PASS: "This booking has several passes: choose the one to scan.",
}
