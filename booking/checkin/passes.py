"""Passes: one per seat of an order, each with a signed code a scanner can check offline.

A pass's code is the text in its QR code::

    BP1.<b64url(payload)>.<b64url(signature)>

where the payload is ``"<event id>.<pass id>.<ticket type>"`` (UTF-8) and the signature is
Ed25519 over the ASCII bytes of ``"BP1." + b64url(payload)``; b64url is base64url without
``=`` padding. Each event has its own key pair, derived from the deployment's secret and
the event id (HKDF-SHA256), so a scanner holding the event's public key
(``PassSigner.public_key``) tells a real code from a forged one without the server. The
code names no e-mail, no name, and is not the cancellation secret.

A pass id is ``"<registration id>-<n>"``, n counting from 1 over the order's seats, its
ticket types in name order (``seat_layout``).
"""
from collections.abc import Iterable
import base64
import binascii
import re
from dataclasses import dataclass
from datetime import datetime
from functools import lru_cache

from cryptography.exceptions import InvalidSignature
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey, Ed25519PublicKey
from cryptography.hazmat.primitives.kdf.hkdf import HKDF

PREFIX = "BP1."
VALID, CANCELLED = "valid", "cancelled"
_EVENT_ID = re.compile(r"^[0-9a-f]{32}$")
_PASS_ID = re.compile(r"^([0-9a-f]{32})-([1-9][0-9]{0,3})$")
_TICKET_TYPE = re.compile(r"^[a-z0-9][a-z0-9_-]{0,39}$")
MAX_CODE = 400  # far more than a real code's length; anything longer is not one


def b64url(data: bytes) -> str:
    return base64.urlsafe_b64encode(data).rstrip(b"=").decode("ascii")


def unb64url(text: str) -> bytes:
    """Decode base64url without padding; ``ValueError`` for anything else."""
    if not re.fullmatch(r"[A-Za-z0-9_-]*", text) or len(text) % 4 == 1:
        raise ValueError("not base64url")
    try:
        return base64.urlsafe_b64decode(text + "=" * (-len(text) % 4))
    except (binascii.Error, ValueError) as error:
        raise ValueError("not base64url") from error


@dataclass(frozen=True)
class PassRef:
    """What a valid code says: the event, the pass and its ticket type."""

    event_id: str
    pass_id: str
    ticket_type: str

    @property
    def registration_id(self) -> str:
        return self.pass_id.rsplit("-", 1)[0]

    @property
    def seat(self) -> int:
        return int(self.pass_id.rsplit("-", 1)[1])


@dataclass(frozen=True)
class Pass:
    """One seat of an order at the door."""

    pass_id: str
    registration_id: str
    event_id: str
    ticket_type: str
    ticket_label: str
    code: str
    status: str = VALID  # VALID or CANCELLED
    admitted_at: datetime | None = None  # its first admission on any list
    gate: str | None = None  # where that was

    @property
    def is_valid(self) -> bool:
        return self.status == VALID

    @property
    def short_code(self) -> str:
        """What a person can read out or type: its order's booking reference and its seat
        (``917B-981D-2``), printed under its QR code."""
        return short_code(self.pass_id)


SHORT = re.compile(r"^([0-9A-F]{4})-?([0-9A-F]{4})(?:-?([1-9][0-9]{0,3}))?$")


def short_code(pass_id_: str) -> str:
    registration_id, seat = pass_id_.rsplit("-", 1)
    head = registration_id[:8].upper()
    return f"{head[:4]}-{head[4:]}-{seat}"


def read_short(text: object) -> tuple[str, int | None] | None:
    """(the order's id prefix, lower case; its seat or None for the whole order) of a
    typed short code or booking reference (spaces, dashes and case as typed), else None."""
    if not isinstance(text, str) or len(text) > 40:
        return None
    found = SHORT.match("".join(text.split()).upper())
    if found is None:
        return None
    return (found.group(1) + found.group(2)).lower(), (
        int(found.group(3)) if found.group(3) else None)


