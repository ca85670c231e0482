"""Waiting-list offer links: an opaque accept link per offer, and the offer e-mail's context.

The token is a registration link (``booking/page_tokens.py``: AES-SIV under a key derived from
SECRET_KEY) under its own purpose, naming the event, the e-mail key and the offer id, so
it can be used for nothing else, and an old offer's link never accepts a newer offer.
"""
from dataclasses import dataclass
from datetime import datetime
from datetime import timezone as dt_timezone

from django.urls import reverse

from booking import links as page_tokens

OFFER_SALT = "booking.waiting-list-offer"


@dataclass(frozen=True)
class OfferRef:
    event_id: str
    email: str
    registration_id: str  # the offer id (the name the link format gives it)


def offer_token(event_id: str, email: str, offer_id: str) -> str:
    return page_tokens.registration_token(OfferRef(event_id, email, offer_id), salt=OFFER_SALT)


def read_offer_token(token: str) -> OfferRef:
    """The offer a link names, or ``page_tokens.BadLink``."""
    ref = page_tokens.read_registration_token(token, salt=OFFER_SALT)
    return OfferRef(ref.event_id, ref.email, ref.registration_id)


def offer_url(event_id: str, email: str, offer_id: str) -> str:
    """The offer's page on SITE_URL (never a request's Host header)."""
    return page_tokens.absolute_url(reverse("booking:offer", args=[offer_token(event_id, email,
                                                                         offer_id)]))


def mail_context(message: dict) -> dict:
    """What the offer e-mail shows beyond the registration-shaped message."""
    expires = datetime.fromtimestamp(message["offer_expires_at"] / 1000, dt_timezone.utc)
    return {"offer_url": offer_url(message["event_id"], message["email"],
                                   message["registration_id"]),
            "offer_expires_at": expires}
