"""Event times: stored in UTC, entered and shown in the event's own time zone, always
labelled. One place formats them, so pages, e-mails, commands and CSV name the same instant
the same way."""
import logging
from datetime import datetime
from functools import lru_cache
from zoneinfo import ZoneInfo, available_timezones

from django.utils.timezone import get_default_timezone_name

ISO_MINUTES = "%Y-%m-%d %H:%M"
TO_BE_ANNOUNCED = "Date to be announced"
logger = logging.getLogger(__name__)


@lru_cache(maxsize=1)
def zone_names() -> frozenset:
    """Every IANA zone name the system knows (the tz database)."""
    return frozenset(available_timezones())


def zone(name: str | None) -> ZoneInfo:
    """The event's zone; ``TIME_ZONE`` for events stored before zones were a field."""
    return ZoneInfo(name or get_default_timezone_name())


def local(value: datetime, zone_name: str | None) -> datetime:
    return value.astimezone(zone(zone_name))


def showable(value: datetime, zone_name: str | None) -> bool:
    """Whether ``value`` can be shown in the zone: a damaged stored item (an unknown zone, a
    start that overflows once in its zone) must never take a page or a list down."""
    try:
        if zone_name and zone_name not in zone_names():
            raise ValueError(f"unknown time zone {zone_name!r}")
        local(value, zone_name).strftime("%Z")
        return True
    except (ValueError, OverflowError) as damaged:
        logger.warning("Stored time %r in zone %r cannot be shown: %s", value, zone_name,
                       damaged)
        return False


def zone_label(value: datetime, zone_name: str | None) -> str:
    """'CET (Europe/Berlin)', or just 'UTC' where the abbreviation is the name."""
    key = zone(zone_name).key
    abbreviation = local(value, zone_name).strftime("%Z")
    return key if abbreviation == key else f"{abbreviation} ({key})"


def _day(value: datetime) -> str:
    return f"{value:%a} {value.day} {value:%b %Y}"


def when(event) -> str:
    """'Sat 12 Dec 2026, 19:30–22:00 CET (Europe/Berlin)', or 'Date to be announced' (also
    for a stored time that cannot be shown: ``check_capacity`` reports those)."""
    if event.starts_at is None or not showable(event.starts_at, event.time_zone):
        return TO_BE_ANNOUNCED
    start = local(event.starts_at, event.time_zone)
    text = f"{_day(start)}, {start:%H:%M}"
    if event.ends_at is not None and showable(event.ends_at, event.time_zone):
        end = local(event.ends_at, event.time_zone)
        text += f"–{end:%H:%M}" if end.date() == start.date() else f" – {_day(end)}, {end:%H:%M}"
    return f"{text} {zone_label(event.starts_at, event.time_zone)}"


def instant(value: datetime, zone_name: str | None) -> str:
    """A moment such as a booking time: '12 Dec 2026, 19:30 CET (Europe/Berlin)' (in UTC
    when the zone cannot show it)."""
    if not showable(value, zone_name):
        zone_name = "UTC"
    moment = local(value, zone_name)
    return f"{moment.day} {moment:%b %Y, %H:%M} {zone_label(value, zone_name)}"


def iso_local(value: datetime | None, zone_name: str | None) -> str | None:
    """ISO 8601 with the event's offset: '2026-12-12T19:30:00+01:00' (the same instant)."""
    if value is None or not showable(value, zone_name):
        return None
    return local(value, zone_name).isoformat()


def form_value(value: datetime | None, zone_name: str | None) -> str:
    """What the admin's input shows: '2026-12-12 19:30' in the event's zone."""
    if value is None or not showable(value, zone_name):
        return ""
    return local(value, zone_name).strftime(ISO_MINUTES)
