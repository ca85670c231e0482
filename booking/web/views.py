"""Public pages of an event: the list, the event with its signup form, the booking's page,
the calendar file. Thin: parse input, call the service, render the result or the domain
error (``booking/entry/error_pages.py`` maps errors to statuses).
"""
from django.http import HttpResponse, HttpResponseRedirect
from django.templatetags.static import static
from django.shortcuts import render
from django.urls import reverse
from django.views.decorators.cache import never_cache
from django.views.decorators.http import require_http_methods, require_safe

from booking import calendar, links, validation
from booking.errors import (AccessCodeUsedUp, AlreadyRegistered, BookingError, EventFull,
                            EventNotFound, InvalidAccessCode, InvalidBooking, OutcomeUnknown,
                            Overloaded, RateLimited, beyond_quota)
from booking.mail import sender as mail
from booking.models import CAPACITY_QUOTA, PENDING
from booking.questions.service import answer_rows
from booking.entry import forms as tokens
from booking.entry import limits as rate_limits
from booking.entry.limits import CODES_LIMITED, EMAIL_LIMITED, SIGNUPS_LIMITED
from booking.web import confirmation, passes
from booking.entry.error_pages import render_error, renders_booking_errors, status_for
from booking.entry.forms import SignupForm
from booking.web.middleware import plain_forms_only
from booking.wiring import get_booking_service, mail_sender, web_settings

FORM_EXPIRED = "This form has expired. Please check your details and submit it again."
RESENDS_LIMITED = ("Too many requests from your network. Please wait a few minutes and try "
                   "again.")
RESENT = ("If this address is registered for the event, its confirmation with the "
          "cancellation link is on its way to that inbox.")
HELD_FOR_CODES = "access codes"
HELD_FOR_OFFERS = "access codes or waiting-list offers"
PENDING_REFRESH_SECONDS = 3
AUTO_RECHECKS = 5  # the 202 page checks again by itself this often, then waits for a click
RECHECK_UNANSWERED = ("We could not reach the booking system just now, so we cannot tell "
                      "yet whether you are booked. Checking again is safe: it can never book "
                      "you twice. If you are booked, your confirmation e-mail is on its way.")
RECHECK_STILL_UNKNOWN = ("We still cannot tell whether you are booked. Checking again is "
                         "safe: it can never book you twice. If you are booked, your "
                         "confirmation e-mail is on its way.")


def see_other(url: str) -> HttpResponseRedirect:
    """A 303 redirect: the browser fetches the next page with GET (post/redirect/get)."""
    response = HttpResponseRedirect(url)
    response.status_code = 303
    return response


def answers_context(service, event, registration) -> dict:
    """What a page showing the order's answers needs (empty for an event without questions)."""
    if not event.questions_version:
        return {}
    order, passes = answer_rows(event.questions, service.answers(registration))
    return {"answer_rows": order, "pass_rows": passes,
            "answers_editable": bool(event.questions) and not event.has_started}


def booked_url(registration) -> str:
    """The booking's own page (its confirmation link)."""
    token = links.registration_token(registration, salt=links.CONFIRMATION_SALT)
    return reverse("booking:booked", args=[registration.event_id, token])


FAVICON = "booking/favicon.ico"


@require_safe
def favicon(request):
    """``/favicon.ico``, which browsers ask for on any page (the admin and the API docs
    too): a redirect to the static file (its hashed name in production), cached a day."""
    response = HttpResponseRedirect(static(FAVICON))
    response["Cache-Control"] = "public, max-age=86400"
    return response


PAST_SHOWN = 10  # started events listed below the upcoming ones


@require_safe
@renders_booking_errors
def event_list(request):
    service = get_booking_service()
    events = service.list_events()
    seats = service.availabilities(events)
    rows = [(event, seats[event.id]) for event in events if event.id in seats]
    # Soonest first; events that have started (and so closed) go below, latest first.
    upcoming = [row for row in rows if not row[0].has_started]
    past = [row for row in reversed(rows) if row[0].has_started][:PAST_SHOWN]
    return render(request, "booking/event_list.html", {"rows": upcoming, "past": past})


