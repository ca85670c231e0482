"""A booking's own page, opened by its sealed link (the token of its cancellation link,
``booking/links.py``): the order, its reference, the event, "e-mail my confirmation
again", the answers to the organizer's questions with the link that changes them
(``booking/web/answers.py``), and a form to cancel some or all of its seats, pass by pass
(posted to the cancel page's own path, ``booking/web/cancel.py``, so a cancellation has
one way in). Thin, like the others.
"""
from django.http import HttpResponse
from django.shortcuts import render
from django.urls import reverse
from django.views.decorators.cache import never_cache
from django.views.decorators.http import require_POST, require_safe

from booking import links
from booking.mail import sender as mail
from booking.models import PENDING
from booking.entry import forms as tokens
from booking.entry import limits as rate_limits
from booking.web import confirmation, passes
from booking.web.cancel import pass_names
from booking.entry.error_pages import bad_link, renders_booking_errors
from booking.entry.forms import seat_choice
from booking.web.middleware import plain_forms_only
from booking.web.views import after_response, answers_context, see_other
from booking.wiring import get_booking_service, mail_sender

RESENDS_LIMITED = ("Too many e-mails asked for from your network. Please wait a few minutes "
                   "and try again.")
RESENT = "Your confirmation is on its way to your e-mail again."


@never_cache
@require_safe
@renders_booking_errors
def booking(request, token):
    service = get_booking_service()
    opened = confirmation.open_cancel_link(request, service, token)
    if isinstance(opened, HttpResponse):
        return opened
    ref, event, active = opened
    if not active:
        return render(request, "booking/cancel_already.html", {"event": event})
    answers = answers_context(service, event, active)
    # Each seat's pass for the door (docs/checkin.md), not for a request still waiting for
    # its decision: no seat is its own yet.
    shown = passes.pass_context(service, event, active) if active.is_confirmed else {"passes": None}
    return render(request, "booking/booking.html", {
        "event": event, "registration": active, "email": ref.email,
        "pending": active.status == PENDING,
        "form": seat_choice(active, event, shown.pop("all_passes", None),
                            pass_names(answers.get("pass_rows"))),
        "form_token": tokens.new_form_token(event.id, salt=tokens.CANCEL_FORM_SALT),
        "cancel_path": reverse("booking:cancel", args=[token]),
        "resend_path": reverse("booking:booking_resend", args=[token]),
        "resent": request.GET.get("resent") == "1",
        # The answers and "Change my answers" (its page opens by the confirmation link).
        **answers,
        "answers_url": reverse("booking:answers", args=[event.id, links.registration_token(
            active, salt=links.CONFIRMATION_SALT)]),
        **shown})


@plain_forms_only
@never_cache
@require_POST
@renders_booking_errors
def resend(request, token):
    """E-mail the confirmation again, as the event page's resend does (off the request's
    thread, through the mail sender's execution history); limited per network and per
    booking."""
    service = get_booking_service()
    try:
        ref = links.read_registration_token(token, salt=links.CANCEL_SALT)
    except links.BadLink:
        return bad_link(request)
    rate_limits.check(rate_limits.RESEND, rate_limits.client_address(request),
                      message=RESENDS_LIMITED)
    event = service.get_event(ref.event_id)

    def linked():
        found = service.find_registration(event.id, email=ref.email)
        return found if ref.matches(found) else None
    response = see_other(reverse("booking:booking", args=[token]) + "?resent=1")
    return after_response(response, lambda: mail.resend_when_registered(
        mail_sender(), linked, event=event,
        allowed=lambda registration: rate_limits.allows(rate_limits.RESEND_MAIL,
                                                        registration.registration_id)))
