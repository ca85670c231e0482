"""Event times: stored in UTC, entered and shown in the event's own time zone, always
labelled. One place formats them, so pages, e-mails, commands and CSV name the same instant
the same way."""
from datetime import datetime
from functools import lru_cache
from zoneinfo import ZoneInfo, available_timezones

from django.utils.timezone import get_default_timezone_name

ISO_MINUTES = "%Y-%m-%d %H:%M"


@lru_cache(maxsize=1)
def zone_names() -> frozenset:
    """Every IANA zone name the system knows (the tz database)."""
    return frozenset(available_timezones())


def zone(name: str | None) -> ZoneInfo:
    """The event's zone; ``TIME_ZONE`` for events stored before zones were a field."""
    return ZoneInfo(name or get_default_timezone_name())


def local(value: datetime, zone_name: str | None) -> datetime:
    return value.astimezone(zone(zone_name))


def zone_label(value: datetime, zone_name: str | None) -> str:
    """'CET (Europe/Berlin)', or just 'UTC' where the abbreviation is the name."""
    key = zone(zone_name).key
    abbreviation = local(value, zone_name).strftime("%Z")
    return key if abbreviation == key else f"{abbreviation} ({key})"


def _day(value: datetime) -> str:
    return f"{value:%a} {value.day} {value:%b %Y}"


def when(event) -> str:
    """'Sat 12 Dec 2026, 19:30–22:00 CET (Europe/Berlin)', or 'Date to be announced'."""
    if event.starts_at is None:
        return "Date to be announced"
    start = local(event.starts_at, event.time_zone)
    text = f"{_day(start)}, {start:%H:%M}"
    if event.ends_at is not None:
        end = local(event.ends_at, event.time_zone)
        text += f"–{end:%H:%M}" if end.date() == start.date() else f" – {_day(end)}, {end:%H:%M}"
    return f"{text} {zone_label(event.starts_at, event.time_zone)}"


def instant(value: datetime, zone_name: str | None) -> str:
    """A moment such as a booking time: '12 Dec 2026, 19:30 CET (Europe/Berlin)'."""
    moment = local(value, zone_name)
    return f"{moment.day} {moment:%b %Y, %H:%M} {zone_label(value, zone_name)}"


def iso_local(value: datetime | None, zone_name: str | None) -> str | None:
    """ISO 8601 with the event's offset: '2026-12-12T19:30:00+01:00' (the same instant)."""
    return local(value, zone_name).isoformat() if value is not None else None


def form_value(value: datetime | None, zone_name: str | None) -> str:
    """What the admin's input shows: '2026-12-12 19:30' in the event's zone."""
    return local(value, zone_name).strftime(ISO_MINUTES) if value is not None else ""
