"""Domain errors. Each carries a message fit to show a user, and a stable code."""
from typing import Any

from booking.models import ticket_label


class BookingError(Exception):
    """Root of every error the booking service raises."""

    code = "booking_error"
    default_message = "Your booking could not be completed. Please try again."

    def __init__(self, message=None, *, field=None):
        self.message = message or self.default_message
        self.field = field
        super().__init__(self.message)


class InvalidBooking(BookingError):
    code = "invalid"
    default_message = "Some of the details you entered are not valid."


def beyond_quota(quota: str, asked: int, seats: int) -> InvalidBooking:
    """An order asking more seats of a quota than it has in all (``Event.beyond_quotas``):
    it can never be booked, nor offered from the waiting list."""
    whole = "This event" if quota == "capacity" else ticket_label(quota)
    return InvalidBooking(
        f"{whole} has {seats} seat{'s' if seats != 1 else ''} in all: an order can hold at "
        f"most {seats} of them, so an order of {asked} can never be booked or offered from "
        "the waiting list.", field="tickets")


class EventNotFound(BookingError):
    code = "event_not_found"
    default_message = "This event does not exist."


class EventFull(BookingError):
    code = "event_full"
    default_message = "Sorry, this event is full."

    def __init__(self, message=None, *, quota: str = "capacity", **kwargs):
        if message is None and quota != "capacity":
            message = (f"Sorry, there are not enough seats left in {ticket_label(quota)} "
                       "for this order.")
        super().__init__(message, **kwargs)
        self.quota = quota  # the quota that had no room ("capacity": the event's own)
        # What is left (``booking.models.NoRoom``), set by the form's booking
        # (``BookingService.sign_up``); None elsewhere.
        self.left: Any = None


class AlreadyRegistered(BookingError):
    code = "already_registered"
    default_message = "You are already registered for this event."

    def __init__(self, message=None, *, existing=None, **kwargs):
        super().__init__(message, **kwargs)
        self.existing = existing  # the registration that holds the seat, when known


class BookingClosed(BookingError):
    code = "booking_closed"
    default_message = "Bookings for this event closed when it started."


class NotRegistered(BookingError):
    code = "not_registered"
    default_message = "There is no registration for this e-mail address at this event."


class BookingContention(BookingError):
    code = "contention"
    maybe_applied = False  # True when botocore's last attempt was throttled (see translate)
    default_message = "Many people are booking right now. Please try again in a moment."


class InvalidAccessCode(InvalidBooking):
    """An access code that is unknown, for another event, expired, revoked, or not for the
    ticket types ordered (or a code-only ticket type booked without one): nothing stored."""

    code = "invalid_access_code"
    default_message = "This access code is not valid for this booking."

    def __init__(self, message=None, *, field="access_code", **kwargs):
        super().__init__(message, field=field, **kwargs)


class AccessCodeUsedUp(BookingError):
    """The code is valid, but as many orders as it allows already hold it."""

    code = "access_code_used_up"
    default_message = "This access code has been used as many times as it allows."

    def __init__(self, message=None, *, field="access_code", **kwargs):
        super().__init__(message, field=field, **kwargs)


class StaleEdit(BookingError):
    code = "stale_edit"
    default_message = "This event was changed by someone else since you opened it."


class StoreUnavailable(BookingError):
    code = "store_unavailable"
    unreachable = False  # True when no connection could be made (see translate)
    missing_table = False  # True when the store answered that a table does not exist
    default_message = "The booking system is temporarily unavailable. Please try again later."


class LeaseHeld(BookingError):
    code = "lease_held"
    default_message = "Another maintenance run holds this lease. Try again when it has finished."

    def __init__(self, message=None, *, holder=None, expires_at=None, **kwargs):
        super().__init__(message, **kwargs)
        self.holder = holder  # who holds it (host and process), when known
        self.expires_at = expires_at  # epoch seconds when it lapses unless released


class OutcomeUnknown(BookingError):
    """The write may or may not have applied, and re-sending and reading back could not tell.

    Unlike ``StoreUnavailable`` ("nothing happened, try again"), a seat may be held: the
    caller must ask again with the same request id, which answers the truth.
    """

    code = "outcome_unknown"
    default_message = ("We are confirming your booking. Please wait a moment: this page "
                       "checks again by itself.")


class StillDeciding(OutcomeUnknown):
    """The request's deadline passed before its outcome was known: it is pending, and the
    same request asked again (the same request id) answers what happened."""

    code = "still_deciding"


class Overloaded(BookingError):
    """The store throttled this event a moment ago: nothing was sent, try again shortly."""

    code = "overloaded"
    default_message = ("Many people are booking this event right now. Please try again in "
                       "a few seconds.")

    def __init__(self, message=None, *, retry_after: int = 1, **kwargs):
        super().__init__(message, **kwargs)
        self.retry_after = retry_after  # seconds to wait (jittered by whoever raised it)


class RateLimited(BookingError):
    code = "rate_limited"
    default_message = "Too many attempts. Please wait a few minutes and try again."

    def __init__(self, message=None, *, retry_after: int = 60, **kwargs):
        super().__init__(message, **kwargs)
        self.retry_after = retry_after  # seconds until the current window ends


# --- Waiting list (booking/waitlist/engine.py) --------------------------------------------
class SeatsAvailable(BookingError):
    code = "seats_available"
    default_message = "This event still has free seats: book one instead of joining the waiting list."


class AlreadyWaiting(BookingError):
    code = "already_waiting"
    default_message = "You are already on the waiting list for this event."

    def __init__(self, message=None, *, existing=None, **kwargs):
        super().__init__(message, **kwargs)
        self.existing = existing  # the person's entry, when known


class JoinLinkExpired(BookingError):
    code = "join_link_expired"
    default_message = ("This confirmation link has expired. Ask to join the waiting list "
                       "again from the event's page.")


class NotWaiting(BookingError):
    code = "not_waiting"
    default_message = "This e-mail address is not on the waiting list for this event."


class OfferExpired(BookingError):
    code = "offer_expired"
    default_message = ("This offer has expired, and the seat has passed to the next person "
                       "in line. You can join the waiting list again.")


class WebhookNotFound(BookingError):
    code = "webhook_not_found"
    default_message = "This webhook endpoint does not exist."


class CheckinListNotFound(BookingError):
    code = "checkin_list_not_found"
    default_message = "This check-in list does not exist."
