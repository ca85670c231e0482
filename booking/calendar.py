"""Calendar entries for an event: an iCalendar file (RFC 5545) and an add-to-calendar link.

Times go out in UTC (``...Z``), which every calendar application shows in its user's zone;
the event's own zone is named in the description so nobody wonders which 19:30 it is.
Links are absolute on ``site_url``, the site's address (given by the wiring).
"""
from datetime import datetime, timedelta
from datetime import timezone as dt_timezone
from urllib.parse import urlencode

from django.urls import reverse
from django.utils import timezone

from booking import times
from booking import links
from booking.models import DEFAULT_TICKET_TYPE, tickets_label_text

GOOGLE_TEMPLATE = "https://calendar.google.com/calendar/render"
# Without an end, calendars show the event this long (RFC 5545 would make it zero).
DEFAULT_LENGTH = timedelta(hours=1)


def _utc(value: datetime) -> str:
    return value.astimezone(dt_timezone.utc).strftime("%Y%m%dT%H%M%SZ")


def _text(value: str) -> str:
    """Escape a TEXT value (RFC 5545 3.3.11)."""
    return (value.replace("\\", "\\\\").replace(";", "\\;").replace(",", "\\,")
            .replace("\n", "\\n"))


def _fold(line: str) -> str:
    """Fold a content line at 75 octets, never inside a UTF-8 character (RFC 5545 3.1)."""
    parts: list[str] = []
    current = ""
    for char in line:
        if len((current + char).encode("utf-8")) > (75 if not parts else 74):
            parts.append(current)
            current = ""
        current += char
    parts.append(current)
    return "\r\n ".join(parts)


def end_of(event) -> datetime:
    return event.ends_at or event.starts_at + DEFAULT_LENGTH


def details(event, *, site_url: str, registration=None) -> str:
    """The description: the event's own, its time, and an order's tickets (a registration
    of several seats or types, as the confirmation e-mail attaches it)."""
    order = "" if registration is None or registration.tickets == {DEFAULT_TICKET_TYPE: 1} else (
        f"Your order: {tickets_label_text(registration.tickets, event.ticket_labels)} "
        f"({registration.seats} "
        f"seat{'s' if registration.seats != 1 else ''})")
    parts = [event.description, order, f"{times.when(event)}",
             links.event_url(event.id, site_url=site_url)]
    return "\n\n".join(part for part in parts if part)


def ics(event, *, site_url: str, registration=None) -> str:
    """The event as one VEVENT; its UID is stable, so importing it twice updates it. With
    an order's ``registration``, the description names its tickets."""
    lines = [
        "BEGIN:VCALENDAR", "VERSION:2.0", "PRODID:-//Event booking//EN", "CALSCALE:GREGORIAN",
        "METHOD:PUBLISH", "BEGIN:VEVENT", f"UID:{event.id}@event-booking",
        f"DTSTAMP:{_utc(timezone.now())}", f"DTSTART:{_utc(event.starts_at)}",
        f"DTEND:{_utc(end_of(event))}", f"SUMMARY:{_text(event.name)}",
        f"DESCRIPTION:{_text(details(event, site_url=site_url, registration=registration))}",
        *([f"LOCATION:{_text(event.venue)}"] if event.venue else []),
        f"URL:{links.event_url(event.id, site_url=site_url)}",
        "END:VEVENT", "END:VCALENDAR",
    ]
    return "".join(_fold(line) + "\r\n" for line in lines)


def ics_url(event, *, site_url: str) -> str:
    return links.absolute_url(reverse("booking:event_ics", args=[event.id]), site_url=site_url)


def google_url(event, *, site_url: str) -> str:
    """Google Calendar's documented 'render?action=TEMPLATE' link, prefilled."""
    query = {"action": "TEMPLATE", "text": event.name,
             "dates": f"{_utc(event.starts_at)}/{_utc(end_of(event))}",
             "details": details(event, site_url=site_url), "location": event.venue}
    return GOOGLE_TEMPLATE + "?" + urlencode({k: v for k, v in query.items() if v})
