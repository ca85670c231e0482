"""``{% load booking_orders %}``: ticket types and quotas as people read them
(``{{ name|ticket_label }}``: ``workshop-a`` -> "Workshop A"; ``{{ name|label_in:event }}``:
the label its organizer typed, else that; ``{{ registration|tickets_in:event }}``: an
order with its event's labels)."""
from django import template

from booking import models

register = template.Library()


@register.filter
def ticket_label(name: str) -> str:
    return models.ticket_label(name)


@register.filter
def label_in(name: str, event) -> str:
    return event.label(name) if event is not None else models.ticket_label(name)


@register.filter
def tickets_in(holder, event) -> str:
    """An order (a registration, waiting-list entry or link) with ``event``'s labels."""
    return models.tickets_label_text(holder.tickets or {},
                                     getattr(event, "ticket_labels", None))
