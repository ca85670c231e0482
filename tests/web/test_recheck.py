"""The 202 "confirming your booking" page's re-check (moto, in process): whatever the store
does, it answers a page that says what is known and can check again, never a bare error
page; a definite answer is shown as usual; it stops checking by itself after a few tries."""
import re

import pytest
from django.urls import reverse

from booking.errors import OutcomeUnknown, StoreUnavailable
from booking.web.views import AUTO_RECHECKS, RECHECK_STILL_UNKNOWN, RECHECK_UNANSWERED
from tests.web.test_signup import form_page


@pytest.fixture
def event(service):
    return service.create_event(name="Busy night", capacity=5, strategy="lock_table")


def first_answer(client, service, event, monkeypatch):
    """Sign up while the booking's outcome is unknown: the 202 page."""
    token = form_page(client, event.id)[1]
    with monkeypatch.context() as patch:
        patch.setattr(service, "register", lambda *a, **k: (_ for _ in ()).throw(OutcomeUnknown()))
        return client.post(reverse("booking:event_detail", args=[event.id]),
                           {"name": "Ada", "email": "ada@example.com", "token": token})


def check_again(client, page):
    """Submit the page's own "Check again" form, as its script (or a click) does."""
    html = page.content.decode()
    fields = dict(re.findall(r'<input type="hidden" name="(\w+)" value="([^"]*)"', html))
    fields.pop("csrfmiddlewaretoken", None)
    action = re.search(r'<form id="check-again" method="post" action="([^"]+)"', html)[1]
    return client.post(action, fields)


def test_recheck__store_unreachable__503_page_says_not_known_yet_and_checks_again(
        client, service, event, monkeypatch):
    page = first_answer(client, service, event, monkeypatch)
    for read in ("get_event", "recent_event"):  # past the event's remembered seconds
        monkeypatch.setattr(service, read, lambda *a, **k: (_ for _ in ()).throw(
            StoreUnavailable()))

    again = check_again(client, page)

    html = again.content.decode()
    assert page.status_code == 202 and again.status_code == 503
    assert RECHECK_UNANSWERED.split(",")[0] in html and "Check again" in html
    assert re.search(r'name="token" value="[^"]+"', html) and "setTimeout" in html


def test_recheck__booking_write_unavailable__the_same_page_not_the_form(client, service, event,
                                                                        monkeypatch):
    page = first_answer(client, service, event, monkeypatch)
    monkeypatch.setattr(service, "register", lambda *a, **k: (_ for _ in ()).throw(
        StoreUnavailable()))

    again = check_again(client, page)

    assert again.status_code == 503 and "Confirming your booking" in again.content.decode()


def test_recheck__booked_meanwhile__the_booking_page(client, service, event, monkeypatch):
    page = first_answer(client, service, event, monkeypatch)

    again = check_again(client, page)

    assert again.status_code == 303 and "/booked/" in again["Location"]
    assert service.find_registration(event.id, email="ada@example.com") is not None


def test_recheck__after_a_few_automatic_checks__waits_for_a_click(client, service, event,
                                                                  monkeypatch, settings):
    settings.BOOKING_SIGNUP_EMAIL_RATE = settings.BOOKING_SIGNUP_RATE = "100/h"
    page = first_answer(client, service, event, monkeypatch)
    monkeypatch.setattr(service, "register", lambda *a, **k: (_ for _ in ()).throw(OutcomeUnknown()))

    for _ in range(AUTO_RECHECKS):
        page = check_again(client, page)

    html = page.content.decode()
    assert page.status_code == 202 and "setTimeout" not in html
    assert RECHECK_STILL_UNKNOWN in html and "Check again" in html


def test_recheck__limited__429_page_keeps_the_check_again_button(client, service, event,
                                                                 monkeypatch):
    from booking.errors import RateLimited
    from booking.entry import limits as rate_limits

    page = first_answer(client, service, event, monkeypatch)
    def limited(*args, **kwargs):
        raise RateLimited(retry_after=60)

    # A re-check of the same form token counts once, so only a limit that refuses it
    # anyway (its window full before the token was counted) reaches this page.
    for check in ("check", "check_once", "check_address", "check_signup"):
        monkeypatch.setattr(rate_limits, check, limited)

    again = check_again(client, page)

    html = again.content.decode()
    assert again.status_code == 429 and "Confirming your booking" in html
    assert "Check again" in html and "setTimeout" not in html
