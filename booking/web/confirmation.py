"""A booking opened by one of its signed links: the confirmation link (``booking:booked``
and the pages under it: the printable passes, the answers' edit) and the cancellation link
(the cancel pages and the booking's own page). What a link names, read once for each."""
from django.http import HttpResponse
from django.shortcuts import render

from booking import links
from booking.models import REJECTED
from booking.entry.error_pages import bad_link
from booking.wiring import get_booking_service


def open_link(request, event_id: str, token: str):
    """(service, event, ref, registration) for the link, its registration None when gone;
    or the response to give: a bad link (400) for a tampered one or another event's."""
    try:
        ref = links.read_registration_token(token, salt=links.CONFIRMATION_SALT)
    except links.BadLink:
        return bad_link(request)
    if ref.event_id != event_id:
        return bad_link(request)
    service = get_booking_service()
    return (service, service.get_event(event_id), ref,
            service.find_registration(event_id, email=ref.email))


def open_cancel_link(request, service, token):
    """(ref, event, the linked registration or None when it is no longer stored), or the
    page to answer instead: a bad link, or a ``streams`` request decided "no seat"
    (nothing to cancel, say so)."""
    try:
        ref = links.read_registration_token(token, salt=links.CANCEL_SALT)
    except links.BadLink:
        return bad_link(request)
    event = service.get_event(ref.event_id)
    registration = service.find_registration(ref.event_id, email=ref.email)
    active = registration if ref.matches(registration) else None
    if active is not None and active.status == REJECTED:
        return render(request, "booking/rejected.html",
                      {"event": event, "registration": active})
    return ref, event, active


def is_response(opened) -> bool:
    return isinstance(opened, HttpResponse)
