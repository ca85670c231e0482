"""The admin's home as an organizer's overview: their upcoming events with seats sold and
left per quota, the waiting line, orders, cancellations, and bookings over time by ticket
type.

Scoped like every list (``visible_events``): only the events the user may see. Every
upcoming event, ``EVENTS_SHOWN`` to a page. What a view costs (docs/admin.md): one scan
page of up to ``EVENTS_READ`` upcoming events (sorted by start), and per event shown one
read of its seats, one query of its waiting list and up to ``TALLY_LIMIT`` of its
registrations; for all the events shown, one read of their cancellation counts. Beyond
``EVENTS_READ`` events, a link continues the scan (DynamoDB keeps no order across a table).
"""
from django.contrib import admin
from django.core.paginator import Paginator
from django.utils import timezone

from booking.admin import charts
from booking.admin.views import link, rights_of, sign, unsign, visible_events
from booking.errors import BookingError
from booking.organizers.rights import VIEW
from booking.wiring import get_booking_service

EVENTS_SHOWN = 10  # to a page
EVENTS_READ = 200  # upcoming events read (and sorted by start) at once (docs/admin.md)
PAGE, FROM = "events_page", "events_from"  # the home's query parameters


def index(request, extra_context=None):
    """Django's admin index with the dashboard above the list of models."""
    return admin.site.index(request, extra_context={**(extra_context or {}),
                                                    "dashboard": dashboard(request)})


def dashboard(request) -> dict | None:
    """The overview's context; None for a user who sees no events."""
    if rights_of(request).scope(VIEW).is_empty:
        return None
    scope = visible_events(request)
    service = get_booking_service()
    token = request.GET.get(FROM) or ""
    start = unsign(request, token)
    try:
        # A scan keeps no order: read up to EVENTS_READ upcoming events (one bounded scan
        # page), sorted by start, and show them a page at a time.
        read, next_key = service.events_page(start_key=start, limit=EVENTS_READ,
                                             when="upcoming", **scope)
        shown = Paginator(read, EVENTS_SHOWN).get_page(request.GET.get(PAGE))
        events = list(shown.object_list)
        seats = service.availabilities(events)
        cancelled = cancellations(service, events)
        now = timezone.now()
        return {"events": [event_overview(service, event, seats.get(event.id),
                                          cancelled.get(event.id), now=now)
                           for event in events],
                "any_cancelled": any(c.seats for c in cancelled.values()),
                "pages": _page_links(shown, token if start else "", next_key)}
    except BookingError as error:  # the store is unavailable: the admin still opens
        return {"error": error.message}


def cancellations(service, events) -> dict:
    """Each event's ``Cancelled`` counts; none (the dashboard says they cannot be read)
    when the store does not answer: the rest of the overview still shows."""
    try:
        return service.cancellation_counts([event.id for event in events])
    except BookingError:
        return {}


def _page_links(shown, token: str, next_key) -> dict:
    """Where the home's page links go: the pages of this read, and the next read's."""
    def at(number):
        return link(**{FROM: token, PAGE: str(number) if number > 1 else ""}) or "?"
    count = shown.paginator.count
    return {"first": shown.start_index(), "last": shown.end_index(), "count": count,
            "previous": at(shown.previous_page_number()) if shown.has_previous() else "",
            "next": at(shown.next_page_number()) if shown.has_next() else "",
            "later": link(**{FROM: sign(next_key)}) if next_key and not shown.has_next()
            else "",
            "restart": "?" if token else ""}


def event_overview(service, event, seats, cancelled=None, *, now=None) -> dict:
    tally = service.tally_registrations(event.id)
    return {"event": event, "seats": seats, "tally": tally, "cancelled": cancelled,
            "waiting": len(service.waiting_list(event.id))
            if service.has_waiting_list(event) else None,
            "chart": charts.bookings_chart(event, tally.bookings, now=now or timezone.now()),
            "checkin_rate": checkin_rate(service, event)}


def checkin_rate(service, event):
    """Per check-in list of the event, the passes admitted of those it expects ("Main door:
    12 of 40, 30%"); None for an event without lists, and the dashboard shows nothing."""
    lists = [service.checkin_list(found.id) for found in service.checkin_lists(event.id)]
    if not lists:
        return None
    return "; ".join(
        f"{found.name}: {found.admitted:,} of {found.expected:,}"
        + (f", {round(100 * found.admitted / found.expected)}%" if found.expected else "")
        for found in lists)
