"""Standard Webhooks signatures (https://www.standardwebhooks.com/, "Signature scheme").

The signed content is ``{webhook-id}.{webhook-timestamp}.{body}``; the signature is
``v1,`` and the base64 of its HMAC-SHA256 under the secret's key. A secret reads
``whsec_`` and the base64 of its key (24 to 64 random bytes). Written here rather than
taken from the ``standardwebhooks`` package: it is a dozen lines, and the spec's own test
vector is in ``tests/webhooks/test_signing.py``.
"""
import base64
import hashlib
import hmac
import secrets
import time

PREFIX = "whsec_"
TOLERANCE_SECONDS = 5 * 60  # what the spec suggests receivers allow either side


def new_secret() -> str:
    return PREFIX + base64.b64encode(secrets.token_bytes(32)).decode()


def key_of(secret: str) -> bytes:
    return base64.b64decode(secret.removeprefix(PREFIX), validate=True)


def sign(secret: str, webhook_id: str, timestamp: int, body: bytes) -> str:
    content = f"{webhook_id}.{timestamp}.".encode() + body
    digest = hmac.new(key_of(secret), content, hashlib.sha256).digest()
    return "v1," + base64.b64encode(digest).decode()


def headers(secret: str, webhook_id: str, body: bytes, *, timestamp: int | None = None) -> dict:
    """The three headers of one attempt (a fresh timestamp each attempt, as the spec says)."""
    timestamp = int(time.time()) if timestamp is None else timestamp
    return {"webhook-id": webhook_id, "webhook-timestamp": str(timestamp),
            "webhook-signature": sign(secret, webhook_id, timestamp, body)}


def verify(secret: str, received: dict, body: bytes, *, now: float | None = None,
           tolerance: float = TOLERANCE_SECONDS) -> bool:
    """True if one of the ``v1`` signatures matches and the timestamp is recent.

    ``received``: the request's headers (any case). This is what a receiver runs.
    """
    lowered = {k.lower(): v for k, v in received.items()}
    webhook_id, stamp = lowered.get("webhook-id", ""), lowered.get("webhook-timestamp", "")
    if not webhook_id or not stamp.isdigit():
        return False
    now = time.time() if now is None else now
    if abs(now - int(stamp)) > tolerance:
        return False
    expected = sign(secret, webhook_id, int(stamp), body)
    return any(hmac.compare_digest(expected, candidate)
               for candidate in lowered.get("webhook-signature", "").split())
