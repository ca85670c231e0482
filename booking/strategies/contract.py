"""The strategy contract: one abstract class per role, with exactly the calls made.

``Seats`` is what the service calls to book and cancel, ``Holds`` what the waiting list
calls to hold a seat for an offer, ``Audited`` what the audit calls. A strategy is all
three (``base.Strategy``). Every booking is an order (``models.Order``): a plain event's
booking is an order of one ``admission`` seat against the ``capacity`` quota. What rides
on a write besides the seats (the request row, the outbox row) comes in ``Riders``.
How to write a strategy: docs/development/adding-a-strategy.md.
"""
from abc import ABC, abstractmethod
from collections.abc import Iterator

from booking.dynamo.expressions import Member, Refusal
from booking.exactly_once.riders import Riders
from booking.models import Availability, Event, Order, Registration


class Seats(ABC):
    """Book and cancel an event's seats, and read them. Arguments come validated."""

    @abstractmethod
    def provision(self, event: Event) -> None:
        """Write all the event needs to be bookable, never half of it (a failed provision
        leaves no bookable event behind)."""

    def check_order_shape(self, event: Event) -> None:
        """Refuse (``InvalidBooking``, nothing stored) an event this strategy cannot keep."""

    @abstractmethod
    def book(self, event: Event, registration: Registration, order: Order,
             riders: Riders) -> Registration:
        """Confirm ``registration`` holding ``order`` if, atomically, the event exists, every
        quota the order draws on has room for its seats, and the person holds no
        registration: one write with ``riders``' members. Raises ``EventNotFound``,
        ``EventFull`` (``quota``: the first without room), ``AlreadyRegistered`` (with
        ``existing`` when the refusal showed it) or ``BookingContention`` once the retries
        are spent. A strategy that decides later answers with a ``pending`` registration."""

    def full_by_reading(self, event: Event, registration: Registration, order: Order,
                        riders: Riders) -> Registration | None:
        """The booking's answer from one consistent read, writing nothing, when this
        process lately saw the event (or a quota the order draws on) sold out: this
        request's own registration, or raises ``EventFull`` (no room at the instant of the
        read), ``AlreadyRegistered`` or ``EventNotFound``. None: no such memory, or the
        read found room (then the booking must write)."""
        return None

    def sold_out_lately(self, event_id: str) -> bool:
        """Whether a booking of ``event_id`` would now be answered by ``full_by_reading``
        (a hint for letting it through a cool-down, never an answer)."""
        return False

    @abstractmethod
    def cancel(self, event: Event, email: str, registration_id: str | None, *, riders: Riders,
               known: Registration | None = None,
               release: dict[str, int] | None = None) -> Registration:
        """Free the person's seats and return what was freed: the whole registration, or
        with ``release`` (ticket type -> quantity) only those seats (the answer holds just
        them). With ``registration_id`` only that registration; ``known`` is the whole
        registration a signed link names (no read needed). Raises ``EventNotFound``,
        ``NotRegistered``, ``InvalidBooking`` (more than the order holds)."""

    @abstractmethod
    def find(self, event_id: str, email: str) -> Registration | None:
        """The person's registration, read consistently (``EventNotFound``)."""

    @abstractmethod
    def registrations(self, event_id: str) -> Iterator[Registration]:
        """Every registration of the event, page by page."""

    @abstractmethod
    def availability(self, event: Event) -> Availability:
        """Seats of the event and of each of its quotas, from the strategy's own
        authoritative data, read consistently (``EventNotFound``)."""

    @abstractmethod
    def availabilities(self, events: list[Event]) -> dict[str, Availability]:
        """``availability`` of several events by id, in as few reads as the data allows;
        events deleted meanwhile are left out."""

    def place_in_line(self, registration: Registration) -> int | None:
        """A pending registration's place among the event's pending ones (1: next to be
        decided); None where bookings are decided at once."""
        return None

    @abstractmethod
    def change_capacity(self, event: Event, *, expected_version: int, capacity: int,
                        changes: dict, quotas: dict[str, int] | None = None) -> None:
        """Set the capacity, further quotas' sizes (``quotas``) and the other attributes in
        ``changes`` (None removes one), bumping ``version``, only if it is still
        ``expected_version``. Raises ``StaleEdit``, ``EventNotFound``, or ``InvalidBooking``
        (``field`` "capacity" or "quotas") below what is confirmed or held."""

    @abstractmethod
    def delete(self, event: Event) -> None:
        """Remove the event and all stored for it, unbookable first."""


class Holds(ABC):
    """Seats held for a waiting list's offer until a time (epoch ms). The waiting list
    runs the transactions; a strategy builds their named members."""

    @abstractmethod
    def hold_ops(self, event: Event, email: str, order: Order, *, until: float, now: float,
                 refused: Refusal | None = None) -> tuple[list[tuple[str, Member]], dict]:
        """Members that hold ``order``'s seats for ``email`` until ``until``, only if the
        person holds no registration; after ``refused`` (the previous attempt's refusal),
        with what it showed. Returns the members and ``ref`` (what the strategy needs
        later, stored with the offer). Raises ``EventFull``, ``AlreadyRegistered``,
        ``EventNotFound``."""

    @abstractmethod
    def accept_ops(self, event: Event, registration: Registration, order: Order, *,
                   now: float, ref: dict, holder: str | None = None) -> list[tuple[str, Member]]:
        """Members that turn the person's unexpired hold into ``registration``;
        ``holder``: the hold's key when it is not the person's e-mail (a seat an access
        code reserved for its holders: always a hold of one seat)."""

    @abstractmethod
    def release_ops(self, event: Event, email: str, order: Order, *, until: float,
                    ref: dict) -> list[tuple[str, Member]]:
        """Members that free exactly the hold that lasts until ``until``."""

    @abstractmethod
    def release_expired(self, event: Event, *, now: float) -> int:
        """Free the seats of holds expired before ``now`` (each write conditional on still
        being so); return how many."""

    @abstractmethod
    def holds(self, event_id: str) -> dict[str, float]:
        """Every stored hold: e-mail key -> until (expired ones included)."""

    @abstractmethod
    def registration_absent_op(self, event_id: str, email: str) -> Member:
        """A ConditionCheck: the person holds no registration for the event."""


class Audited(ABC):
    """What the audit calls: check what is stored, and fix derived data."""

    def audit(self, event: Event) -> list:
        """``audit.Violation`` records of what this strategy stores, read consistently."""
        return []

    def repair(self, event: Event) -> list[str]:
        """Fix derived data only, each write conditional on its read; what was changed."""
        return []