def pass_id(registration_id: str, seat: int) -> str:
    return f"{registration_id}-{seat}"


def seat_layout(tickets: dict[str, int]) -> list[str]:
    """The ticket type of each seat of an order, seat 1 first: types in name order."""
    return [name for name in sorted(tickets) for _ in range(tickets[name])]


class PassSigner:
    """Signs and reads pass codes with a key per event derived from ``secret``; a code
    signed with a key derived from one of ``fallbacks`` (the secrets it replaced) reads
    too, so rotating the secret keeps issued passes (until a fallback is dropped)."""

    def __init__(self, secret: bytes, *, fallbacks: Iterable[bytes] = ()) -> None:
        if not secret:
            raise ValueError("a pass signer needs a secret")
        self._secrets = [bytes(secret), *(bytes(f) for f in fallbacks if f)]
        self._keys = lru_cache(maxsize=1024)(self._derive)

    def _derive(self, event_id: str, index: int = 0) -> Ed25519PrivateKey:
        seed = HKDF(algorithm=hashes.SHA256(), length=32, salt=None,
                    info=b"event-pass:" + event_id.encode("utf-8")).derive(self._secrets[index])
        return Ed25519PrivateKey.from_private_bytes(seed)

    def _public(self, event_id: str, index: int = 0) -> Ed25519PublicKey:
        return self._keys(event_id, index).public_key()

    def public_key(self, event_id: str) -> str:
        """The event's raw 32-byte Ed25519 public key, base64url without padding."""
        return self.public_keys(event_id)[0]

    def public_keys(self, event_id: str) -> list[str]:
        """The event's public keys, the signing one first, then its fallbacks' (an offline
        scanner accepts a code any of them verifies)."""
        return [b64url(self._public(event_id, i).public_bytes(
            encoding=serialization.Encoding.Raw, format=serialization.PublicFormat.Raw))
            for i in range(len(self._secrets))]

    def code(self, event_id: str, pass_id: str, ticket_type: str) -> str:
        """The signed text of a pass's QR code."""
        payload = f"{event_id}.{pass_id}.{ticket_type}".encode("utf-8")
        signed = PREFIX + b64url(payload)
        signature = self._keys(event_id).sign(signed.encode("ascii"))
        return f"{signed}.{b64url(signature)}"

    def read(self, code: object, *, event_id: str | None = None) -> PassRef | None:
        """What ``code`` says, or None when it is malformed, forged or altered; with
        ``event_id``, also None for another event's code."""
        ref = parse(code)
        if not isinstance(code, str) or ref is None or (
                event_id is not None and ref.event_id != event_id):
            return None
        signed, _, signature = code.rpartition(".")
        for index in range(len(self._secrets)):
            try:
                self._public(ref.event_id, index).verify(unb64url(signature),
                                                         signed.encode("ascii"))
            except (InvalidSignature, ValueError):
                continue
            return ref
        return None


def parse(code: object) -> PassRef | None:
    """The unverified claims of a well-formed code (None if it is not one)."""
    if not isinstance(code, str) or len(code) > MAX_CODE or not code.startswith(PREFIX):
        return None
    parts = code[len(PREFIX):].split(".")
    if len(parts) != 2:
        return None
    try:
        payload = unb64url(parts[0]).decode("utf-8")
        if len(unb64url(parts[1])) != 64:
            return None
    except (ValueError, UnicodeDecodeError):
        return None
    fields = payload.split(".")
    if len(fields) != 3:
        return None
    event_id, pass_id_, ticket_type = fields
    if not (_EVENT_ID.match(event_id) and _PASS_ID.match(pass_id_)
            and _TICKET_TYPE.match(ticket_type)):
        return None
    return PassRef(event_id=event_id, pass_id=pass_id_, ticket_type=ticket_type)
