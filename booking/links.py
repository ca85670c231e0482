"""The links a booking hands out: registration, cancellation and waiting-list offer links.

Links are opaque: the event id, e-mail key and registration (or offer) id are encrypted
and authenticated with AES-SIV (deterministic, so one booking has one link) under a key
derived from the secret key, with the purpose as associated data, so one kind can never
be used as another and nobody holding a link can read the address in it or forge one.
A registration link seals a compact binary record (``_pack``: ids as bytes, the time as
a number; about half the length of the JSON it replaced, which is still read), so an
e-mail's links stay short. Links sent before they were encrypted (signed, with a ':' in
them) are still accepted.
Absolute URLs are built on the site's configured address (``site_url``, given by the
wiring), never on a request's Host header.
"""
import base64
import json
import re
import struct
from dataclasses import dataclass
from datetime import datetime, timedelta
from datetime import timezone as dt_timezone
from urllib.parse import urlsplit

from cryptography.exceptions import InvalidTag
from cryptography.hazmat.primitives.ciphers.aead import AESSIV
from django.core import signing
from django.urls import reverse
from django.utils.crypto import salted_hmac

from booking.models import tickets_label_text

CONFIRMATION_SALT = "booking.confirmation"
CANCEL_SALT = "booking.cancel"
OFFER_SALT = "booking.waiting-list-offer"
JOIN_SALT = "booking.waiting-list-join"
PLACE_SALT = "booking.waiting-list-place"


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


@dataclass(frozen=True)
class OfferRef:
    """What a waiting-list offer link names: one offer to one person at one event."""

    event_id: str
    email: str
    registration_id: str  # the offer id (the name the link format gives it)


@dataclass(frozen=True)
class JoinRef:
    """What a waiting-list confirmation link names: one request to join (``request_id``),
    by one person at one event, made at ``issued_at`` (epoch seconds; the link's age)."""

    event_id: str
    email: str
    name: str
    contact: str | None
    request_id: str
    issued_at: float
    tickets: dict | None = None  # the order asked for, on an event with orders

    @property
    def tickets_label_text(self) -> str:
        return tickets_label_text(self.tickets or {})


@dataclass(frozen=True)
class PlaceRef:
    """What a waiting-list place link names: one person's place in one event's line."""

    event_id: str
    email: str


def absolute_url(path: str, *, site_url: str) -> str:
    """``path`` on ``site_url``'s origin: never the request's Host header."""
    site = urlsplit(site_url)
    return f"{site.scheme}://{site.netloc}{path}"


def event_url(event_id: str, *, site_url: str) -> str:
    return absolute_url(reverse("booking:event_detail", args=[event_id]), site_url=site_url)


def cancel_url(registration, *, site_url: str) -> str:
    """The registration's cancellation link."""
    token = registration_token(registration, salt=CANCEL_SALT)
    return absolute_url(reverse("booking:cancel", args=[token]), site_url=site_url)


def booking_url(registration, *, site_url: str) -> str:
    """The booking's own page: opened by the same sealed token as its cancellation link
    (the page offers no more than that link does: see it, resend it, cancel seats)."""
    token = registration_token(registration, salt=CANCEL_SALT)
    return absolute_url(reverse("booking:booking", args=[token]), site_url=site_url)


def offer_token(event_id: str, email: str, offer_id: str) -> str:
    """An offer's link token: a registration link under its own purpose, so it can be used
    for nothing else, and an old offer's link never accepts a newer offer."""
    return registration_token(OfferRef(event_id, email, offer_id), salt=OFFER_SALT)


def read_offer_token(token: str) -> OfferRef:
    """The offer a link names, or ``BadLink``."""
    ref = read_registration_token(token, salt=OFFER_SALT)
    return OfferRef(ref.event_id, ref.email, ref.registration_id)


def offer_url(event_id: str, email: str, offer_id: str, *, site_url: str) -> str:
    """The offer's page."""
    return absolute_url(reverse("booking:offer", args=[offer_token(event_id, email, offer_id)]),
                        site_url=site_url)


def join_token(ref: JoinRef) -> str:
    """A confirmation link's token: the whole request, sealed (nobody can read the address
    or forge a request; the service checks its age and uses it once)."""
    return _seal({"e": ref.event_id, "m": ref.email, "n": ref.name, "c": ref.contact,
                  "q": ref.request_id, "t": ref.issued_at,
                  **({"k": ref.tickets} if ref.tickets else {})}, JOIN_SALT)


def read_join_token(token: str) -> JoinRef:
    """The request to join a link names, or ``BadLink`` (its age is the service's to judge)."""
    try:
        data = _open(token, JOIN_SALT)
        return JoinRef(event_id=data["e"], email=data["m"], name=data["n"], contact=data["c"],
                       request_id=data["q"], issued_at=float(data["t"]), tickets=data.get("k"))
    except (KeyError, TypeError, ValueError):
        raise BadLink() from None


def place_path(event_id: str, email: str) -> str:
    """The person's own page about their place in line (where they can leave it)."""
    return reverse("booking:waitlist_place", args=[_seal({"e": event_id, "m": email},
                                                          PLACE_SALT)])


def place_url(event_id: str, email: str, *, site_url: str) -> str:
    return absolute_url(place_path(event_id, email), site_url=site_url)


def read_place_token(token: str) -> PlaceRef:
    try:
        data = _open(token, PLACE_SALT)
        return PlaceRef(event_id=data["e"], email=data["m"])
    except (KeyError, TypeError, ValueError):
        raise BadLink() from None


