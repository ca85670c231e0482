"""Public pages. Thin: call the service, render the result or the domain error."""
from django.shortcuts import render

from .errors import BookingError
from .service import get_booking_service


def event_list(request):
    service = get_booking_service()
    try:
        rows = [(event, service.availability(event.id)) for event in service.list_events()]
    except BookingError as exc:
        return render(request, "booking/unavailable.html", {"error": exc}, status=503)
    return render(request, "booking/event_list.html", {"rows": rows})
