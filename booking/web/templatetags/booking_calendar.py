"""``{% load booking_calendar %}``: links to add an event to a calendar, on the site's
address (``{{ event|ics_url:site_url }}``; ``site_url`` comes from the context processor)."""
from django import template

from booking import calendar

register = template.Library()


@register.filter
def ics_url(event, site_url) -> str:
    return calendar.ics_url(event, site_url=site_url)


@register.filter
def google_calendar_url(event, site_url) -> str:
    return calendar.google_url(event, site_url=site_url)