@plain_forms_only
@require_http_methods(["GET", "HEAD", "POST"])
@renders_booking_errors
def event_detail(request, event_id):
    if request.method == "POST" and "checks" in request.POST:
        return _recheck(request, event_id)
    service = get_booking_service()
    event = service.recent_event(event_id)
    if request.method == "POST":
        return _signup(request, service, event)
    code = (request.GET.get("code") or "").strip()[:64] or None  # a ?code=... link
    if code is None:
        return render_event(request, service, event, None, tokens.new_form_token(event.id))
    return _code_link(request, service, event, code)


def _code_link(request, service, event, code: str):
    """A ``?code=...`` link: the code filled in, the types it unlocks shown. Checking it
    spends the wrong-code limit as a booking does (a right code gives its attempt back);
    past the limit the code is not checked: the page says so (429), nothing unlocked."""
    try:
        unlocked = rate_limits.code_check(
            rate_limits.client_address(request),
            lambda: service.access_code_check(event.id, code), message=CODES_LIMITED)
    except RateLimited as error:
        form = SignupForm(event=event, unlocked=(), initial={"access_code": code})
        response = render_event(request, service, event, form,
                                tokens.new_form_token(event.id), status_for(error),
                                code_limited=error.message)
        response["Retry-After"] = str(error.retry_after)
        return response
    return render_event(request, service, event, None, tokens.new_form_token(event.id),
                        code=code, unlocked=unlocked or ())


def render_event(request, service, event, form, form_token, status=200, *, code=None,
                 unlocked=(), **extra):
    """The event's page: its seats, and the signup (or waiting-list) form (a new one when
    ``form`` is None: an event with orders asks a quantity per ticket type). The seats are
    read cheaply and within the request's deadline (``page_availability``): while the event
    cools down, or when the read is throttled or late, the page says seats are going fast
    (no count) and shows the form; the booking itself answers."""
    availability = service.page_availability(event.id)
    if form is None and not extra:
        # A ?code=... link fills the code in and shows the types it unlocks (checked
        # within the wrong-code limit: ``_code_link``).
        form = SignupForm(event=event, availability=availability, unlocked=unlocked,
                          initial={"access_code": code} if code else None)
        if unlocked:
            extra_code = {"code_applied": code.upper(),
                          "code_unlocks": [event.label(t) for t in unlocked]}
        else:
            extra_code = {}
    else:
        extra_code = {}
    for shown in (form, extra.get("quota_waitlist_form")):
        if isinstance(shown, SignupForm) and availability is not None:
            shown.show_availability(availability)  # the hints on every rendering, errors too
    waiting_list = service.has_waiting_list(event)
    context = {"event": event, "availability": availability, "form": form,
               "form_token": form_token, "has_waiting_list": waiting_list,
               # What held seats are held for (``_seats.html``): without a waiting list,
               # only access codes' reserved seats are.
               "held_for": HELD_FOR_OFFERS if waiting_list else HELD_FOR_CODES,
               **extra_code, **extra}
    return render(request, "booking/event_detail.html", context, status=status)


