"""Public waiting-list pages: ask to join a full event's line, confirm the address from
the e-mailed link (double opt-in), see or leave one's place, take (or pass on) an offered
seat.

The request to join answers the same page whoever's address is typed (the owner is told
by e-mail); only the e-mailed links, which reach the owner alone, show a place in line.
Thin, like ``booking/web/views.py`` (whose signup form they share): parse, call the
service, render.
"""
from django.shortcuts import render
from django.urls import reverse
from django.utils import timezone
from django.views.decorators.cache import never_cache
from django.views.decorators.http import require_http_methods

from booking import links
from booking.errors import (AlreadyRegistered, AlreadyWaiting, BookingClosed, BookingError,
                            JoinLinkExpired, NotWaiting, OfferExpired, SeatsAvailable)
from booking.models import BOOKED, OFFERED, WAITING
from booking.entry import limits as rate_limits
from booking.entry.limits import OFFER_LIMITED
from booking.entry.error_pages import bad_link, renders_booking_errors, status_for
from booking.web.middleware import plain_forms_only
from booking.web.views import (FormLimited, booked_url, limited_form_page, read_submission,
                               render_event, see_other)
from booking.wiring import get_booking_service



def _check_link_limit(request, event) -> None:
    """The e-mailed links' posts count against the network's cancellation limit (organizer
    staff signed in are not limited on their own events)."""
    if not rate_limits.organizer_staff_on(request, event):
        rate_limits.check(rate_limits.CANCEL, rate_limits.client_address(request),
                          message=OFFER_LIMITED, event=event)


def place_in_line(service, entry) -> int:
    """1 for the first person still waiting, and so on."""
    return 1 + sum(1 for e in service.waiting_list(entry.event_id)
                   if e.status == WAITING and e.position < entry.position)


@plain_forms_only
@require_http_methods(["POST"])
@renders_booking_errors
def join(request, event_id):
    """Ask to join: the same answer whether or not the address is in line or booked."""
    service = get_booking_service()
    event = service.get_event(event_id)
    try:
        form, token, request_id = read_submission(request, event)
    except FormLimited as error:  # what was typed stays, in the form it was typed in
        return limited_form_page(request, service, event, error,
                                 request.POST.get("token", ""), waitlist_form=error.form)
    if request_id is None:
        return render_event(request, service, event, None, token, 400, waitlist_form=form)
    try:
        service.request_to_join_waiting_list(
            event.id, name=form.cleaned_data["name"], email=form.cleaned_data["email"],
            request_id=request_id, tickets=form.tickets())
    except SeatsAvailable:  # a seat freed meanwhile: the signup form is back on the page
        return see_other(reverse("booking:event_detail", args=[event.id]))
    except BookingError as error:
        # Shown in the waiting list's form on a full event; in the signup form (the same
        # fields, what was typed kept) on one with seats, e.g. an order that can never fit.
        form.apply_error(error)
        return render_event(request, service, event, form, token, status_for(error),
                            waitlist_form=form)
    # The e-mail that answers is owed in the outbox row just written: the worker sends it.
    return render(request, "booking/waitlist_requested.html",
                  {"event": event, "email": form.cleaned_data["email"]})


def _linked(request, token, read):
    """(what the e-mailed link names, the service, its event), or the bad link's page."""
    try:
        ref = read(token)
    except links.BadLink:
        return bad_link(request)
    service = get_booking_service()
    return ref, service, service.get_event(ref.event_id)


