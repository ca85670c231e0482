"""Public pages. Thin: parse input, call the service, render the result or the domain error.

Domain errors become HTTP statuses in one place: ``STATUS_FOR_ERROR``.
"""
import functools

from django.http import HttpResponse, HttpResponseRedirect
from django.shortcuts import redirect, render
from django.urls import reverse
from django.utils import timezone
from django.views.decorators.cache import never_cache
from django.views.decorators.http import require_http_methods, require_safe

from booking import calendar, validation
from booking import links as page_tokens
from booking.mail import sender as mail
from booking.web import rate_limits
from booking.errors import (AlreadyRegistered, BookingClosed, BookingContention, BookingError,
                     EventFull, EventNotFound, InvalidBooking, NotRegistered, OutcomeUnknown,
                     RateLimited, StaleEdit, StoreUnavailable)
from booking.errors import AlreadyWaiting, NotWaiting, OfferExpired, SeatsAvailable
from booking.web.forms import SignupForm
from booking.web.middleware import plain_forms_only
from booking.wiring import get_booking_service, mail_sender

STATUS_FOR_ERROR = {
    OutcomeUnknown: 202,
    InvalidBooking: 400,
    EventNotFound: 404,
    NotRegistered: 404,
    EventFull: 409,
    BookingClosed: 409,
    AlreadyRegistered: 409,
    StaleEdit: 409,
    RateLimited: 429,
    BookingContention: 503,
    StoreUnavailable: 503,
    BookingError: 503,
}
# The waiting list's errors (booking/views_waitlist.py).
STATUS_FOR_ERROR.update({SeatsAvailable: 409, AlreadyWaiting: 409, NotWaiting: 404,
                         OfferExpired: 410})
FORM_EXPIRED = "This form has expired. Please check your details and submit it again."
BAD_LINK = "This link is not valid. Please use the exact link from your confirmation e-mail."
SIGNUPS_LIMITED = ("Too many signups from your network. Please wait a few minutes and try "
                   "again.")
EMAIL_LIMITED = ("Too many signups for this e-mail address. Please wait a while and try "
                 "again.")
CANCELS_LIMITED = ("Too many cancellations from your network. Please wait a few minutes and "
                   "try again.")


def status_for(error: BookingError) -> int:
    """The HTTP status for a domain error (its nearest mapped class)."""
    return next(STATUS_FOR_ERROR[cls] for cls in type(error).__mro__ if cls in STATUS_FOR_ERROR)


def render_error(request, error: BookingError):
    status = status_for(error)
    response = render(request, "booking/error.html",
                      {"message": error.message, "status": status}, status=status)
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


def see_other(url: str) -> HttpResponseRedirect:
    """A 303 redirect: the browser fetches the next page with GET (post/redirect/get)."""
    response = HttpResponseRedirect(url)
    response.status_code = 303
    return response


def bad_link(request):
    return render(request, "booking/error.html", {"message": BAD_LINK, "status": 400}, status=400)


@require_safe
@renders_booking_errors
def event_list(request):
    service = get_booking_service()
    events = service.list_events()
    seats = service.availabilities(events)
    rows = [(event, seats[event.id]) for event in events if event.id in seats]
    return render(request, "booking/event_list.html", {"rows": rows})


@plain_forms_only
@require_http_methods(["GET", "HEAD", "POST"])
@renders_booking_errors
def event_detail(request, event_id):
    service = get_booking_service()
    event = service.get_event(event_id)
    if request.method == "POST":
        return _signup(request, service, event)
    form = SignupForm()
    return _render_event(request, service, event, form, page_tokens.new_form_token(event.id))


def _render_event(request, service, event, form, form_token, status=200, **extra):
    context = {"event": event, "availability": service.availability(event.id), "form": form,
               "form_token": form_token, "has_waiting_list": service.has_waiting_list(event),
               **extra}
    return render(request, "booking/event_detail.html", context, status=status)