def read_submission(request, event):
    """A posted signup form, within the abuse limits: (form, token, request id).

    An expired or foreign token gives the form with that error, a fresh token and no
    request id; an invalid form gives the form, its own token and no request id. A valid
    token counts once against the network's limit and the address's (from this network):
    resubmitting it (a double click, the 202 page's re-check) spends nothing. The form's
    ``asked_before`` says what that count found (``rate_limits.check_signup``).
    """
    client = rate_limits.client_address(request)
    form, token = SignupForm(request.POST, event=event), request.POST.get("token", "")
    limited = not rate_limits.organizer_staff_on(request, event)  # staff: on their events
    try:
        request_id = tokens.request_id_from_form_token(token, event.id)
    except links.BadLink:
        if limited:
            _limit(form, lambda: rate_limits.check(
                rate_limits.SIGNUP, client, message=SIGNUPS_LIMITED, event=event))
        form.is_valid()
        form.add_error(None, FORM_EXPIRED)
        return form, tokens.new_form_token(event.id), None
    if not form.is_valid():
        if limited:
            _limit(form, lambda: rate_limits.check_signup(
                client, request_id, message=SIGNUPS_LIMITED, event=event))
        return form, token, None
    form.asked_before = None
    if limited:
        form.asked_before = _limit(form, lambda: rate_limits.check_signup(
            client, request_id, email=form.cleaned_data["email"], message=SIGNUPS_LIMITED,
            email_message=EMAIL_LIMITED, event=event))
    return form, token, request_id


class FormLimited(RateLimited):
    """A limit refused a posted form: ``form`` (bound, what was typed) is re-shown with
    the message, 429, instead of a bare error page."""

    def __init__(self, error: RateLimited, form):
        super().__init__(error.message, retry_after=error.retry_after)
        self.form = form


def _limit(form, check):
    try:
        return check()
    except RateLimited as error:
        raise FormLimited(error, form) from error


def limited_form_page(request, service, event, error: FormLimited, token, **extra):
    """The event's page with the refused form as typed, the limit's message above it, the
    token kept (sending it again once the window has passed counts once), 429."""
    form = error.form
    form.is_valid()
    form.add_error(None, error.message)
    response = render_event(request, service, event, form, token, status_for(error), **extra)
    response["Retry-After"] = str(error.retry_after)
    return response


def _signup(request, service, event, *, rechecking=False):
    try:
        service.turn_away_if_busy(event.id)  # before the limits spend a write on it
    except Overloaded as error:
        if rechecking:
            raise  # the re-check's page says "busy, still checking"
        form = SignupForm(request.POST, event=event)
        form.is_valid()  # what was typed stays in the form
        return _busy(request, service, event, form, request.POST.get("token", ""), error)
    try:
        form, token, request_id = read_submission(request, event)
    except FormLimited as error:
        if rechecking:
            raise
        return limited_form_page(request, service, event, error, request.POST.get("token", ""))
    if request_id is None:
        _code_checked_too(request, service, event, form)
        return render_event(request, service, event, form, token, 400)
    try:
        with rate_limits.code_attempt(rate_limits.client_address(request), form.code(),
                                      message=CODES_LIMITED):
            outcome = service.sign_up(event.id, name=form.cleaned_data["name"],
                                      email=form.cleaned_data["email"],
                                      request_id=request_id, tickets=form.tickets(),
                                      access_code=form.code(), answers=form.answers(),
                                      pass_answers=form.pass_answers(),
                                      # the 202 page's re-check asks again by definition
                                      again=True if rechecking else form.asked_before)
    except EventNotFound:
        raise
    except OutcomeUnknown as error:  # a seat may be held: ask again with the same token
        return _in_progress(request, event.id, form, token, error.message, 202)
    except EventFull as error:  # a definite answer: the event as full, never the form again
        return _full(request, service, event, token, form, error)
    except AlreadyRegistered as error:  # offer the confirmation again, by e-mail only
        return render_event(request, service, event, None, "", status_for(error),
                            already_email=form.cleaned_data["email"],
                            already_pending=getattr(error.existing, "status", "") == PENDING)
    except BookingError as error:
        if rechecking and status_for(error) in (429, 503):
            raise  # after a 202 nobody knows yet: the re-check's page says so
        # Keep the token: resubmitting after a 503 must not book a second seat.
        if isinstance(error, Overloaded):
            return _busy(request, service, event, form, token, error)
        form.apply_error(error)
        return render_event(request, service, event, form, token, status_for(error))
    # Its confirmation is owed in the outbox row the booking wrote (``outcome.owed``): the
    # booking worker sends it (a replayed submission's, once, already).
    return see_other(booked_url(outcome.registration))


