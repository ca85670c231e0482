"""``{% load booking_orders %}``: ticket types and quotas as people read them
(``{{ name|ticket_label }}``: ``workshop-a`` -> "Workshop A")."""
from django import template

from booking import models

register = template.Library()


@register.filter
def ticket_label(name: str) -> str:
    return models.ticket_label(name)
