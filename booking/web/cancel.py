"""Public cancellation pages: confirm, cancel through the link's one conditional write, and
say it is done. Thin, like ``booking/web/views.py``."""
from django.http import HttpResponse
from django.shortcuts import redirect, render
from django.urls import reverse
from django.views.decorators.cache import never_cache
from django.views.decorators.http import require_http_methods, require_safe

from booking import links
from booking.errors import NotRegistered
from booking.mail import sender as mail
from booking.models import PENDING, REJECTED
from booking.web import rate_limits
from booking.web.errors import bad_link, renders_booking_errors
from booking.web.middleware import plain_forms_only
from booking.web.views import see_other
from booking.wiring import get_booking_service, mail_sender

CANCELS_LIMITED = ("Too many cancellations from your network. Please wait a few minutes and "
                   "try again.")


def _read_cancel_link(service, token):
    """(ref, event, the linked registration if it is still stored, else None)."""
    ref = links.read_registration_token(token, salt=links.CANCEL_SALT)
    event = service.get_event(ref.event_id)
    registration = service.find_registration(ref.event_id, email=ref.email)
    return ref, event, registration if ref.matches(registration) else None


def _open_link(request, service, token):
    """(ref, event, the linked registration or None), or the page to answer instead: a bad
    link, or a ``streams`` request decided "no seat" (nothing to cancel, say so)."""
    try:
        ref, event, active = _read_cancel_link(service, token)
    except links.BadLink:
        return bad_link(request)
    if active is not None and active.status == REJECTED:
        return render(request, "booking/rejected.html",
                      {"event": event, "registration": active})
    return ref, event, active


@plain_forms_only
@never_cache
@require_http_methods(["GET", "HEAD", "POST"])
@renders_booking_errors
def cancel(request, token):
    service = get_booking_service()
    if request.method == "POST":
        return _cancel(request, service, token)
    opened = _open_link(request, service, token)
    if isinstance(opened, HttpResponse):
        return opened
    ref, event, active = opened
    template = "booking/cancel_confirm.html" if active else "booking/cancel_already.html"
    return render(request, template, {"event": event, "email": ref.email,
                                      "pending": bool(active and active.status == PENDING)})


def _cancel(request, service, token):
    client = rate_limits.client_address(request)
    try:
        ref = links.read_registration_token(token, salt=links.CANCEL_SALT)
    except links.BadLink:
        rate_limits.check(rate_limits.CANCEL, client, message=CANCELS_LIMITED)
        return bad_link(request)
    # One link counts once: a double click or a second try spends nothing.
    rate_limits.check_once(rate_limits.CANCEL, client, ref.registration_id,
                           message=CANCELS_LIMITED)
    try:  # one conditional write: removes exactly the registration the link names
        removed = service.cancel(ref.event_id, email=ref.email,
                                 registration_id=ref.registration_id,
                                 registration=ref.registration)
    except NotRegistered:
        pass  # cancelled meanwhile: the outcome the person asked for
    else:
        mail.send_soon(mail_sender(), mail.CANCELLATION, removed)
        if removed.status == PENDING:  # a streams request left the line
            return see_other(reverse("booking:cancelled", args=[token]) + "?withdrawn=1")
    return see_other(reverse("booking:cancelled", args=[token]))


@never_cache
@require_safe
@renders_booking_errors
def cancelled(request, token):
    service = get_booking_service()
    opened = _open_link(request, service, token)
    if isinstance(opened, HttpResponse):
        return opened
    ref, event, active = opened
    if active:  # not cancelled yet: ask first
        return redirect("booking:cancel", token=token)
    context = {"event": event, "availability": service.availability(event.id),
               "withdrawn": request.GET.get("withdrawn") == "1",
               "has_waiting_list": service.has_waiting_list(event)}
    return render(request, "booking/cancelled.html", context)
