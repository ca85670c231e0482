"""Plain domain records. No boto3 here; the access layer maps items to these."""
from dataclasses import dataclass, field
from datetime import datetime

# A registration's status: "confirmed" for the synchronous strategies; the streams
# strategy's registrations are "pending" until its decider makes them "confirmed" or
# "rejected".
PENDING, CONFIRMED, REJECTED = "pending", "confirmed", "rejected"

# Outbox kinds: which e-mail an outbox row owes (booking/exactly_once/outbox.py).
CONFIRMATION, CANCELLATION, REJECTION, OFFER = "confirmation", "cancellation", "rejection", "offer"


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
    # The fingerprint of the keyed request that created it (an API Idempotency-Key), so a
    # repeat of that request is recognised; "" for events created without a key.
    request_fingerprint: str = field(default="", compare=False)

    @property
    def has_started(self) -> bool:
        """Bookings close once the event has started."""
        from django.utils import timezone

        return self.starts_at is not None and self.starts_at <= timezone.now()


@dataclass(frozen=True)
class Registration:
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

    @property
    def is_confirmed(self) -> bool:
        return self.status == CONFIRMED


@dataclass(frozen=True)
class Availability:
    capacity: int
    confirmed: int
    # Seats held for waiting-list offers that have not expired (booking/waitlist/engine.py).
    held: int = 0
    # Registrations waiting for a decision (the streams strategy; 0 elsewhere).
    pending: int = 0

    @property
    def remaining(self) -> int:
        return max(self.capacity - self.confirmed - self.held, 0)

    @property
    def is_full(self) -> bool:
        return self.confirmed + self.held >= self.capacity


WAITING, OFFERED, EXPIRED, BOOKED, LEFT = "waiting", "offered", "expired", "booked", "left"


@dataclass(frozen=True)
class WaitlistEntry:
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