def _signup(request, service, event):
    rate_limits.check("BOOKING_SIGNUP_RATE", rate_limits.client_address(request),
                      message=SIGNUPS_LIMITED)
    form = SignupForm(request.POST)
    token = request.POST.get("token", "")
    try:
        request_id = page_tokens.request_id_from_form_token(token, event.id)
    except page_tokens.BadLink:
        form.is_valid()
        form.add_error(None, FORM_EXPIRED)
        return _render_event(request, service, event, form, page_tokens.new_form_token(event.id), 400)
    if not form.is_valid():
        return _render_event(request, service, event, form, token, 400)
    email_key = validation.normalize_email(form.cleaned_data["email"])
    rate_limits.check("BOOKING_SIGNUP_EMAIL_RATE", email_key, message=EMAIL_LIMITED)
    started = timezone.now()
    try:
        registration = service.book(event.id, name=form.cleaned_data["name"],
                                    email=form.cleaned_data["email"], request_id=request_id)
    except EventNotFound:
        raise
    except OutcomeUnknown as error:  # a seat may be held: ask again with the same token
        context = {"event": event, "message": error.message, "form": form, "token": token}
        return render(request, "booking/in_progress.html", context, status=status_for(error))
    except EventFull as error:  # a definite answer: the event as full, never the form again
        return _render_event(request, service, event, None, page_tokens.new_form_token(event.id),
                             status_for(error), just_missed=True,
                             waitlist_form=SignupForm(initial=form.cleaned_data))
    except AlreadyRegistered as error:  # offer the confirmation again, by e-mail only
        return _render_event(request, service, event, None, "", status_for(error),
                             already_email=form.cleaned_data["email"],
                             already_pending=getattr(error.existing, "status", "") == "pending")
    except BookingError as error:
        # Keep the token: resubmitting after a 503 must not book a second seat.
        form.apply_error(error)
        return _render_event(request, service, event, form, token, status_for(error))
    # A replayed submission returns the earlier booking, whose e-mail is already owed.
    if registration.registered_at >= started and registration.is_confirmed:
        mail.send_soon(mail_sender(), mail.CONFIRMATION, registration, event=event)
    confirmation = page_tokens.registration_token(registration, salt=page_tokens.CONFIRMATION_SALT)
    return see_other(reverse("booking:booked", args=[event.id, confirmation]))


RESENT = ("If this address is registered for the event, its confirmation with the "
          "cancellation link is on its way to that inbox.")


@plain_forms_only
@require_http_methods(["POST"])
@renders_booking_errors
def resend(request, event_id):
    """E-mail the confirmation again to a registered address (never shown on screen);
    limited like signups, per network and per address."""
    service = get_booking_service()
    event = service.get_event(event_id)
    rate_limits.check("BOOKING_SIGNUP_RATE", rate_limits.client_address(request),
                      message=SIGNUPS_LIMITED)
    try:
        typed = validation.clean_typed_email(request.POST.get("email", ""))
    except InvalidBooking as error:
        return render_error(request, error)
    rate_limits.check("BOOKING_SIGNUP_EMAIL_RATE", validation.normalize_email(typed),
                      message=EMAIL_LIMITED)
    registration = service.find_registration(event.id, email=typed)
    if registration is not None and registration.is_confirmed:  # a decision mails itself
        mail.resend_soon(mail_sender(), registration, event=event)
    return render(request, "booking/resent.html", {"event": event, "message": RESENT})


@require_safe
@renders_booking_errors
def event_ics(request, event_id):
    """The event as an iCalendar file (RFC 5545) for any calendar application."""
    event = get_booking_service().get_event(event_id)
    if event.starts_at is None:
        raise EventNotFound("This event has no date yet, so there is nothing to add to a "
                            "calendar.")
    response = HttpResponse(calendar.ics(event), content_type="text/calendar; charset=utf-8")
    response["Content-Disposition"] = f'attachment; filename="event-{event.id}.ics"'
    return response


def _cancel_url(request, registration) -> str:
    token = page_tokens.registration_token(registration, salt=page_tokens.CANCEL_SALT)
    return page_tokens.absolute_url(reverse("booking:cancel", args=[token]))


