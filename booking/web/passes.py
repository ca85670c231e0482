"""A person's passes, one a page for printing, reached by their booking's own link (the
confirmation link, ``booking:booked``, with ``passes/`` after it): nobody without that
link can see them, and a link for another event, or for a booking that is gone, shows
nothing of it."""
from django.shortcuts import render
from django.urls import reverse
from django.views.decorators.cache import never_cache
from django.views.decorators.http import require_safe

from booking import links
from booking.questions.service import holder_question, pass_holders
from booking.web import confirmation
from booking.entry.error_pages import renders_booking_errors


def passes_url(registration) -> str:
    """The printable passes' page of a booking (on its confirmation link)."""
    token = links.registration_token(registration, salt=links.CONFIRMATION_SALT)
    return reverse("booking:passes", args=[registration.event_id, token])


def pass_context(service, event, registration) -> dict:
    """What ``booking/_passes.html`` shows for a confirmed booking: the passes that still
    let someone in (a cancelled one is gone from the person's pages), each with its
    holder's name (the answer to "Name on the pass", read only when the event asks it, else
    the order's name); ``all_passes`` for the choice of those to cancel."""
    every = service.passes(registration)
    shown = [p for p in every if p.is_valid]
    answers = service.answers(registration) if holder_question(event.questions) else None
    return {"passes": shown, "all_passes": every, "passes_url": passes_url(registration),
            "pass_holders": pass_holders(event.questions, answers, shown,
                                         default=registration.name)}


@never_cache  # the codes let people in
@require_safe
@renders_booking_errors
def printable(request, event_id, token):
    opened = confirmation.open_link(request, event_id, token)
    if confirmation.is_response(opened):
        return opened
    service, event, ref, registration = opened
    if registration is None or not ref.matches(registration) or not registration.is_confirmed:
        return render(request, "booking/booking_gone.html", {"event": event}, status=410)
    return render(request, "booking/passes.html", {
        "event": event, "registration": registration, "print_layout": True,
        **pass_context(service, event, registration)})
