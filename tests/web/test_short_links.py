"""The links an e-mail carries are short (booking/links.py's compact sealed record) and
the longer links sent before still open the same booking."""
import base64
import json
import re
from datetime import datetime, timezone

import pytest

from booking import links
from booking.models import Registration

REG = Registration(event_id="a" * 32, email="ada.lovelace@example.com", name="Ada Lovelace",
                   registered_at=datetime(2026, 12, 1, 19, 42, 5, 123456, tzinfo=timezone.utc),
                   registration_id="b" * 32, request_id="c" * 32, access_code="SPEAKER-7Q2K")
SITE = "https://tickets.example.org"


def old_json_token(registration, salt):
    """A link as sealed before the compact record: the JSON payload."""
    payload = {"e": registration.event_id, "m": registration.email,
               "r": registration.registration_id}
    if salt == links.CANCEL_SALT:
        payload.update(n=registration.name, t=registration.registered_at.isoformat(),
                       q=registration.request_id, a=registration.access_code)
    return links._seal(payload, salt)


def test_links__an_e_mails_links__about_half_as_long_as_before():
    cancel = links.cancel_url(REG, site_url=SITE)
    page = links.booking_url(REG, site_url=SITE)
    assert len(cancel) < 215 and len(page) < 215, (len(cancel), cancel)
    assert len(old_json_token(REG, links.CANCEL_SALT)) > 320  # what they were
    # Sealed: neither the address nor the code shows (the ciphertext is random letters, so
    # a short word like "ada" may appear by chance).
    assert "lovelace" not in cancel.lower() and "speaker-7q2k" not in cancel.lower()


@pytest.mark.parametrize("salt", [links.CANCEL_SALT, links.CONFIRMATION_SALT])
def test_links__compact_and_old_tokens__open_the_same_booking(salt):
    for token in (links.registration_token(REG, salt=salt), old_json_token(REG, salt)):
        ref = links.read_registration_token(token, salt=salt)
        assert (ref.event_id, ref.email, ref.registration_id) == (
            REG.event_id, REG.email, REG.registration_id)
        if salt == links.CANCEL_SALT:
            assert ref.registration.registered_at == REG.registered_at
            assert (ref.registration.name, ref.registration.request_id,
                    ref.registration.access_code) == ("Ada Lovelace", "c" * 32, "SPEAKER-7Q2K")


def test_links__tampered_truncated_or_other_purpose__bad_link():
    token = links.registration_token(REG, salt=links.CANCEL_SALT)
    for bad in (token[:-4] + ("AAAA" if not token.endswith("AAAA") else "BBBB"), token[:40],
                "", "%%%"):
        with pytest.raises(links.BadLink):
            links.read_registration_token(bad, salt=links.CANCEL_SALT)
    with pytest.raises(links.BadLink):
        links.read_registration_token(token, salt=links.CONFIRMATION_SALT)
