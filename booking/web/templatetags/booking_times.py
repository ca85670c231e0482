"""Template filters for event times and counts (``{% load booking_times %}``)."""
from django import template

from booking import times

register = template.Library()


@register.filter
def when(event) -> str:
    return times.when(event)


@register.filter
def start_iso(event) -> str:
    return times.iso_local(event.starts_at, event.time_zone) or ""


@register.filter
def instant_for(value, event) -> str:
    """A moment in the event's zone, labelled: ``{{ registration.registered_at|instant_for:event }}``."""
    return times.instant(value, event.time_zone) if value else ""


@register.filter
def thousands(value) -> str:
    """1234 -> '1,234' (the site is in English)."""
    try:
        return f"{int(value):,}"
    except (TypeError, ValueError):
        return value


@register.filter
def duration(seconds) -> str:
    """How long, in the largest whole unit that fits: 86400 -> '24 hours', 5400 -> '90 minutes'."""
    try:
        seconds = int(float(seconds))
    except (TypeError, ValueError):
        return ""
    for unit, size in (("day", 86400), ("hour", 3600), ("minute", 60)):
        if seconds >= 2 * size or seconds == size or (unit == "minute" and seconds >= size):
            count = seconds // size if unit != "day" or seconds % 86400 == 0 else None
            if count is None:
                continue
            return f"{count} {unit}{'' if count == 1 else 's'}"
    return f"{seconds} second{'' if seconds == 1 else 's'}"


@register.filter
def instant_site(value) -> str:
    """A moment of no one event (a token's, a webhook's) in the site's ``TIME_ZONE``,
    labelled as ``instant_for`` labels an event's: '1 Dec 2026, 19:42 UTC'."""
    return times.instant(value, None) if value else ""
