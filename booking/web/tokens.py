"""The signup form's one-time token: a ``django.core.signing`` value naming the event and
a fresh request id, so a resubmitted form is the same request (never a second seat)."""
import uuid

from django.core import signing

from booking.links import BadLink
from booking.wiring import web_settings

FORM_SALT = "booking.signup-form"
# The cancel page's form for part of an order: its own salt, so a signup form's token never
# passes as a cancellation's request id (or the other way round).
CANCEL_FORM_SALT = "booking.cancel-form"


def new_form_token(event_id: str, *, salt: str = FORM_SALT) -> str:
    """A fresh signed one-time token for one signup form of one event."""
    return signing.dumps({"e": event_id, "r": uuid.uuid4().hex}, salt=salt)


def request_id_from_form_token(token: str, event_id: str, *, salt: str = FORM_SALT) -> str:
    """The submission's request id, or BadLink if the token is forged, expired or foreign."""
    try:
        data = signing.loads(token, salt=salt, max_age=web_settings().form_max_age)
    except signing.BadSignature:
        raise BadLink() from None
    if not isinstance(data, dict) or data.get("e") != event_id or not data.get("r"):
        raise BadLink()
    return data["r"]
