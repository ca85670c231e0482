"""The Idempotency-Key header (draft-ietf-httpapi-idempotency-key-header-07).

The key becomes the booking's own request id (``booking/exactly_once/request_log.py``),
scoped to the caller, so it rides in the booking's one transaction and costs no request:

- the caller is the API token when the request carries one, else the event and the person
  (normalized e-mail) the request is for: two people (or two tokens) sending the same key
  make two request ids, so neither can replay, block or detect the other's request;
- the request row stores the fingerprint of the normalized request (operation, event,
  e-mail, name): the same caller's key with another payload is refused (422);
- the row stores the registration, and the answer is built from the registration alone,
  so a completed request's retry gets the first answer again (the same 201 body) for as
  long as the row lives (``BOOKING_REQUEST_HISTORY_DAYS``, 7 days by default, at least 1);
  a request that was pending (``streams``) answers its decision as the registration
  stands now (``booking/api/views.py``), never the stored "pending";
- a request refused by the domain (full, already registered, invalid) stored nothing:
  its key is free, and a retry runs again; a retry's refusal is told once the key's
  earlier attempts are fenced (docs/exactly-once.md);
- a key asked again is answered from reads (``views.keyed_input(admitted=True)``: the
  booking reads the limits' item first, in its own first read after a sell-out): not
  counted or written again, its request row answers, and while its first request may
  still be in flight, 202 pending.
"""
import hashlib
import json
import re

from rest_framework.exceptions import NotAuthenticated

from booking import validation
from booking.api.problems import KEY_INVALID, KEY_MISSING, Refused
from booking.errors import InvalidBooking

HEADER = "Idempotency-Key"
# An sf-string as the draft says ("..."), or a bare token: printable ASCII, 1-255.
_KEY = re.compile(r'^"?([\x21\x23-\x7e]{1,255})"?$')
KEY_SCHEMA = {"type": "string", "pattern": r"^[!#-~]{1,255}$", "minLength": 1,
              "maxLength": 255}
PUBLIC_SCOPE = "public"
POLICY = ("Required on every POST. A completed request's retry answers the first response "
          "for at least 24 hours (7 days by default); the same key with another payload "
          "answers 422; a request that could not be completed yet (its first request still "
          "in flight, the store busy, its deadline passed) answers 202 pending with "
          "Retry-After: ask again with the same key. Keys are scoped to the caller: the API token, or without one the "
          "event and the person (e-mail) the request is for. Use a fresh random key (a "
          "UUID) per request: for a caller without a token it is what proves a retry is "
          "the same client's.")


def request_id(key: str, scope: str = PUBLIC_SCOPE) -> str:
    """The request id a caller's key stands for (letters and digits, as request ids are)."""
    return "api" + hashlib.sha256(f"{scope}\n{key}".encode()).hexdigest()[:48]


def read_key(request) -> str:
    """The request's Idempotency-Key; ``Refused`` (400) when it is missing or malformed.
    Marks the request keyed: contention then answers 202 pending."""
    raw = request.headers.get(HEADER)
    if raw is None:
        raise Refused(KEY_MISSING, f"This request needs an {HEADER} header.")
    match = _KEY.match(raw.strip())
    if not match:
        raise Refused(KEY_INVALID, f"The {HEADER} must be 1 to 255 printable characters.")
    request.idempotency_keyed = True
    return match.group(1)


def _token_scope(request) -> str | None:
    token_id = getattr(request.auth, "pk", None)
    return None if token_id is None else f"token-{token_id}"


def keyed_request_id(request) -> str:
    """The request id of an organizer's keyed POST, scoped to its API token (see
    ``read_key`` for the refusals)."""
    key = read_key(request)
    scope = _token_scope(request)
    if scope is None:  # the view's permissions let no tokenless call reach here
        raise NotAuthenticated()
    return request_id(key, scope)


def caller_request_id(request, key: str, *, event_id: str, email: str) -> str:
    """The request id of a keyed POST for a person at an event (a booking, a cancellation,
    a waiting-list join, an accepted offer): scoped to the API token when there is one,
    else to the event and the person's normalized e-mail."""
    scope = _token_scope(request)
    if scope is None:
        scope = json.dumps([PUBLIC_SCOPE, event_id, person_key(email)])
    return request_id(key, scope)


def person_key(email) -> str:
    """The person an e-mail names, as the service keys them (``ADA@Example.com`` is
    ``ada@example.com``); an address the service will refuse stays as sent."""
    try:
        return validation.normalize_email(email)
    except InvalidBooking:
        return email if isinstance(email, str) else repr(email)