def _full(request, service, event, token, form, error: EventFull):
    """The answer "no room for this order", with what the service says is left
    (``error.left``): the form as typed with which quota was full (and, if the order may
    wait as it is, a waiting-list form), or the event as full."""
    left = error.left
    seats = left.seats if left is not None else None
    if seats is None and event.offers_orders and error.quota != CAPACITY_QUOTA:
        # A quota is full, the rest unknown: say so on the form as typed, no counts.
        form = SignupForm(request.POST, event=event)
        form.is_valid()
        form.add_error(None, error.message + " Nothing was booked: choose other tickets.")
        return render_event(request, service, event, form, token, status_for(error),
                            full_quota=error.quota)
    if seats is not None and not seats.is_full:
        # The order did not fit one quota: say which, and offer what is still left.
        form = SignupForm(request.POST, event=event, availability=seats)
        form.is_valid()
        if left.beyond is not None:  # more than the quota has in all: say so, no line
            form.add_error(None, beyond_quota(*left.beyond).message + " Nothing was booked: "
                           "choose fewer tickets.")
        else:
            form.add_error(None, error.message + " Nothing was booked: choose other tickets.")
        waiting = {}
        if left.may_wait:  # wait in line for exactly this order
            waiting = {"quota_waitlist_form": SignupForm(
                initial=form.cleaned_data, event=event, availability=seats,
                auto_id="waitlist_%s"), "waitlist_token": tokens.new_form_token(event.id)}
        return render_event(request, service, event, form, token, status_for(error),
                            full_quota=error.quota, **waiting)
    return render_event(request, service, event, None, tokens.new_form_token(event.id),
                        status_for(error), just_missed=True,
                        waitlist_form=SignupForm(initial=form.cleaned_data))


def _code_checked_too(request, service, event, form) -> None:
    """A refused form's access code checked as well, so that every error shows at once: as
    at booking, a wrong code spends the network's wrong-code allowance (past it, the limit's
    message); nothing is stored."""
    code = (form.cleaned_data.get("access_code") or "").strip() if hasattr(
        form, "cleaned_data") else ""
    if not code or "access_code" in form.errors:
        return
    try:
        with rate_limits.code_attempt(rate_limits.client_address(request), code,
                                      message=CODES_LIMITED):
            service.check_access_code(event.id, code, form.tickets() or {})
    except (InvalidAccessCode, AccessCodeUsedUp, RateLimited) as error:
        form.add_error("access_code", error.message)


def _busy(request, service, event, form, token, error: Overloaded):
    """The event's page with the form as typed and the token kept (sending it again can
    never book twice), saying "busy, try again in a few seconds": nothing was sent."""
    form.apply_error(error)
    response = render_event(request, service, event, form, token, status_for(error))
    response["Retry-After"] = str(error.retry_after)
    return response


def _recheck(request, event_id):
    """The 202 page's "check again" (automatic or clicked): a definite answer is shown as
    usual, but a busy or unreachable store (or a limit) answers the same page again,
    saying plainly that it is not known yet, never a bare error page."""
    try:
        service = get_booking_service()
        return _signup(request, service, service.recent_event(event_id), rechecking=True)
    except BookingError as error:
        if status_for(error) not in (429, 503):
            return render_error(request, error)
        form = SignupForm(request.POST)
        form.is_valid()
        message = error.message if status_for(error) == 429 else RECHECK_UNANSWERED
        response = _in_progress(request, event_id, form, request.POST.get("token", ""),
                                message, status_for(error))
        if isinstance(error, (Overloaded, RateLimited)):  # when asking again makes sense
            response["Retry-After"] = str(error.retry_after)
        return response


