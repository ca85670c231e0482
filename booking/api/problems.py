"""Errors of the JSON API as ``application/problem+json`` (RFC 9457): the one map from a
domain error (or a DRF refusal) to a status and a stable problem ``type``.

The ``detail`` is the domain error's own message, the same words the pages show. What
fails before DRF has the request (no route, a body over the limits, a server error) is
answered by ``booking/api/fallbacks.py`` with the same bodies.
"""
from http import HTTPStatus

from django.core.exceptions import RequestDataTooBig
from rest_framework import exceptions
from rest_framework.response import Response

from booking.entry.problem_json import (BODY_TOO_LARGE, PROBLEM_JSON, READ_LATE_KIND, TOO_LARGE,
                                         pending_retry_after, problem_body)
from booking.errors import (AccessCodeUsedUp, AlreadyRegistered, AlreadyWaiting, BookingClosed, BookingContention,
                            BookingError, EventFull, EventNotFound, InvalidAccessCode,
                            InvalidBooking,
                            NotRegistered, NotWaiting, OfferExpired, OutcomeUnknown,
                            Overloaded, RateLimited, SeatsAvailable, StaleEdit, StoreUnavailable,
                            WebhookNotFound, CheckinListNotFound)
from booking.questions.rules import InvalidAnswers


# (status, type slug, title) per domain error; the nearest mapped class wins.
DOMAIN_PROBLEMS = {
    # A keyed request answers 202 instead (``outcome_pending``).
    OutcomeUnknown: (503, "outcome-unknown", "Outcome not known yet"),
    InvalidAccessCode: (400, "invalid-access-code", "Invalid access code"),
    AccessCodeUsedUp: (409, "access-code-used-up", "Access code used up"),
    InvalidBooking: (400, "invalid", "Invalid input"),
    EventNotFound: (404, "event-not-found", "Event not found"),
    WebhookNotFound: (404, "webhook-not-found", "Webhook endpoint not found"),
    CheckinListNotFound: (404, "checkin-list-not-found", "Check-in list not found"),
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
    Overloaded: (429, "overloaded", "Busy: try again shortly"),
    BookingContention: (503, "contention", "Busy"),
    StoreUnavailable: (503, "unavailable", "Temporarily unavailable"),
    BookingError: (503, "booking-error", "Not completed"),
}
# The Idempotency-Key's own answers (draft-ietf-httpapi-idempotency-key-header).
KEY_MISSING = (400, "idempotency-key-missing", "Idempotency-Key missing")
KEY_INVALID = (400, "idempotency-key-invalid", "Idempotency-Key invalid")
KEY_REUSED = (422, "idempotency-key-reused", "Idempotency-Key used for another request")
BAD_LINK = (404, "bad-secret", "Unknown registration secret")
BAD_REQUEST = (400, "bad-request", "Bad request")
NOT_FOUND = (404, "not-found", "Not found")
PERMISSION_DENIED = (403, "permission-denied", "Permission denied")
SERVER_ERROR = (500, "server-error", "Server error")


class Refused(Exception):
    """A refusal the API words itself (a bad key, a bad secret): its problem response."""

    def __init__(self, kind: tuple, detail: str, **options):
        super().__init__(detail)
        self.response = problem(kind, detail, **options)


def problem(kind: tuple, detail: str, *, retry_after: int | None = None,
            **extra) -> Response:
    """A problem+json response of ``kind`` (status, type slug, title)."""
    response = Response(problem_body(kind, detail, **extra), status=kind[0],
                        content_type=PROBLEM_JSON)
    if retry_after is not None:
        response["Retry-After"] = str(retry_after)
    return response


def domain_kind(error: BookingError) -> tuple:
    return next(DOMAIN_PROBLEMS[cls] for cls in type(error).__mro__ if cls in DOMAIN_PROBLEMS)


