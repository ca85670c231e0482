"""``{% load booking_passes %}``: a pass's QR code drawn inline (``{% pass_qr pass %}``).

The whole card of each pass (code, ticket type, state) is the include
``booking/_passes.html`` (``{% include "booking/_passes.html" with passes=passes %}``),
which any page showing a person their booking can drop in.
"""
from django import template
from django.utils.safestring import mark_safe

from booking import pass_images

register = template.Library()


@register.simple_tag
def pass_qr(pass_) -> str:
    """The pass's code as an inline SVG QR code (segno's markup: the drawing and an
    escaped title, nothing taken from the page unescaped)."""
    label = getattr(pass_, "ticket_label", "") or "Pass"
    return mark_safe(pass_images.svg(pass_.code, title=f"{label}: QR code to show at the door"))


@register.filter
def holder_of(pass_, holders) -> str:
    """Whose the pass is (``{{ pass|holder_of:pass_holders }}``): "" when not known."""
    return (holders or {}).get(pass_.pass_id, "")
