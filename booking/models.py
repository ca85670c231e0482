"""Plain domain records. No boto3 here; the access layer maps items to these."""
from dataclasses import dataclass, field
from datetime import datetime

# A registration's status: "confirmed" for the synchronous strategies; the streams
# strategy's registrations are "pending" until its decider makes them "confirmed" or
# "rejected".
PENDING, CONFIRMED, REJECTED = "pending", "confirmed", "rejected"

# Orders (docs/orders.md): the one ticket type of an event created without types, and the
# name of the quota that is the event's own capacity.
DEFAULT_TICKET_TYPE = "admission"
CAPACITY_QUOTA = "capacity"
# Names the model gives a meaning of its own, so no ticket type or further quota may take
# them: "capacity" is the quota every type counts against (an order's seats and every
# tally are keyed by quota, and the labels share one map with the quotas).
RESERVED_NAMES = frozenset({CAPACITY_QUOTA})



def ticket_label(name: str) -> str:
    """A ticket type's (or quota's) name as people read it: ``workshop-a`` -> "Workshop A",
    ``early_bird`` -> "Early bird". Derived, never stored: the name stays the key."""
    words = name.replace("_", " ").replace("-", " ").split()
    text = " ".join(word.upper() if len(word) == 1 else word for word in words)
    return text[:1].upper() + text[1:] if text else name


# Outbox kinds: which e-mail an outbox row owes (booking/exactly_once/outbox.py).
CONFIRMATION, CANCELLATION, REJECTION, OFFER = "confirmation", "cancellation", "rejection", "offer"
# The waiting list's other e-mails: the answer to a request to join (a confirmation link,
# or to the owner of an address already in line or booked), and a removal by an organizer.
WAITLIST_JOIN, WAITLIST_REMOVED = "waitlist-join", "waitlist-removed"


class UnknownTicketTypes(LookupError):
    """An order names a ticket type the event as read does not have (added since)."""


@dataclass(frozen=True)
class Question:
    """One of the organizer's questions (booking/questions/rules.py checks them)."""

    id: str
    label: str
    kind: str = "text"
    required: bool = False
    choices: tuple[str, ...] = ()
    help_text: str = ""
    ticket_types: tuple[str, ...] = ()  # the types that ask it; empty: every type
    per_pass: bool = False  # asked of each seat's attendee rather than once per order

    def asked_of(self, ticket_type: str) -> bool:
        return not self.ticket_types or ticket_type in self.ticket_types

    def as_dict(self) -> dict:
        return {"id": self.id, "label": self.label, "kind": self.kind,
                "required": self.required, "choices": list(self.choices),
                "help_text": self.help_text, "ticket_types": list(self.ticket_types),
                "per_pass": self.per_pass}