def _in_progress(request, event_id, form, token, message, status):
    """The "confirming your booking" page: what is known, and a button that asks again with
    the same token (pressed by itself a few times)."""
    try:
        checks = int(request.POST.get("checks", 0)) + 1
    except ValueError:
        checks = 1
    if checks > AUTO_RECHECKS and status == 202:
        message = RECHECK_STILL_UNKNOWN
    context = {"event_id": event_id, "message": message, "form": form, "token": token,
               "checks": checks, "automatic": checks <= AUTO_RECHECKS and status != 429}
    return render(request, "booking/in_progress.html", context, status=status)


@plain_forms_only
@require_http_methods(["POST"])
@renders_booking_errors
def resend(request, event_id):
    """E-mail the confirmation again to a registered address (never shown on screen).

    The request does the same work whether or not the address is registered: the lookup
    and the e-mail run off the request's thread, handed over once the answer has been
    sent, so neither the answer nor its timing tells who is registered. Limited per network (never the signups' allowance), and per
    registration in what is actually sent.
    """
    service = get_booking_service()
    event = service.get_event(event_id)
    if not rate_limits.organizer_staff_on(request, event):
        rate_limits.check(rate_limits.RESEND, rate_limits.client_address(request),
                          message=RESENDS_LIMITED, event=event)
    try:
        typed = validation.clean_typed_email(request.POST.get("email", ""))
    except InvalidBooking as error:
        return render_error(request, error)
    response = render(request, "booking/resent.html", {"event": event, "message": RESENT})
    return after_response(response, lambda: mail.resend_when_registered(
        mail_sender(), lambda: service.find_registration(event.id, email=typed), event=event,
        allowed=lambda registration: rate_limits.allows(rate_limits.RESEND_MAIL,
                                                        registration.registration_id)))


def after_response(response, job):
    """Run ``job`` once the response has been sent: the WSGI server (and Django's test
    client) closes a response after its last byte, so nothing ``job`` does can slow the
    answer down."""
    close = response.close

    def close_then_run():
        close()
        job()
    response.close = close_then_run
    return response


@require_safe
@renders_booking_errors
def event_ics(request, event_id):
    """The event as an iCalendar file (RFC 5545) for any calendar application."""
    event = get_booking_service().get_event(event_id)
    if event.starts_at is None:
        raise EventNotFound("This event has no date yet, so there is nothing to add to a "
                            "calendar.")
    response = HttpResponse(calendar.ics(event, site_url=web_settings().site_url),
                            content_type="text/calendar; charset=utf-8")
    response["Content-Disposition"] = f'attachment; filename="event-{event.id}.ics"'
    return response


@never_cache  # shows the e-mail and the cancellation link
@require_safe
@renders_booking_errors
def booked(request, event_id, token):
    opened = confirmation.open_link(request, event_id, token)
    if confirmation.is_response(opened):
        return opened
    service, event, ref, registration = opened
    # "You got the last one" only from a read at this instant; none in a rush (bounded).
    context = {"event": event, "availability": service.page_availability(event_id,
                                                                           fresh=True)}
    if not ref.matches(registration):
        return render(request, "booking/booking_gone.html", context, status=410)
    context.update(registration=registration,
                   cancel_url=links.cancel_url(registration, site_url=web_settings().site_url),
                   booking_url=links.booking_url(registration, site_url=web_settings().site_url))
    context.update(answers_context(service, event, registration),
                   answers_url=reverse("booking:answers", args=[event_id, token]))
    if not registration.is_confirmed:
        return _provisional(request, service, context)
    context.update(passes.pass_context(service, event, registration))
    return render(request, "booking/booked.html", context)


def _provisional(request, service, context):
    """A streams booking before its decision (the page reloads itself until then), or
    its rejection."""
    registration = context["registration"]
    if registration.status != PENDING:
        return render(request, "booking/rejected.html", context)
    context["place"] = service.place_in_line(registration)
    response = render(request, "booking/pending.html", context)
    response["Refresh"] = str(PENDING_REFRESH_SECONDS)
    return response
