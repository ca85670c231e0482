"""Domain errors on the public pages: the one map from error to HTTP status, and the page
that shows it (the admin login's throttle and the request filters use it too)."""
import functools

from django.shortcuts import render

from booking.errors import (AccessCodeUsedUp, AlreadyRegistered, AlreadyWaiting, BookingClosed, BookingContention,
                            BookingError, EventFull, EventNotFound, InvalidBooking,
                            JoinLinkExpired,
                            NotRegistered, NotWaiting, OfferExpired, OutcomeUnknown,
                            Overloaded, RateLimited, SeatsAvailable, StaleEdit, StoreUnavailable)

STATUS_FOR_ERROR = {
    OutcomeUnknown: 202,
    InvalidBooking: 400,
    EventNotFound: 404,
    NotRegistered: 404,
    NotWaiting: 404,
    EventFull: 409,
    AccessCodeUsedUp: 409,
    BookingClosed: 409,
    AlreadyRegistered: 409,
    StaleEdit: 409,
    SeatsAvailable: 409,
    AlreadyWaiting: 409,
    OfferExpired: 410,
    JoinLinkExpired: 410,
    RateLimited: 429,
    Overloaded: 429,
    BookingContention: 503,
    StoreUnavailable: 503,
    BookingError: 503,
}
BAD_LINK = "This link is not valid. Please use the exact link from your confirmation e-mail."


def status_for(error: BookingError) -> int:
    """The HTTP status for a domain error (its nearest mapped class)."""
    return next(STATUS_FOR_ERROR[cls] for cls in type(error).__mro__ if cls in STATUS_FOR_ERROR)


def error_page(request, message: str, status: int, *, title: str | None = None):
    context = {"message": message, "status": status}
    if title is not None:
        context["title"] = title
    return render(request, "booking/error.html", context, status=status)


def render_error(request, error: BookingError, *, title: str | None = None):
    """The error's page with its status (and Retry-After when rate limited)."""
    response = error_page(request, error.message, status_for(error), title=title)
    if isinstance(error, RateLimited):
        response["Retry-After"] = str(error.retry_after)
    return response


def renders_booking_errors(view):
    """Turn a domain error that escapes the view into its page and status."""
    @functools.wraps(view)
    def wrapper(request, *args, **kwargs):
        try:
            return view(request, *args, **kwargs)
        except BookingError as error:
            return render_error(request, error)
    return wrapper


def bad_link(request):
    return error_page(request, BAD_LINK, 400)
