"""Tokens for the public pages: the form's one-time token and registration page_tokens.

The form token is a ``django.core.signing`` value. Registration links are opaque: the
event id, e-mail key and registration id are encrypted and authenticated with AES-SIV
(deterministic, so one booking has one link) under a key derived from SECRET_KEY, with
the purpose as associated data, so one kind can never be used as another and nobody
holding a link can read the address in it or forge one. Links sent before they were
encrypted (signed, with a ':' in them) are still accepted.
"""
import base64
import json
import uuid
from dataclasses import dataclass
from datetime import datetime
from urllib.parse import urlsplit

from cryptography.exceptions import InvalidTag
from cryptography.hazmat.primitives.ciphers.aead import AESSIV
from django.conf import settings
from django.core import signing
from django.utils.crypto import salted_hmac

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


def absolute_url(path: str) -> str:
    """``path`` on the configured SITE_URL's origin: never the request's Host header."""
    site = urlsplit(settings.SITE_URL)
    return f"{site.scheme}://{site.netloc}{path}"


def _cipher(secret: str) -> AESSIV:
    # 64 bytes: AES-256-SIV. Derived, so the link key is never the signing key itself.
    return AESSIV(salted_hmac("booking.links.key", "aes-siv", secret=secret,
                              algorithm="sha512").digest())


def _secrets() -> list[str]:
    return [settings.SECRET_KEY, *getattr(settings, "SECRET_KEY_FALLBACKS", [])]


def registration_token(registration, *, salt: str) -> str:
    """An opaque link token for the registration (the same for one booking every time).

    A cancellation link also carries the registration's name, time and request id, so the
    cancellation can name the whole registration in one write.
    """
    payload = {"e": registration.event_id, "m": registration.email,
               "r": registration.registration_id}
    if salt == CANCEL_SALT:
        payload.update(n=registration.name, t=registration.registered_at.isoformat(),
                       q=registration.request_id)
    sealed = _cipher(settings.SECRET_KEY).encrypt(
        json.dumps(payload, separators=(",", ":")).encode(), [salt.encode()])
    return base64.urlsafe_b64encode(sealed).decode().rstrip("=")


def _open(token: str, salt: str) -> dict:
    sealed = base64.urlsafe_b64decode(token + "=" * (-len(token) % 4))
    for secret in _secrets():
        try:
            return json.loads(_cipher(secret).decrypt(sealed, [salt.encode()]))
        except InvalidTag:
            continue
    raise BadLink()


def read_registration_token(token: str, *, salt: str) -> RegistrationRef:
    """Decode a registration link, or raise BadLink."""
    try:
        if ":" in token:  # a signed link sent before links were encrypted
            data = signing.Signer(salt=salt).unsign_object(token)
        else:
            data = _open(token, salt)
        return RegistrationRef(event_id=data["e"], email=data["m"], registration_id=data["r"],
                               registration=_registration(data))
    except (signing.BadSignature, KeyError, TypeError, ValueError):
        raise BadLink() from None


def _registration(data: dict):
    """The whole registration a cancellation link names, or None (an older link)."""
    if "n" not in data:
        return None
    from booking.models import Registration

    return Registration(event_id=data["e"], email=data["m"], name=data["n"],
                        registered_at=datetime.fromisoformat(data["t"]),
                        registration_id=data["r"], request_id=data.get("q"))
