"""``{% load booking_calendar %}``: links to add an event to a calendar."""
from django import template

from booking import calendar

register = template.Library()


@register.filter
def ics_url(event) -> str:
    return calendar.ics_url(event)


@register.filter
def google_calendar_url(event) -> str:
    return calendar.google_url(event)