@dataclass(frozen=True)
class Event:
    id: str
    name: str
    capacity: int
    strategy: str
    starts_at: datetime | None
    created_at: datetime
    version: int
    ends_at: datetime | None = None
    # An IANA name; "" for events stored before zones were a field: TIME_ZONE applies.
    time_zone: str = ""
    description: str = ""
    venue: str = ""
    # Orders (docs/orders.md): further quotas beside the capacity (name -> seats), each
    # ticket type -> the further quotas it counts against (every type counts against the
    # capacity), and the most seats one order may hold. The defaults are today's event:
    # one type, one seat per person.
    quotas: dict = field(default_factory=dict, compare=False)
    ticket_types: dict = field(default_factory=lambda: {DEFAULT_TICKET_TYPE: ()}, compare=False)
    max_per_order: int = 1
    # The arrivals a second its organizer expects at the busiest moment (a drop's opening),
    # or None: the shards strategy splits the seats of a plain event for it (docs/scaling.md).
    expected_rate: int | None = None
    # A sentence per ticket type shown beside it where people choose (type -> text); only
    # the types that have one. Stored only when there is one, so other events stay as they were.
    ticket_descriptions: dict = field(default_factory=dict, compare=False)
    # The label the organizer typed for a ticket type or quota ("VIP" for ``vip``), where
    # one was typed (name -> label); ``label`` falls back to ``ticket_label``. Stored only
    # when there is one, so other events stay as they were.
    ticket_labels: dict = field(default_factory=dict, compare=False)

    def label(self, name: str) -> str:
        """A ticket type's or quota's label as the organizer typed it, else derived."""
        return self.ticket_labels.get(name) or ticket_label(name)

    @property
    def is_plain(self) -> bool:
        """Today's event (the one type ``admission``, no further quota, one seat per order):
        stored exactly as before orders existed, and so are its registrations."""
        return (self.max_per_order == 1 and not self.quotas
                and list(self.ticket_types) == [DEFAULT_TICKET_TYPE])

    @property
    def offers_orders(self) -> bool:
        """Whether people choose ticket types, quantities or quotas: forms, pages, exports
        and logs show the order; a plain event's show one seat (``is_plain``)."""
        return not self.is_plain

    def registered_tickets(self, tickets: dict[str, int]) -> dict[str, int] | None:
        """What a registration of this event keeps of its (validated) ``tickets``: None on
        a plain event, whose registrations are stored as before orders existed."""
        return None if self.is_plain else dict(tickets)

    def quota_capacities(self) -> dict[str, int]:
        """Every quota's seats, the event's capacity first (``CAPACITY_QUOTA``)."""
        return {CAPACITY_QUOTA: self.capacity, **self.quotas}

    def beyond_quotas(self, tickets: dict[str, int]) -> tuple[str, int, int] | None:
        """The first quota that ``tickets`` (validated) ask more seats of than it has in
        all, as (quota, seats asked, its seats), or None: such an order can never be
        booked, nor offered from the waiting list."""
        order = self.order(tickets)
        for quota, asked in order.seats.items():
            if asked > order.capacities[quota]:
                return quota, asked, order.capacities[quota]
        return None

    def knows(self, tickets) -> bool:
        """Whether every type ``tickets`` names is one of this event's (as read): a type
        added since this copy was read is not (anything but a dict: validation decides)."""
        return not isinstance(tickets, dict) or all(name in self.ticket_types for name in tickets)

    def order(self, tickets: dict[str, int]) -> "Order":
        """What ``tickets`` (type -> quantity, already validated) take from each quota.
        ``UnknownTicketTypes`` when this copy of the event does not know one of them (a type
        added since it was read): read the event again, never guess its quotas."""
        if not self.knows(tickets):
            raise UnknownTicketTypes(sorted(set(tickets) - set(self.ticket_types)))
        seats: dict[str, int] = {}
        for ticket_type, quantity in tickets.items():
            for quota in (CAPACITY_QUOTA, *self.ticket_types[ticket_type]):
                seats[quota] = seats.get(quota, 0) + quantity
        capacities = self.quota_capacities()
        return Order(seats=seats, capacities={q: capacities[q] for q in seats})
    # The fingerprint of the keyed request that created it (an API Idempotency-Key), so a
    # repeat of that request is recognised; "" for events created without a key.
    request_fingerprint: str = field(default="", compare=False)
    # The slug of the organizer that owns it (booking/organizers/); "" only for an event
    # stored before organizers existed, until ``manage.py assign_organizer`` gives it one.
    organizer: str = ""
    # Ticket types shown and bookable only with an access code that unlocks them (empty
    # for every event stored before access codes existed).
    code_only_types: tuple = field(default=(), compare=False)
    # The organizer's questions, in order (docs/orders.md#questions), and their version
    # (0: never set; each ``set_questions`` adds one).
    questions: tuple[Question, ...] = field(default=(), compare=False)
    questions_version: int = 0

    @property
    def has_started(self) -> bool:
        """Bookings close once the event has started."""
        from django.utils import timezone

        return self.starts_at is not None and self.starts_at <= timezone.now()


def booking_reference(registration_id: str) -> str:
    """A short reference people can read out: "8F3A-21C0", the registration id's first 8
    characters (derived, never stored; the id stays the key)."""
    head = registration_id[:8].upper()
    return f"{head[:4]}-{head[4:]}"


def tickets_text(tickets: dict[str, int]) -> str:
    """``2 × conference, 1 × workshop-a``: an order by its types' names, as the CSV export
    writes it (sorted: a stored map keeps no order)."""
    return ", ".join(f"{quantity} × {name}" for name, quantity in sorted(tickets.items()))


def tickets_label_text(tickets: dict[str, int], labels: dict | None = None) -> str:
    """``2 × Conference, 1 × Workshop A``: an order with its types' labels, as people read
    it (pages, e-mails); ``labels`` are the event's typed ones (``Event.ticket_labels``),
    else derived; ``tickets_text`` keeps the names (CSV, logs)."""
    labels = labels or {}
    return ", ".join(f"{quantity} × {labels.get(name) or ticket_label(name)}"
                     for name, quantity in sorted(tickets.items()))