@never_cache  # shows the e-mail and the cancellation link
@require_safe
@renders_booking_errors
def booked(request, event_id, token):
    try:
        ref = page_tokens.read_registration_token(token, salt=page_tokens.CONFIRMATION_SALT)
    except page_tokens.BadLink:
        return bad_link(request)
    if ref.event_id != event_id:
        return bad_link(request)
    service = get_booking_service()
    event = service.get_event(event_id)
    registration = service.find_registration(event_id, email=ref.email)
    context = {"event": event, "availability": service.availability(event_id)}
    if not ref.matches(registration):
        return render(request, "booking/booking_gone.html", context, status=410)
    context.update(registration=registration, cancel_url=_cancel_url(request, registration))
    if not registration.is_confirmed:
        return _provisional(request, service, context)
    return render(request, "booking/booked.html", context)


PENDING_REFRESH_SECONDS = 3


def _provisional(request, service, context):
    """A streams booking before its decision (the page reloads itself until then), or
    its rejection."""
    registration = context["registration"]
    if registration.status != "pending":
        return render(request, "booking/rejected.html", context)
    context["place"] = service.place_in_line(registration)
    response = render(request, "booking/pending.html", context)
    response["Refresh"] = str(PENDING_REFRESH_SECONDS)
    return response


def _read_cancel_link(service, token):
    """(ref, event, the linked registration if it is still stored, else None)."""
    ref = page_tokens.read_registration_token(token, salt=page_tokens.CANCEL_SALT)
    event = service.get_event(ref.event_id)
    registration = service.find_registration(ref.event_id, email=ref.email)
    return ref, event, registration if ref.matches(registration) else None


def _no_seat(request, event, registration):
    """A ``streams`` request decided "no seat": nothing to cancel, say so."""
    return render(request, "booking/rejected.html",
                  {"event": event, "registration": registration})


@plain_forms_only
@never_cache
@require_http_methods(["GET", "HEAD", "POST"])
@renders_booking_errors
def cancel(request, token):
    service = get_booking_service()
    if request.method == "POST":
        rate_limits.check("BOOKING_CANCEL_RATE", rate_limits.client_address(request),
                          message=CANCELS_LIMITED)
        try:
            ref = page_tokens.read_registration_token(token, salt=page_tokens.CANCEL_SALT)
        except page_tokens.BadLink:
            return bad_link(request)
        try:  # one conditional write: removes exactly the registration the link names
            removed = service.cancel(ref.event_id, email=ref.email,
                                     registration_id=ref.registration_id,
                                     registration=ref.registration)
        except NotRegistered:
            pass  # cancelled meanwhile: the outcome the person asked for
        else:
            mail.send_soon(mail_sender(), mail.CANCELLATION, removed)
            if removed.status == "pending":  # a streams request left the line
                return see_other(reverse("booking:cancelled", args=[token]) + "?withdrawn=1")
        return see_other(reverse("booking:cancelled", args=[token]))
    try:
        ref, event, active = _read_cancel_link(service, token)
    except page_tokens.BadLink:
        return bad_link(request)
    if active is not None and active.status == "rejected":
        return _no_seat(request, event, active)
    template = "booking/cancel_confirm.html" if active else "booking/cancel_already.html"
    return render(request, template, {"event": event, "email": ref.email,
                                      "pending": bool(active and active.status == "pending")})


@never_cache
@require_safe
@renders_booking_errors
def cancelled(request, token):
    service = get_booking_service()
    try:
        ref, event, active = _read_cancel_link(service, token)
    except page_tokens.BadLink:
        return bad_link(request)
    if active is not None and active.status == "rejected":
        return _no_seat(request, event, active)
    if active:  # not cancelled yet: ask first
        return redirect("booking:cancel", token=token)
    context = {"event": event, "availability": service.availability(event.id),
               "withdrawn": request.GET.get("withdrawn") == "1"}
    return render(request, "booking/cancelled.html", context)
