"""Public cancellation pages: confirm, cancel through the link's one conditional write, and
say it is done. Thin, like ``booking/web/views.py``.

An order of several seats (docs/orders.md) gets a box per pass it holds (its type, number
and the name given for it): all of them cancel the order, fewer cancel just those passes
(``svc.cancel(..., passes=...)``). A page opened before asked a quantity per ticket type
(``tickets=...``): still accepted. That form carries a one-time token whose request id
makes a resubmitted form the same cancellation, never a second one."""
from django.http import HttpResponse
from django.shortcuts import redirect, render
from django.urls import reverse
from django.views.decorators.cache import never_cache
from django.views.decorators.http import require_http_methods, require_safe

from booking import links
from booking.errors import EventNotFound, InvalidBooking, NotRegistered
from booking.models import PENDING
from booking.entry import forms as tokens
from booking.entry import limits as rate_limits
from booking.web import confirmation
from booking.entry.error_pages import bad_link, renders_booking_errors
from booking.entry.forms import CancelPassesForm, CancelTicketsForm, seat_choice
from booking.web.middleware import plain_forms_only
from booking.web.views import answers_context, see_other
from booking.wiring import get_booking_service

EXPIRED = "This form has expired. Nothing was cancelled: check the seats and send it again."
CANCELS_LIMITED = ("Too many cancellations from your network. Please wait a few minutes and "
                   "try again.")


@plain_forms_only
@never_cache
@require_http_methods(["GET", "HEAD", "POST"])
@renders_booking_errors
def cancel(request, token):
    service = get_booking_service()
    if request.method == "POST":
        return _cancel(request, service, token)
    opened = confirmation.open_cancel_link(request, service, token)
    if isinstance(opened, HttpResponse):
        return opened
    ref, event, active = opened
    if not active:
        return render(request, "booking/cancel_already.html", {"event": event})
    return _confirm_page(request, event, ref, active, seat_form(service, event, active))


def pass_names(pass_rows) -> list[str]:
    """What to call each seat's pass: the first answer given for it (e.g. its name)."""
    return [rows[0].text if rows else "" for rows in pass_rows or ()]


def seat_form(service, event, registration, data=None):
    """The choice of passes to cancel (``seat_choice``), its passes and names read."""
    if registration.seats <= 1 or registration.status == PENDING:
        return None
    names = pass_names(answers_context(service, event, registration).get("pass_rows"))
    return CancelPassesForm(data, passes=service.passes(registration), names=names)


def _confirm_page(request, event, ref, active, form, *, status=200, form_token=None,
                  message=""):
    return render(request, "booking/cancel_confirm.html", {
        "message": message,
        "event": event, "email": ref.email, "registration": active, "form": form,
        "form_token": form_token or tokens.new_form_token(event.id,
                                                          salt=tokens.CANCEL_FORM_SALT),
        "pending": active.status == PENDING,
        "booking_path": reverse("booking:booking", args=[request.resolver_match.kwargs["token"]])},
        status=status)


def _cancel(request, service, token):
    client = rate_limits.client_address(request)
    try:
        ref = links.read_registration_token(token, salt=links.CANCEL_SALT)
    except links.BadLink:
        rate_limits.check(rate_limits.CANCEL, client, message=CANCELS_LIMITED)
        return bad_link(request)
    # One link counts once: a double click or a second try spends nothing. Organizer
    # staff signed in are not limited on their own events. The event is read for staff
    # only, and for a refusal (the admin's limit hits name it): a cancellation is one write.
    def event():
        try:
            return service.recent_event(ref.event_id)
        except EventNotFound:
            return None  # the cancellation answers that the event is gone

    if not (rate_limits.signed_in_staff(request)
            and rate_limits.organizer_staff_on(request, event())):
        rate_limits.check_once(rate_limits.CANCEL, client, ref.registration_id,
                               message=CANCELS_LIMITED, event=event)
    if "form_token" in request.POST:  # the quantities of an order's seats
        return _cancel_seats(request, service, token, ref)
    try:  # one conditional write: removes exactly the registration the link names
        removed = service.cancel(ref.event_id, email=ref.email,
                                 registration_id=ref.registration_id,
                                 registration=ref.registration)
    except NotRegistered:
        pass  # cancelled meanwhile: the outcome the person asked for
    else:  # its notice owed in the outbox row the write made: the worker sends it
        if removed.status == PENDING:  # a streams request left the line
            return see_other(reverse("booking:cancelled", args=[token]) + "?withdrawn=1")
        return see_other(reverse("booking:cancelled", args=[token]) + f"?seats={removed.seats}")
    return see_other(reverse("booking:cancelled", args=[token]))