def join_url(ref: JoinRef, *, site_url: str) -> str:
    return absolute_url(reverse("booking:waitlist_confirm", args=[join_token(ref)]),
                        site_url=site_url)


def _seal(payload: dict, salt: str) -> str:
    return _seal_bytes(json.dumps(payload, separators=(",", ":")).encode(), salt)


def _seal_bytes(data: bytes, salt: str) -> str:
    sealed = _cipher(signing.Signer().key).encrypt(data, [salt.encode()])
    return base64.urlsafe_b64encode(sealed).decode().rstrip("=")


# The compact record of a registration link (``_pack``): a version byte, then the event
# and registration ids (16 bytes each), the e-mail, and for a cancellation link the time
# (microseconds since 1970, UTC), the request id and the name, with the access code if any.
PACKED = 2
HEX_ID = re.compile(r"^[0-9a-f]{32}$")
EPOCH = datetime(1970, 1, 1, tzinfo=dt_timezone.utc)


def _text(value: str) -> bytes:
    """A length (one byte; 255 and two more for a longer text), then the UTF-8 text."""
    data = value.encode()
    return (bytes([len(data)]) if len(data) < 255 else b"\xff" + struct.pack(">H", len(data))) \
        + data


def _pack(payload: dict) -> bytes | None:
    """``payload`` (a registration link's) as the compact record; None when a field does
    not fit it (the JSON record is sealed instead)."""
    if not (HEX_ID.match(payload["e"]) and HEX_ID.match(payload["r"])):
        return None
    out = bytes([PACKED]) + bytes.fromhex(payload["e"]) + bytes.fromhex(payload["r"]) \
        + _text(payload["m"])
    if "n" in payload:
        at = datetime.fromisoformat(payload["t"])
        if at.utcoffset() != timedelta(0) or at.isoformat() != payload["t"]:
            return None
        out += struct.pack(">q", (at - EPOCH) // timedelta(microseconds=1))
        request_id = payload.get("q") or ""
        # A request id of 32 hex digits as its 16 bytes (flagged by a length of 254).
        out += (b"\xfe" + bytes.fromhex(request_id) if HEX_ID.match(request_id)
                else _text(request_id))
        out += _text(payload["n"]) + _text(payload.get("a") or "")
    return out


def _unpack(data: bytes) -> dict:
    """The payload of a compact record (``ValueError`` or ``struct.error`` if malformed)."""
    at = 1 + 32
    payload: dict[str, str | None] = {"e": data[1:17].hex(), "r": data[17:33].hex()}

    def text() -> str:
        nonlocal at
        length, at = data[at], at + 1
        if length == 254:  # a hex id's bytes
            length, hexed = 16, True
        else:
            hexed = False
            if length == 255:
                (length,), at = struct.unpack_from(">H", data, at), at + 2
        value = data[at:at + length]
        if len(value) != length:
            raise ValueError("truncated")
        at += length
        return value.hex() if hexed else value.decode()
    payload["m"] = text()
    if at < len(data):
        (micros,) = struct.unpack_from(">q", data, at)
        at += 8
        payload["t"] = (EPOCH + timedelta(microseconds=micros)).isoformat()
        payload["q"], payload["n"] = text() or None, text()
        if code := text():
            payload["a"] = code
    if at != len(data):
        raise ValueError("trailing bytes")
    return payload


def _cipher(secret: str | bytes) -> AESSIV:
    # 64 bytes: AES-256-SIV. Derived, so the link key is never the signing key itself.
    return AESSIV(salted_hmac("booking.links.key", "aes-siv", secret=secret,
                              algorithm="sha512").digest())


def _secrets() -> list[str | bytes]:
    """The secret key, then the earlier ones still accepted (Django's own signer's)."""
    signer = signing.Signer()
    return [signer.key, *signer.fallback_keys]


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
        if getattr(registration, "access_code", None):  # its use is given back on cancelling
            payload["a"] = registration.access_code
    packed = _pack(payload)
    return _seal_bytes(packed, salt) if packed is not None else _seal(payload, salt)


def _open(token: str, salt: str) -> dict:
    return json.loads(_open_bytes(token, salt))


def _open_bytes(token: str, salt: str) -> bytes:
    sealed = base64.urlsafe_b64decode(token + "=" * (-len(token) % 4))
    for secret in _secrets():
        try:
            return _cipher(secret).decrypt(sealed, [salt.encode()])
        except InvalidTag:
            continue
    raise BadLink()


def _open_registration(token: str, salt: str) -> dict:
    """A registration link's payload: the compact record, or the JSON one sent before."""
    data = _open_bytes(token, salt)
    return _unpack(data) if data[:1] == bytes([PACKED]) else json.loads(data)


def read_registration_token(token: str, *, salt: str) -> RegistrationRef:
    """Decode a registration link, or raise BadLink."""
    try:
        if ":" in token:  # a signed link sent before links were encrypted
            data = signing.Signer(salt=salt).unsign_object(token)
        else:
            data = _open_registration(token, salt)
        return RegistrationRef(event_id=data["e"], email=data["m"], registration_id=data["r"],
                               registration=_registration(data))
    except (signing.BadSignature, KeyError, TypeError, ValueError, struct.error):
        raise BadLink() from None


def _registration(data: dict):
    """The whole registration a cancellation link names, or None (an older link)."""
    if "n" not in data:
        return None
    from booking.models import Registration

    return Registration(event_id=data["e"], email=data["m"], name=data["n"],
                        registered_at=datetime.fromisoformat(data["t"]),
                        registration_id=data["r"], request_id=data.get("q"),
                        access_code=data.get("a"))
