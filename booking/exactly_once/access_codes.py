"""An access code's uses, counted inside the order's own write (a rider).

The code's item (``tables.ACCESS_CODES``) holds ``max_uses`` and ``uses``. A booking with a
code adds one member to the strategy's transaction: ``ADD uses 1`` on the code's item, on
condition that the code exists (for this event: the event id is its key), is not revoked,
has not expired, unlocks every ticket type ordered, and ``uses < max_uses``. The check and
the increment are one conditional update in the same transaction as the seats, the
request row and the outbox row: two orders can never both read "one use left" and both
write (the write skew pretix, eventyay and Hi.Events each met, docs/orders.md). Refused,
the member's old item says why: ``InvalidAccessCode`` or ``AccessCodeUsedUp``; nothing is
stored. A cancellation of the whole order gives the use back in its own write
(``AccessCodeReturn``); the streams decider does so in a rejection's write
(``give_back_members``).
"""
import time
from dataclasses import dataclass

from booking.dynamo.access import Table
from booking.dynamo.expressions import Actions, Condition, all_of, attr
from booking.dynamo.expressions import Member, Refusal, Update
from booking.errors import AccessCodeUsedUp, BookingError, InvalidAccessCode
from booking.models import REJECTED, Registration, ticket_label

MEMBER = "access_code"
USES = attr("uses")


def valid(now: int) -> Condition:
    """The code exists, is not revoked, not expired at ``now`` and not used up."""
    return (attr("max_uses").exists() & attr("revoked_at").not_exists()
            & (attr("valid_until").not_exists() | attr("valid_until").gt(now))
            & USES.lt(attr("max_uses")))


def usable(now: int) -> Condition:
    """``valid``, and no seats still reserved for it (those it books first:
    ``ReservedSeatUse``)."""
    return valid(now) & (attr("reserved_left").not_exists() | attr("reserved_left").le(0))

# The prefix of the hold keys of a code's reserved seats (``reserved_key``): never an
# e-mail key (those have an @), so no person's hold or registration can share one.
RESERVED_PREFIX = "code#"
UNKNOWN = "This access code is not valid for this event."
EXPIRED = "This access code has expired."
REVOKED = "This access code is no longer valid."
NOT_FOR_TYPE = "This access code is not valid for {types}."


def code_key(event_id: str, code: str) -> dict:
    return {"event_id": event_id, "code": code}


def reserved_key(code: str, number: int) -> str:
    """The hold key of the code's reserved seat ``number`` (1, 2, ...)."""
    return f"{RESERVED_PREFIX}{code}#{number}"


class ReservedSeatsLeft(BookingError):
    """Not an answer: the code still has reserved seats, which its orders take first
    (``reserved``: hold key -> what the strategy needs to accept it). The service books
    one of them instead (``ReservedSeatUse``)."""

    def __init__(self, reserved: dict):
        super().__init__()
        self.reserved = reserved


class ReservedSeatGone(BookingError):
    """Not an answer: the reserved seat tried was taken meanwhile (try another)."""


def why_refused(item: dict | None, ticket_types: tuple[str, ...], now: int,
                labels: dict[str, str] | None = None) -> BookingError:
    """The error a refused use of the code stored as ``item`` answers (None: no item);
    ticket types named by their ``labels`` (the event's, as people read them)."""
    if item is None:
        return InvalidAccessCode(UNKNOWN)
    if "revoked_at" in item:
        return InvalidAccessCode(REVOKED)
    if "valid_until" in item and int(item["valid_until"]) <= now:
        return InvalidAccessCode(EXPIRED)
    unlocked = item.get("ticket_types")
    locked = [t for t in ticket_types if unlocked and t not in unlocked]
    if locked:
        named = [(labels or {}).get(t) or ticket_label(t) for t in locked]
        return InvalidAccessCode(NOT_FOR_TYPE.format(types=", ".join(named)))
    if int(item.get("uses", 0)) >= int(item["max_uses"]):
        return AccessCodeUsedUp()
    if int(item.get("reserved_left", 0)) > 0 and item.get("reserved"):
        return ReservedSeatsLeft(dict(item["reserved"]))
    return ReservedSeatGone()


@dataclass(frozen=True)
class AccessCodeUse:
    """One use of ``code`` by an order of ``ticket_types``: a rider on the booking."""

    table: Table
    event_id: str
    code: str
    ticket_types: tuple[str, ...]
    now: int  # epoch ms (``now_ms``), as ``valid_until`` is stored
    labels: tuple[tuple[str, str], ...] = ()  # (type, label): what a refusal names

    def members(self, answer: Registration, *, notice: bool = True) -> list[tuple[str, Member]]:
        return [(MEMBER, Update(self.table, code_key(self.event_id, self.code),
                                Actions().add(USES, 1), self._unlocking(usable(self.now))))]

    def _unlocking(self, base: Condition) -> Condition:
        """``base`` and: the code unlocks every type ordered."""
        types = attr("ticket_types")
        return all_of([base, *(types.not_exists() | types.contains(ticket_type)
                               for ticket_type in self.ticket_types)])

    def answer(self, refusal: Refusal) -> Registration | None:
        if not refusal.refused(MEMBER):
            return None
        raise why_refused(refusal.old(MEMBER), self.ticket_types, self.now,
                          dict(self.labels))

    def reserved(self, key: str) -> "ReservedSeatUse":
        """This use, taking the code's reserved seat held under ``key``."""
        return ReservedSeatUse(self.table, self.event_id, self.code, self.ticket_types,
                               self.now, self.labels, key)


@dataclass(frozen=True)
class ReservedSeatUse(AccessCodeUse):
    """One use of the code by an order that takes its reserved seat ``key``: the use
    counted and the reservation removed from the code's item, in the write that turns
    the hold into the order (``Holds.accept_ops`` with ``holder=key``)."""

    key: str = ""

    def members(self, answer: Registration, *, notice: bool = True) -> list[tuple[str, Member]]:
        seat = attr("reserved", self.key)
        return [(MEMBER, Update(self.table, code_key(self.event_id, self.code),
                                Actions().add(USES, 1).add("reserved_left", -1).remove(seat),
                                self._unlocking(valid(self.now) & seat.exists())))]


def give_back_members(table: Table, registration: Registration) -> list[tuple[str, Member]]:
    """The member giving back the use ``registration`` (a whole order) held, if any.

    Unconditional: the order held a use, so the count is at least one; a condition here
    could only block a cancellation (an audit reports a count that disagrees)."""
    if not registration.access_code or registration.part_request_id \
            or registration.status == REJECTED:
        return []
    return [(MEMBER, Update(table, code_key(registration.event_id, registration.access_code),
                            Actions().add(USES, -1)))]


@dataclass(frozen=True)
class AccessCodeReturn:
    """A cancellation's rider: the whole order's use of its code, given back."""

    table: Table

    def members(self, answer: Registration, *, notice: bool = True) -> list[tuple[str, Member]]:
        return give_back_members(self.table, answer)

    def answer(self, refusal: Refusal) -> Registration | None:
        return None  # its member has no condition


def now_ms() -> int:
    """Now, as the codes' times are stored: epoch milliseconds."""
    return int(time.time() * 1000)
