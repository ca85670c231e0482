"""Signed tokens for the public pages: the form's one-time token and registration links.

Tokens are ``django.core.signing`` values, salted per purpose so one kind can never be
used as another, and tied to SECRET_KEY so they cannot be forged. They are signed, not
encrypted: a registration link carries the person's e-mail, readable by whoever holds it.
"""
import uuid
from dataclasses import dataclass
from datetime import datetime

from django.conf import settings
from django.core import signing

FORM_SALT = "booking.signup-form"
CONFIRMATION_SALT = "booking.confirmation"
CANCEL_SALT = "booking.cancel"


class BadLink(Exception):
    """A token that is tampered with, expired, or meant for something else."""


@dataclass(frozen=True)
class RegistrationRef:
    """What a registration link names: one registration of one person at one event.

    A cancellation link also carries the registration's name, time and request id, so a
    cancellation can remove it in one conditional write without reading it first
    (``registration``; None for links made before they carried them).
    """

    event_id: str
    email: str
    registration_id: str
    registration: object = None

    def matches(self, registration) -> bool:
        return registration is not None and registration.registration_id == self.registration_id


def new_form_token(event_id: str) -> str:
    """A fresh signed one-time token for one signup form of one event."""
    return signing.dumps({"e": event_id, "r": uuid.uuid4().hex}, salt=FORM_SALT)


def request_id_from_form_token(token: str, event_id: str) -> str:
    """The submission's request id, or BadLink if the token is forged, expired or foreign."""
    try:
        data = signing.loads(token, salt=FORM_SALT, max_age=settings.BOOKING_FORM_MAX_AGE)
    except signing.BadSignature:
        raise BadLink() from None
    if not isinstance(data, dict) or data.get("e") != event_id or not data.get("r"):
        raise BadLink()
    return data["r"]


def registration_token(registration, *, salt: str) -> str:
    """A link token for the registration; without a timestamp, so one booking has one link."""
    payload = {"e": registration.event_id, "m": registration.email,
               "r": registration.registration_id}
    if salt == CANCEL_SALT:
        payload.update(n=registration.name, t=registration.registered_at.isoformat(),
                       q=registration.request_id)
    return signing.Signer(salt=salt).sign_object(payload, compress=True)


def read_registration_token(token: str, *, salt: str) -> RegistrationRef:
    """Decode a registration link, or raise BadLink."""
    try:
        data = signing.Signer(salt=salt).unsign_object(token)
        return RegistrationRef(event_id=data["e"], email=data["m"], registration_id=data["r"],
                               registration=_registration(data))
    except (signing.BadSignature, KeyError, TypeError, ValueError):
        raise BadLink() from None


def _registration(data: dict):
    """The whole registration a cancellation link names, or None (an older link)."""
    if "n" not in data:
        return None
    from .models import Registration

    return Registration(event_id=data["e"], email=data["m"], name=data["n"],
                        registered_at=datetime.fromisoformat(data["t"]),
                        registration_id=data["r"], request_id=data.get("q"))
