"""The Idempotency-Key header (draft-ietf-httpapi-idempotency-key-header-07).

The key becomes the booking's own request id (``booking/exactly_once/request_log.py``),
scoped to the caller, so it rides in the booking's one transaction and costs no request:

- the request row stores the fingerprint of the normalized request (operation, event,
  e-mail, name): the same key with another payload is refused (422);
- the row stores the registration, and the answer is built from the registration alone,
  so a completed request's retry gets the first answer again (the same 201 body) for as
  long as the row lives (``BOOKING_REQUEST_HISTORY_DAYS``, 7 days by default, at least 1);
- a request refused by the domain (full, already registered, invalid) stored nothing:
  its key is free, and a retry runs again.
"""
import hashlib
import re

from booking.api.problems import KEY_INVALID, KEY_MISSING, Refused

HEADER = "Idempotency-Key"
# An sf-string as the draft says ("..."), or a bare token: printable ASCII, 1-255.
_KEY = re.compile(r'^"?([\x21\x23-\x7e]{1,255})"?$')
KEY_SCHEMA = {"type": "string", "pattern": r"^[!#-~]{1,255}$", "minLength": 1,
              "maxLength": 255}
PUBLIC_SCOPE = "public"
POLICY = ("Required on every POST. A completed request's retry answers the first response "
          "for at least 24 hours (7 days by default); the same key with another payload "
          "answers 422; a key whose first request is still in flight answers 409 with "
          "Retry-After. Keys are scoped to the caller (the API token, or none).")


def request_id(key: str, scope: str = PUBLIC_SCOPE) -> str:
    """The request id a caller's key stands for (letters and digits, as request ids are)."""
    return "api" + hashlib.sha256(f"{scope}\n{key}".encode()).hexdigest()[:48]


def keyed_request_id(request) -> str:
    """The request id of a keyed POST, scoped to its API token (or public); ``Refused``
    (400) when the key is missing or malformed. Marks the request keyed: contention then
    answers 409 in flight."""
    token_id = getattr(request.auth, "pk", None)
    scope = PUBLIC_SCOPE if token_id is None else f"token-{token_id}"
    raw = request.headers.get(HEADER)
    if raw is None:
        raise Refused(KEY_MISSING, f"This request needs an {HEADER} header.")
    match = _KEY.match(raw.strip())
    if not match:
        raise Refused(KEY_INVALID, f"The {HEADER} must be 1 to 255 printable characters.")
    request.idempotency_keyed = True
    return request_id(match.group(1), scope)