@plain_forms_only
@never_cache  # names the person's request
@require_http_methods(["GET", "HEAD", "POST"])
@renders_booking_errors
def confirm(request, token):
    """The e-mailed link that joins the line: shows what it will do, joins on POST (so a
    mail scanner that opens links joins nobody)."""
    linked = _linked(request, token, links.read_join_token)
    if not isinstance(linked, tuple):
        return linked
    ref, service, event = linked
    if request.method != "POST":
        if not service.confirm_link_open(ref.issued_at):  # say so before any click
            error = JoinLinkExpired()
            return render(request, "booking/waitlist_confirm.html",
                          {"event": event, "ref": ref, "error": error}, status=status_for(error))
        return render(request, "booking/waitlist_confirm.html", {"event": event, "ref": ref})
    _check_link_limit(request, event)
    try:
        service.confirm_waiting_list(event.id, name=ref.name, email=ref.contact or ref.email,
                                     request_id=ref.request_id, requested_at=ref.issued_at,
                                     tickets=ref.tickets)
    except AlreadyWaiting:  # joined from another of their links: their place stands
        pass
    except (AlreadyRegistered, SeatsAvailable, BookingClosed, JoinLinkExpired) as error:
        return render(request, "booking/waitlist_confirm.html",
                      {"event": event, "ref": ref, "error": error,
                       "seats_free": isinstance(error, SeatsAvailable)},
                      status=status_for(error))
    return see_other(links.place_path(event.id, ref.email))


@plain_forms_only
@never_cache  # names the person's place
@require_http_methods(["GET", "HEAD", "POST"])
@renders_booking_errors
def place(request, token):
    """The person's place in line (from their e-mails): where they stand, how long an offer
    lasts, and a button to leave."""
    linked = _linked(request, token, links.read_place_token)
    if not isinstance(linked, tuple):
        return linked
    ref, service, event = linked
    if request.method == "POST":
        _check_link_limit(request, event)
        try:
            service.leave_waiting_list(event.id, email=ref.email)
        except NotWaiting:
            pass  # left, booked or ended meanwhile: the page says which
        return see_other(request.path)
    entry = service.waiting_entry(event.id, email=ref.email)
    context = {"event": event, "entry": entry, "offer_seconds": service.waitlist_offer_seconds,
               "place": place_in_line(service, entry) if entry and entry.status == WAITING
               else None}
    return render(request, "booking/waitlist_joined.html", context)


@plain_forms_only
@never_cache  # names the person's offer
@require_http_methods(["GET", "HEAD", "POST"])
@renders_booking_errors
def offer(request, token):
    try:
        ref = links.read_offer_token(token)
    except links.BadLink:
        return bad_link(request)
    service = get_booking_service()
    event = service.get_event(ref.event_id)
    entry = service.waiting_entry(event.id, email=ref.email)
    if entry is None or entry.offer_id != ref.registration_id:
        return _offer_page(request, event, entry, "gone", 410)
    if request.method == "POST":
        _check_link_limit(request, event)
        if request.POST.get("action") == "decline":
            return _decline(request, service, event, entry)
        return _accept(request, service, event, entry)
    if entry.status == BOOKED:
        return _offer_page(request, event, entry, "booked")
    if event.has_started:  # nobody gets a seat any more: never "gone to the next person"
        return _offer_page(request, event, entry, "closed", 409)
    if entry.status == OFFERED and entry.offer_expires_at is not None and (
            entry.offer_expires_at > timezone.now()):
        return _offer_page(request, event, entry, "open")
    return _offer_page(request, event, entry, "ended", 410)


def _accept(request, service, event, entry):
    try:  # the confirmation is owed in the outbox row the booking wrote (the worker sends it)
        registration = service.accept_offer(event.id, email=entry.email)
    except (OfferExpired, NotWaiting) as error:
        return _offer_page(request, event, entry, "ended", status_for(error))
    except BookingClosed as error:
        return _offer_page(request, event, entry, "closed", status_for(error))
    return see_other(booked_url(registration))


def _decline(request, service, event, entry):
    try:
        service.leave_waiting_list(event.id, email=entry.email)
    except NotWaiting:  # already ended: say how, never "passed on" for a seat they took
        ended = service.waiting_entry(event.id, email=entry.email) or entry
        if ended.status == BOOKED:
            return _offer_page(request, event, ended, "booked")
    return _offer_page(request, event, entry, "declined")


def _offer_page(request, event, entry, state, status=200):
    return render(request, "booking/waitlist_offer.html",
                  {"event": event, "entry": entry, "state": state}, status=status)