def from_domain_error(error: BookingError) -> Response:
    """The problem for a domain error (a keyed request's pending answers are not problems:
    ``exception_handler``)."""
    if isinstance(error, InvalidBooking) and error.field == "request_id":
        return problem(KEY_REUSED, error.message)
    extra = {"field": error.field} if isinstance(error, InvalidBooking) and error.field else {}
    if isinstance(error, InvalidAnswers):  # every answer refused, each by its field
        extra["errors"] = dict(error.errors)
    if isinstance(error, EventFull):  # the quota that had no room ("capacity": the event's)
        extra["quota"] = error.quota
    kind = domain_kind(error)
    retry_after = (error.retry_after if isinstance(error, (RateLimited, Overloaded))
                   else pending_retry_after() if kind[0] == 503 else None)
    return problem(kind, error.message, retry_after=retry_after, **extra)


SAFE_METHODS = ("GET", "HEAD", "OPTIONS")
READ_LATE = ("The store did not answer within this request's time. Nothing was changed: "
             "ask again after Retry-After seconds.")
ASK_AGAIN = ("Nothing was written yet. Send the same request with the same "
             "Idempotency-Key after Retry-After seconds: it answers the outcome and never "
             "acts twice.")
CONFIRMING = ("The outcome is not known yet: the store did not answer within this "
              "request's time, or its answer was lost and could not be read back. Send "
              "the same request with the same Idempotency-Key after Retry-After seconds: "
              "it answers the outcome and never acts twice.")


def outcome_pending(detail: str = CONFIRMING) -> Response:
    """202 for a keyed request whose outcome is not known yet (the pages answer 202 too):
    the way to check is the same request with the same key."""
    response = Response({"status": "pending", "detail": detail}, status=202)
    response["Retry-After"] = str(pending_retry_after())
    return response


def exception_handler(error, context):
    """DRF's hook (REST_FRAMEWORK["EXCEPTION_HANDLER"]): every refusal as a problem, and a
    keyed request's unknown outcome as 202 "ask again". So is a keyed request whose every
    attempt met contention: nothing was written, and the same key asked again answers the
    outcome (201, or a definite refusal) where a 409 would read as "full"."""
    if isinstance(error, Refused):
        return error.response
    keyed = bool(getattr(context.get("request"), "idempotency_keyed", False))
    if isinstance(error, OutcomeUnknown) and keyed:
        return outcome_pending()
    if isinstance(error, BookingContention) and keyed:
        return outcome_pending(f"{error.message} {ASK_AGAIN}")
    safe = getattr(context.get("request"), "method", "") in SAFE_METHODS
    if isinstance(error, OutcomeUnknown) and safe:  # a read past the deadline: no write
        return problem(READ_LATE_KIND, READ_LATE, retry_after=pending_retry_after())
    if isinstance(error, BookingError):
        return from_domain_error(error)
    if isinstance(error, RequestDataTooBig):  # DATA_UPLOAD_MAX_MEMORY_SIZE, read by DRF
        return problem(BODY_TOO_LARGE, TOO_LARGE)
    if isinstance(error, exceptions.APIException):
        return from_api_exception(error)
    return None  # a server error: Django logs it, ``fallbacks.server_error`` answers


def from_api_exception(error: exceptions.APIException) -> Response:
    """DRF's refusal (parse error, 415, 405, 406, validation, throttling) as a problem.
    The title is the status's own phrase where DRF's default text is a template
    (``Unsupported media type "{media_type}" in request.``)."""
    slug = error.default_code.replace("_", "-")
    default = str(error.default_detail)
    title = HTTPStatus(error.status_code).phrase if "{" in default else default
    if isinstance(error.detail, str):
        detail, extra = str(error.detail), {}
    else:
        detail, extra = invalid_detail(error.detail), {"errors": error.detail}
    wait = getattr(error, "wait", None)
    return problem((error.status_code, slug, title), detail,
                   retry_after=int(wait) if wait else None, **extra)


def invalid_detail(errors) -> str:
    """"Invalid input: capacity, name." naming the fields refused (``errors`` has them)."""
    fields = sorted(str(name) for name in errors) if isinstance(errors, dict) else []
    named = [name for name in fields if name != "non_field_errors"]
    return f"Invalid input: {', '.join(named)}." if named else "Invalid input."