class HasTickets:
    """An order's reading of ``ticket_counts`` (type -> quantity; None: one seat of the
    event's only type), for a registration and a waiting-list entry alike."""

    ticket_counts: dict | None

    @property
    def tickets(self) -> dict[str, int]:
        """Ticket type -> quantity (``{"admission": 1}`` for one seat of a plain event)."""
        return dict(self.ticket_counts) if self.ticket_counts else {DEFAULT_TICKET_TYPE: 1}

    @property
    def seats(self) -> int:
        return sum(self.tickets.values())

    @property
    def tickets_text(self) -> str:
        return tickets_text(self.tickets)

    @property
    def tickets_label_text(self) -> str:
        return tickets_label_text(self.tickets)


@dataclass(frozen=True)
class Registration(HasTickets):
    event_id: str
    email: str
    name: str
    registered_at: datetime
    registration_id: str
    # The submission that created it (the form's one-time token), so a replay of that same
    # submission is recognised as "already mine" rather than "someone already registered".
    request_id: str | None = None
    # The address as the person typed it, where it differs from the e-mail key: e-mails go
    # there. Not part of the registration's identity.
    contact: str | None = field(default=None, compare=False)
    status: str = field(default=CONFIRMED, compare=False)  # PENDING, CONFIRMED or REJECTED
    # The order: ticket type -> quantity. None is one seat of the event's only type (every
    # registration stored before orders existed).
    ticket_counts: dict | None = field(default=None, compare=False)
    # Set on the answer of a cancellation of part of an order (its request id): it holds
    # just the tickets cancelled, and its notice is an e-mail of its own.
    part_request_id: str | None = field(default=None, compare=False)
    # Set on a cancellation's answer: the ids of the passes it cancelled (the door refuses
    # them from the same write).
    cancelled_passes: tuple = field(default=(), compare=False)
    # The access code the order was booked with (in capitals), or None.
    access_code: str | None = field(default=None, compare=False)

    @property
    def is_confirmed(self) -> bool:
        return self.status == CONFIRMED

    @property
    def reference(self) -> str:
        """The booking reference on its page and in its e-mails (``booking_reference``)."""
        return booking_reference(self.registration_id)

    @property
    def is_plain(self) -> bool:
        """One seat of the default type: stored exactly as before orders existed."""
        return self.ticket_counts is None


@dataclass(frozen=True)
class Order:
    """What one order takes (or a partial cancellation gives back) from each quota:
    ``seats`` quota -> seats, ``capacities`` quota -> its capacity as last read here (the
    write checks it: a stale one is corrected from the refusal, never trusted)."""

    seats: dict
    capacities: dict

    @property
    def is_single_seat(self) -> bool:
        """One seat of the capacity quota only: today's booking, written as ever."""
        return self.seats == {CAPACITY_QUOTA: 1}

    def with_capacity(self, quota: str, capacity: int) -> "Order":
        return Order(seats=self.seats, capacities={**self.capacities, quota: capacity})


@dataclass(frozen=True)
class QuotaAvailability:
    """One quota's seats: ``confirmed`` ones, ``held`` for waiting-list offers."""

    capacity: int
    confirmed: int
    held: int = 0

    @property
    def remaining(self) -> int:
        return max(self.capacity - self.confirmed - self.held, 0)


@dataclass(frozen=True)
class Availability:
    capacity: int
    confirmed: int
    # Seats held for waiting-list offers that have not expired (booking/waitlist/engine.py).
    held: int = 0
    # Registrations waiting for a decision (the streams strategy; 0 elsewhere).
    pending: int = 0
    # The event's further quotas (name -> QuotaAvailability); ``quotas`` adds the capacity.
    further: dict = field(default_factory=dict, compare=False)

    @property
    def quotas(self) -> dict[str, QuotaAvailability]:
        """Every quota, the event's capacity (``"capacity"``) first."""
        own = QuotaAvailability(capacity=self.capacity, confirmed=self.confirmed, held=self.held)
        return {CAPACITY_QUOTA: own, **self.further}

    @property
    def remaining(self) -> int:
        return max(self.capacity - self.confirmed - self.held, 0)

    @property
    def is_full(self) -> bool:
        return self.confirmed + self.held >= self.capacity


WAITING, OFFERED, EXPIRED, BOOKED, LEFT = "waiting", "offered", "expired", "booked", "left"


