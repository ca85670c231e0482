"""Organizers' actions on events, recorded in Django's admin log (LogEntry): who did what,
shown in the admin's "Recent actions". Events live in DynamoDB, so an entry points at the
event by its id through the admin's stand-in model."""
from django.contrib.admin.models import ADDITION, CHANGE, DELETION, LogEntry
from django.contrib.contenttypes.models import ContentType

from booking.models import DynamoEvent

__all__ = ["ADDITION", "CHANGE", "DELETION", "record"]


def record(request, event, action_flag: int, message: str) -> LogEntry:
    """Log ``message`` about ``event`` as done by the request's user."""
    return LogEntry.objects.create(
        user_id=request.user.pk,
        content_type=ContentType.objects.get_for_model(DynamoEvent),
        object_id=event.id, object_repr=event.name[:200],
        action_flag=action_flag, change_message=message)


def describe_changes(before, after) -> str:
    """'Changed name, capacity 5 → 8.' for an edit, or 'No fields changed.'"""
    parts = []
    for field in ("name", "starts_at", "ends_at", "time_zone", "venue", "description", "capacity"):
        old, new = getattr(before, field), getattr(after, field)
        if old != new:
            parts.append(f"{field.replace('_', ' ')} {_show(old)} → {_show(new)}")
    for quota, size in sorted(after.quotas.items()):
        if before.quotas.get(quota) != size:
            parts.append(f"quota {quota!r} {_show(before.quotas.get(quota))} → {size}")
    return f"Changed {', '.join(parts)}." if parts else "No fields changed."


def _show(value) -> str:
    if value is None:
        return "(none)"
    return value.isoformat() if hasattr(value, "isoformat") else repr(value)
