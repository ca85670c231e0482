"""Domain errors on the public pages: the one map from error to HTTP status, and the page
that shows it (the admin login's throttle and the request filters use it too)."""
import functools

from django.shortcuts import render

from booking.wiring import get_booking_service

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
# Seconds before a page the store could not answer for in time asks again (Retry-After,
# and the busy page's Refresh).
BUSY_RETRY_SECONDS = 2
READ_LATE = ("The booking system is very busy and could not load this page in time. It "
             "loads again by itself in a few seconds.")
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
    """The error's page with its status (and Retry-After when rate limited, busy, or the
    store could not answer)."""
    status = status_for(error)
    response = error_page(request, error.message, status, title=title)
    if isinstance(error, (RateLimited, Overloaded)):
        response["Retry-After"] = str(error.retry_after)
    elif status == 503:
        response["Retry-After"] = str(BUSY_RETRY_SECONDS)
    return response


def busy_page(request):
    """A page the store could not be read for in time: 503, Retry-After, and it loads
    again by itself (``Refresh``) after those seconds."""
    response = error_page(request, READ_LATE, 503, title="Very busy")
    response["Retry-After"] = response["Refresh"] = str(BUSY_RETRY_SECONDS)
    return response


def renders_booking_errors(view):
    """Run the view within the request's deadline for its reads
    (``BookingService.page_deadline``; a booking or cancellation keeps its own), and turn
    a domain error that escapes it into its page and status. A page that could not be
    read in time or at all (a GET or HEAD whose error would be 503, or "not known yet":
    nothing was written) is the busy page, which reloads itself."""
    @functools.wraps(view)
    def wrapper(request, *args, **kwargs):
        try:
            with get_booking_service().page_deadline():
                return view(request, *args, **kwargs)
        except BookingError as error:
            if request.method in ("GET", "HEAD") and status_for(error) in (202, 503):
                return busy_page(request)
            return render_error(request, error)
    return wrapper


def bad_link(request):
    return error_page(request, BAD_LINK, 400)