@dataclass(frozen=True)
class WaitlistEntry(HasTickets):
    """One person's place on an event's waiting list (booking/waitlist/engine.py)."""

    event_id: str
    email: str
    name: str
    position: int  # join order: 1 for the first to join, never reused
    status: str  # WAITING, OFFERED, EXPIRED, BOOKED or LEFT
    joined_at: datetime
    contact: str | None = field(default=None, compare=False)
    offer_expires_at: datetime | None = None
    offer_id: str | None = None  # names the current (or last) offer; the accept link's id
    registration_id: str | None = None  # set once the offer was accepted
    hold: dict = field(default_factory=dict, compare=False)  # where the strategy holds it
    # What the person asks for on an event with orders (ticket type -> quantity); None is
    # one seat of the event's only type (every entry of a plain event).
    ticket_counts: dict | None = field(default=None, compare=False)

    @property
    def is_active(self) -> bool:
        return self.status in (WAITING, OFFERED)


# --- Django admin -------------------------------------------------------------------
# Imported here, not at the top, so the records above stay plain dataclasses.
from django.db import models as django_models  # noqa: E402


class DynamoEvent(django_models.Model):
    """The admin's entry for events stored in DynamoDB: a name and permissions, no table."""

    class Meta:
        managed = False
        db_table = "booking_dynamo_event_unused"
        verbose_name = "event"
        verbose_name_plural = "events"
        default_permissions = ("add", "change", "delete", "view")


@dataclass(frozen=True)
class AccessCode:
    """A code that unlocks an event's bookings: at most ``max_uses`` orders hold it
    (``uses``: those that do), until ``valid_until`` (None: no end), for ``ticket_types``
    (empty: every type of the event, those bookable only with a code included)."""

    event_id: str
    code: str
    max_uses: int
    uses: int = 0
    valid_until: datetime | None = None
    ticket_types: tuple = ()
    reserved_seats: int = 0
    revoked_at: datetime | None = None
    created_at: datetime | None = None

    @property
    def remaining(self) -> int:
        return max(self.max_uses - self.uses, 0)

    def status(self, now: datetime) -> str:
        """"revoked", "expired", "used up" or "valid"."""
        if self.revoked_at is not None:
            return "revoked"
        if self.valid_until is not None and self.valid_until <= now:
            return "expired"
        return "used up" if self.uses >= self.max_uses else "valid"

    def unlocks(self, ticket_type: str) -> bool:
        return not self.ticket_types or ticket_type in self.ticket_types


# --- What one asking of a booking or a cancellation did (the service's answer) ----------
# An entry point renders an ``Outcome``; it never guesses from timestamps whether its
# request was the one that wrote, and it never sends what is owed: the write itself
# recorded what it owes (its outbox row), and the booking worker sends the e-mail and fans
# out its webhooks, once.

@dataclass(frozen=True)
class Outcome:
    """``registration``: the answer (a booking's registration, a cancellation's removed
    seats). ``applied``: this asking's own write made it (False: an earlier asking of the
    same request id did, and this one replayed its answer, writing nothing). ``owed``: the
    messages this asking's write recorded in the outbox (empty for a replay: the earlier
    write owes them; and for a booking still waiting for its decision: the decision owes)."""

    registration: Registration
    applied: bool
    owed: tuple[str, ...] = ()

    @property
    def replayed(self) -> bool:
        return not self.applied

    @classmethod
    def booking(cls, registration: Registration, *, built_id: str) -> "Outcome":
        """A booking's outcome: it applied when the answer is the registration this asking
        built (its ``registration_id`` is new for every asking; a replay answers the one the
        earlier asking wrote, read from the request row)."""
        applied = registration.registration_id == built_id
        owed = (CONFIRMATION,) if applied and registration.status == CONFIRMED else ()
        return cls(registration, applied, owed)

    @classmethod
    def cancellation(cls, registration: Registration, *, replayed: bool) -> "Outcome":
        """A cancellation's outcome; ``replayed``: its answer came from the request row an
        earlier asking wrote (the strategy's write was refused for it)."""
        return cls(registration, not replayed, () if replayed else (CANCELLATION,))


@dataclass
class Answered:
    """What an observer of one booking or cancellation (``BookingService.observers``)
    learns when it answered: ``status`` (a registration's status, ``"cancelled"``);
    ``"error"`` until then (an observer reads the raised error itself)."""

    status: str = "error"


@dataclass(frozen=True)
class NoRoom:
    """What is left when an order did not fit (``BookingService.sign_up``'s ``EventFull``
    carries it as ``left``): ``seats`` read now (None: not known in time, or the event sells
    no orders), ``beyond`` (quota, asked, seats) when the order is larger than a quota in
    all, and ``may_wait``: the order may join the waiting list as it is."""

    seats: Availability | None
    beyond: tuple[str, int, int] | None = None
    may_wait: bool = False
