"""A booking opened by its confirmation link (``booking:booked`` and the pages under it:
the printable passes, the answers' edit): what the link names, read once for all three."""
from django.http import HttpResponse

from booking import links
from booking.web.errors import bad_link
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


def is_response(opened) -> bool:
    return isinstance(opened, HttpResponse)
