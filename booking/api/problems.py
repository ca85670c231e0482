"""Errors of the JSON API as ``application/problem+json`` (RFC 9457): the one map from a
domain error (or a DRF refusal) to a status and a stable problem ``type``.

The ``detail`` is the domain error's own message, the same words the pages show.
"""
from rest_framework import exceptions
from rest_framework.response import Response

from booking.errors import (AlreadyRegistered, AlreadyWaiting, BookingClosed, BookingContention,
                            BookingError, EventFull, EventNotFound, InvalidBooking,
                            NotRegistered, NotWaiting, OfferExpired, OutcomeUnknown,
                            RateLimited, SeatsAvailable, StaleEdit, StoreUnavailable,
                            WebhookNotFound)

PROBLEM_JSON = "application/problem+json"
TYPE_BASE = "/api/v1/problems/"
IN_FLIGHT_RETRY_SECONDS = 1
UNKNOWN_RETRY_SECONDS = 2

# (status, type slug, title) per domain error; the nearest mapped class wins.
DOMAIN_PROBLEMS = {
    # A keyed request answers 202 instead (``outcome_pending``).
    OutcomeUnknown: (503, "outcome-unknown", "Outcome not known yet"),
    InvalidBooking: (400, "invalid", "Invalid input"),
    EventNotFound: (404, "event-not-found", "Event not found"),
    WebhookNotFound: (404, "webhook-not-found", "Webhook endpoint not found"),
    NotRegistered: (404, "not-registered", "Not registered"),
    NotWaiting: (404, "not-waiting", "Not on the waiting list"),
    EventFull: (409, "event-full", "Event full"),
    BookingClosed: (409, "booking-closed", "Booking closed"),
    AlreadyRegistered: (409, "already-registered", "Already registered"),
    StaleEdit: (412, "stale-edit", "Changed since read"),
    SeatsAvailable: (409, "seats-available", "Seats available"),
    AlreadyWaiting: (409, "already-waiting", "Already on the waiting list"),
    OfferExpired: (410, "offer-expired", "Offer expired"),
    RateLimited: (429, "rate-limited", "Too many requests"),
    BookingContention: (503, "contention", "Busy"),
    StoreUnavailable: (503, "unavailable", "Temporarily unavailable"),
    BookingError: (503, "booking-error", "Not completed"),
}
# The Idempotency-Key's own answers (draft-ietf-httpapi-idempotency-key-header).
KEY_MISSING = (400, "idempotency-key-missing", "Idempotency-Key missing")
KEY_INVALID = (400, "idempotency-key-invalid", "Idempotency-Key invalid")
KEY_REUSED = (422, "idempotency-key-reused", "Idempotency-Key used for another request")
IN_FLIGHT = (409, "request-in-flight", "A request with this key is being processed")
BAD_LINK = (404, "bad-secret", "Unknown registration secret")
BAD_REQUEST = (400, "bad-request", "Bad request")


class Refused(Exception):
    """A refusal the API words itself (a bad key, a bad secret): its problem response."""

    def __init__(self, kind: tuple, detail: str, **options):
        super().__init__(detail)
        self.response = problem(kind, detail, **options)


def problem(kind: tuple, detail: str, *, retry_after: int | None = None,
            **extra) -> Response:
    """A problem+json response of ``kind`` (status, type slug, title)."""
    status, slug, title = kind
    body = {"type": TYPE_BASE + slug, "title": title, "status": status, "detail": detail,
            **extra}
    response = Response(body, status=status, content_type=PROBLEM_JSON)
    if retry_after is not None:
        response["Retry-After"] = str(retry_after)
    return response


def domain_kind(error: BookingError) -> tuple:
    return next(DOMAIN_PROBLEMS[cls] for cls in type(error).__mro__ if cls in DOMAIN_PROBLEMS)


def from_domain_error(error: BookingError, *, keyed: bool = False) -> Response:
    """The problem for a domain error. ``keyed``: the request carried an Idempotency-Key,
    so contention (every attempt refused, nothing written) is "in flight: retry later"."""
    if isinstance(error, InvalidBooking) and error.field == "request_id":
        return problem(KEY_REUSED, error.message)
    if keyed and isinstance(error, BookingContention):
        return problem(IN_FLIGHT, error.message, retry_after=IN_FLIGHT_RETRY_SECONDS)
    extra = {"field": error.field} if isinstance(error, InvalidBooking) and error.field else {}
    if isinstance(error, EventFull):  # the quota that had no room ("capacity": the event's)
        extra["quota"] = error.quota
    retry_after = (error.retry_after if isinstance(error, RateLimited)
                   else UNKNOWN_RETRY_SECONDS if isinstance(error, OutcomeUnknown) else None)
    return problem(domain_kind(error), error.message, retry_after=retry_after, **extra)


CONFIRMING = ("The outcome is not known yet: the store's answer was lost and could not be "
              "read back. Send the same request with the same Idempotency-Key after "
              "Retry-After seconds: it answers the outcome and never acts twice.")


def outcome_pending() -> Response:
    """202 for a keyed request whose outcome is not known yet (the pages answer 202 too):
    the way to check is the same request with the same key."""
    response = Response({"status": "pending", "detail": CONFIRMING}, status=202)
    response["Retry-After"] = str(UNKNOWN_RETRY_SECONDS)
    return response


def exception_handler(error, context):
    """DRF's hook (REST_FRAMEWORK["EXCEPTION_HANDLER"]): every refusal as a problem, and a
    keyed request's unknown outcome as 202 "ask again"."""
    if isinstance(error, Refused):
        return error.response
    keyed = bool(getattr(context.get("request"), "idempotency_keyed", False))
    if isinstance(error, OutcomeUnknown) and keyed:
        return outcome_pending()
    if isinstance(error, BookingError):
        return from_domain_error(error, keyed=bool(getattr(context.get("request"),
                                                           "idempotency_keyed", False)))
    if isinstance(error, exceptions.APIException):
        slug = error.default_code.replace("_", "-")
        detail = error.detail if isinstance(error.detail, str) else "Invalid input."
        extra = {} if isinstance(error.detail, str) else {"errors": error.detail}
        wait = getattr(error, "wait", None)
        return problem((error.status_code, slug, str(error.default_detail)), str(detail),
                       retry_after=int(wait) if wait else None, **extra)
    return None
