"""The admin's home as an organizer's overview: their upcoming events with seats sold and
left per quota, the waiting line, orders, cancellations, and bookings over time by ticket
type.

Scoped like every list (``visible_events``): only the events the user may see. What a view
costs (docs/admin.md): one query of the upcoming events, and per event shown one read of
its seats, one query of its waiting list and up to ``TALLY_LIMIT`` of its registrations;
for all the events shown, one read of their cancellation counts.
"""
from django.contrib import admin
from django.utils import timezone

from booking import times
from booking.admin import charts
from booking.admin.views import rights_of, visible_events
from booking.errors import BookingError
from booking.organizers.rights import VIEW
from booking.wiring import get_booking_service

EVENTS_SHOWN = 5
EVENTS_READ = 200  # upcoming events read to find the soonest (docs/admin.md)


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
    try:
        # A scan keeps no order: read up to EVENTS_READ upcoming events (one bounded scan
        # page), then show the soonest.
        read, next_key = service.events_page(limit=EVENTS_READ, when="upcoming", **scope)
        events = read[:EVENTS_SHOWN]  # soonest first within the page
        more = next_key is not None or len(read) > EVENTS_SHOWN
        seats = service.availabilities(events)
        cancelled = cancellations(service, events)
        return {"events": [event_overview(service, event, seats.get(event.id),
                                          cancelled.get(event.id))
                           for event in events], "more": more}
    except BookingError as error:  # the store is unavailable: the admin still opens
        return {"error": error.message}


def cancellations(service, events) -> dict:
    """Each event's ``Cancelled`` counts; none (the dashboard says they cannot be read)
    when the store does not answer: the rest of the overview still shows."""
    try:
        return service.cancellation_counts([event.id for event in events])
    except BookingError:
        return {}


def event_overview(service, event, seats, cancelled=None) -> dict:
    tally = service.tally_registrations(event.id)
    today = times.local(timezone.now(), event.time_zone).date()
    return {"event": event, "seats": seats, "tally": tally, "cancelled": cancelled,
            "waiting": len(service.waiting_list(event.id))
            if service.has_waiting_list(event) else None,
            "chart": charts.bookings_chart(event, tally.bookings, today=today),
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
