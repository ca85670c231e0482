"""Template filters for answers to the organizer's questions."""
from django import template

register = template.Library()


@register.filter
def answers_of(summaries: dict, registration) -> str:
    """The one-line summary of ``registration``'s answers in ``summaries`` ("" if none)."""
    return summaries.get(registration.registration_id, "") if summaries else ""