def _cancel_seats(request, service, token, ref):
    """Cancel the seats the form names (all of them: the whole order), as one request: the
    form's token is its request id. A bad quantity, an expired or foreign form, or more
    seats than the order still holds: the page again with the error, nothing changed."""
    event = service.get_event(ref.event_id)
    active = service.find_registration(ref.event_id, email=ref.email)
    if not ref.matches(active):  # cancelled meanwhile (or by this very form, resubmitted)
        return see_other(reverse("booking:cancelled", args=[token]))
    by_pass = request.POST.get("choose") == "passes"  # else a page asking quantities
    form: CancelPassesForm | CancelTicketsForm = (
        seat_form(service, event, active, request.POST) if by_pass
        else CancelTicketsForm(request.POST, registration=active, labels=event.ticket_labels))
    form_token = request.POST.get("form_token", "")
    try:
        request_id = tokens.request_id_from_form_token(form_token, event.id,
                                                       salt=tokens.CANCEL_FORM_SALT)
    except links.BadLink:
        return _confirm_page(request, event, ref, active, seat_form(service, event, active),
                             status=400, message=EXPIRED)
    if form is None or not form.is_valid():
        return _confirm_page(request, event, ref, active, form, status=400,
                             form_token=form_token)
    chosen = ({"passes": form.pass_ids()} if isinstance(form, CancelPassesForm)
              else {"tickets": None if form.is_whole else form.tickets()})
    try:
        removed = service.cancel(ref.event_id, email=ref.email,
                                 registration_id=ref.registration_id, request_id=request_id,
                                 **chosen)
    except NotRegistered:
        return see_other(reverse("booking:cancelled", args=[token]))
    except InvalidBooking as error:  # e.g. a part was cancelled meanwhile on another page
        active = service.find_registration(ref.event_id, email=ref.email)
        if not ref.matches(active):
            return see_other(reverse("booking:cancelled", args=[token]))
        return _confirm_page(request, event, ref, active, seat_form(service, event, active),
                             status=400, message=f"{error.message} Nothing was cancelled.")
    # Its notice is owed in the outbox row the cancellation wrote: the worker sends it.
    done = reverse("booking:cancelled", args=[token]) + f"?seats={removed.seats}"
    if removed.part_request_id:  # part of the order: a plain "done", with what is left
        return see_other(done + "&part=1")
    return see_other(done)


@never_cache
@require_safe
@renders_booking_errors
def cancelled(request, token):
    service = get_booking_service()
    opened = confirmation.open_cancel_link(request, service, token)
    if isinstance(opened, HttpResponse):
        return opened
    ref, event, active = opened
    # How many seats the cancellation gave up, as its redirect said (only the wording of
    # the person's own page: "seat" or "2 seats"); anything else reads as unknown.
    seats = request.GET.get("seats", "")
    seats = int(seats) if seats.isascii() and seats.isdigit() and 0 < int(seats) <= 1000 \
        else None
    if active and request.GET.get("part") == "1":  # part of the order: done, the rest kept
        return render(request, "booking/cancelled_part.html", {
            "event": event, "registration": active, "seats_given_up": seats,
            "booking_path": reverse("booking:booking", args=[token])})
    if active:  # not cancelled yet: ask first
        return redirect("booking:cancel", token=token)
    context = {"event": event, "availability": service.page_availability(event.id, fresh=True),
               "withdrawn": request.GET.get("withdrawn") == "1", "seats_given_up": seats,
               "has_waiting_list": service.has_waiting_list(event)}
    return render(request, "booking/cancelled.html", context)
