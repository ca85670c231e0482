"""Input rules shared by the service (and so by every form, admin page and command)."""
import re
import unicodedata
from datetime import datetime

from django.core.exceptions import ValidationError
from django.core.validators import validate_email
from django.utils import timezone

from .errors import EventNotFound, InvalidBooking

NAME_MAX_LENGTH = 100
EVENT_NAME_MAX_LENGTH = 200
EMAIL_MAX_LENGTH = 254
EVENT_ID_PATTERN = re.compile(r"^[0-9a-f]{32}$")
REGISTRATION_ID_PATTERN = EVENT_ID_PATTERN
REQUEST_ID_PATTERN = re.compile(r"^[A-Za-z0-9_-]{8,64}$")
# Joiners are format characters that real names (and emoji) legitimately use.
_ALLOWED_FORMAT_CHARACTERS = {"\u200c", "\u200d"}


def has_control_characters(value: str) -> bool:
    for char in value:
        category = unicodedata.category(char)
        if category in ("Cc", "Cs", "Co") or (
            category == "Cf" and char not in _ALLOWED_FORMAT_CHARACTERS
        ):
            return True
    return False


def clean_text(value, *, field: str, label: str, max_length: int) -> str:
    if not isinstance(value, str):
        raise InvalidBooking(f"{label} must be text.", field=field)
    value = value.strip()
    if not value:
        raise InvalidBooking(f"{label} is required.", field=field)
    if len(value) > max_length:
        raise InvalidBooking(f"{label} must be at most {max_length} characters.", field=field)
    if has_control_characters(value):
        raise InvalidBooking(f"{label} must not contain control characters.", field=field)
    return unicodedata.normalize("NFC", value)


def clean_person_name(value) -> str:
    return clean_text(value, field="name", label="Name", max_length=NAME_MAX_LENGTH)


def clean_event_name(value) -> str:
    return clean_text(value, field="name", label="Event name", max_length=EVENT_NAME_MAX_LENGTH)


def normalize_email(value) -> str:
    """Trim and case-fold, so one person is one registration; then validate."""
    if not isinstance(value, str):
        raise InvalidBooking("E-mail must be text.", field="email")
    email = value.strip().casefold()
    if not email:
        raise InvalidBooking("E-mail is required.", field="email")
    if len(email.encode("utf-8")) > EMAIL_MAX_LENGTH:
        raise InvalidBooking(
            f"E-mail must be at most {EMAIL_MAX_LENGTH} characters.", field="email")
    if has_control_characters(email):
        raise InvalidBooking("E-mail must not contain control characters.", field="email")
    try:
        validate_email(email)
    except ValidationError:
        raise InvalidBooking("Enter a valid e-mail address.", field="email") from None
    return email


def clean_capacity(value, *, strategy_name: str, max_capacity: int, suggestion: str = "") -> int:
    if isinstance(value, bool) or not isinstance(value, int):
        raise InvalidBooking("Capacity must be a whole number.", field="capacity")
    if value < 0:
        raise InvalidBooking("Capacity cannot be negative.", field="capacity")
    if value > max_capacity:
        raise InvalidBooking(
            f"The {strategy_name} strategy supports at most {max_capacity} seats per event."
            + (f" Use {suggestion} for larger events." if suggestion else ""),
            field="capacity",
        )
    return value


def clean_starts_at(value) -> datetime | None:
    if value is None or value == "":
        return None
    if isinstance(value, str):
        try:
            value = datetime.fromisoformat(value.strip())
        except ValueError:
            raise InvalidBooking(
                "Start time must be an ISO 8601 date and time.", field="starts_at") from None
    if not isinstance(value, datetime):
        raise InvalidBooking("Start time must be a date and time.", field="starts_at")
    if timezone.is_naive(value):
        value = timezone.make_aware(value)
    return value


def clean_request_id(value) -> str | None:
    """Optional request ids are 8-64 characters of letters, digits, '-' and '_'."""
    if value is None:
        return None
    if not isinstance(value, str) or not REQUEST_ID_PATTERN.match(value):
        raise InvalidBooking("This form has expired. Please reload the page.", field="request_id")
    return value


def clean_event_id(value) -> str:
    """Event ids are 32 lowercase hex digits; anything else cannot name an event."""
    if not isinstance(value, str) or not EVENT_ID_PATTERN.match(value):
        raise EventNotFound()
    return value
