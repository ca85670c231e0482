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
