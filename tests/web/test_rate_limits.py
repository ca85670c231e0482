"""Abuse limits: signups, cancellations and admin logins, counted in DynamoDB."""
import re

import pytest
from django.contrib.auth import get_user_model
from django.core import mail
from django.core.management import call_command
from django.core.management.base import SystemCheckError
from django.urls import reverse

from booking.entry import limits as rate_limits
from booking.errors import RateLimited
from booking.entry.limits import Rate, parse_rate
from tests.helpers import within_one_window
from tests.mail.helpers import deliver_owed
from tests.web.test_signup import form_page, submit


@pytest.fixture
def event(service):
    return service.create_event(name="Popular", capacity=100, strategy="lock_table")


def signup(client, event, n, **extra):
    token = form_page(client, event.id)[1]
    return client.post(reverse("booking:event_detail", args=[event.id]), {
        "name": f"Person {n}", "email": f"p{n}@example.com", "token": token}, **extra)


@pytest.mark.parametrize("text, rate", [("10/10m", Rate(10, 600)), ("5/h", Rate(5, 3600)),
                                        ("100 / 1d", Rate(100, 86400)), ("off", None),
                                        ("3/30s", Rate(3, 30))])
def test_parse_rate__forms(text, rate):
    assert parse_rate(text) == rate


@pytest.mark.parametrize("text", ["ten", "10", "10/10x", "0/m", "-1/m"])
def test_check__malformed_rate__system_check_error(settings, text):
    settings.BOOKING_SIGNUP_RATE = text

    with pytest.raises(SystemCheckError, match="booking.E002"):
        call_command("check")


def test_signup__ten_in_ten_minutes__eleventh_from_one_address_429_nothing_stored(
        client, service, event, settings):
    settings.BOOKING_SIGNUP_RATE = "10/10m"
    within_one_window(600, room=30.0)
    answers = [signup(client, event, n).status_code for n in range(11)]

    assert answers == [303] * 10 + [429]
    assert len(service.registrations(event.id)) == 10
    deliver_owed()  # the confirmations go out on a background thread
    assert len(mail.outbox) == 10


def test_signup__limited__plain_page_with_retry_after(client, service, event, settings):
    settings.BOOKING_SIGNUP_RATE = "1/10m"
    signup(client, event, 0)

    response = signup(client, event, 1)

    assert response.status_code == 429
    assert "Too many signups from your network" in response.content.decode()
    assert 0 < int(response["Retry-After"]) <= 600


def test_signup__other_address__own_allowance(client, service, event, settings):
    settings.BOOKING_SIGNUP_RATE = "2/10m"
    for n in range(2):
        signup(client, event, n)

    other = signup(client, event, 2, REMOTE_ADDR="203.0.113.9")

    assert other.status_code == 303
    assert signup(client, event, 3).status_code == 429


def test_signup__off__no_limit(client, service, event, settings):
    settings.BOOKING_SIGNUP_RATE = "off"

    assert {signup(client, event, n).status_code for n in range(15)} == {303}


def test_signup__one_email_from_many_addresses__limited_per_email(client, service, settings):
    settings.BOOKING_SIGNUP_EMAIL_RATE = "2/h"
    events = [service.create_event(name=f"E{n}", capacity=5) for n in range(3)]

    answers = [submit(client, e.id, email="Victim@Example.com").status_code for e in events]

    assert answers == [303, 303, 429]
    assert "Too many signups for this e-mail" in submit(
        client, events[2].id, email="victim@example.com").content.decode()
    assert len(mail.outbox) == 2


def test_signup__behind_trusted_proxy__client_from_forwarded_for(client, service, event,
                                                                 settings):
    settings.BOOKING_SIGNUP_RATE = "1/10m"
    settings.TRUSTED_PROXY_COUNT = 1
    # The client may send any X-Forwarded-For; the proxy appends the real address last.
    first = signup(client, event, 0, HTTP_X_FORWARDED_FOR="1.1.1.1, 198.51.100.7")
    spoofed = signup(client, event, 1, HTTP_X_FORWARDED_FOR="2.2.2.2, 198.51.100.7")
    other = signup(client, event, 2, HTTP_X_FORWARDED_FOR="198.51.100.8")

    assert (first.status_code, spoofed.status_code, other.status_code) == (303, 429, 303)


def test_client_address__ipv6__counted_per_64(rf, settings):
    one = rf.get("/", REMOTE_ADDR="2001:db8:1:2:aaaa::1")
    two = rf.get("/", REMOTE_ADDR="2001:db8:1:2:bbbb::2")

    assert rate_limits.client_address(one) == rate_limits.client_address(two)


def test_cancel__rate__eleventh_from_one_address_429(client, service, settings):
    settings.BOOKING_SIGNUP_RATE, settings.BOOKING_CANCEL_RATE = "off", "10/10m"
    within_one_window(600, room=30.0)  # the cancellations' 10 minutes: all in one window
    events = [service.create_event(name=f"E{n}", capacity=5) for n in range(11)]
    for n, event in enumerate(events):
        submit(client, event.id, email=f"p{n}@example.com")
    links = [re.search(r"http://testserver(/cancel/\S+/)", m.body).group(1)
             for m in mail.outbox]

    answers = [client.post(link).status_code for link in links]

    assert answers == [303] * 10 + [429]
    assert len(service.registrations(events[-1].id)) == 1


def test_limiter__next_window__allowed_again(service, settings, db):
    settings.BOOKING_SIGNUP_RATE = "1/m"
    rate_limits.check(rate_limits.SIGNUP, "a", now=120.0)
    with pytest.raises(RateLimited):
        rate_limits.check(rate_limits.SIGNUP, "a", now=179.0)

    rate_limits.check(rate_limits.SIGNUP, "a", now=180.0)


def test_limiter__store_down__lets_requests_through(service, settings, monkeypatch):
    from booking.dynamo.rate_limits import RateCounters
    from booking.errors import StoreUnavailable

    def down(*args, **kwargs):
        raise StoreUnavailable()
    monkeypatch.setattr(RateCounters, "hit", down)
    settings.BOOKING_SIGNUP_RATE = "1/h"

    for _ in range(3):
        rate_limits.check(rate_limits.SIGNUP, "x")


# --- admin login -------------------------------------------------------------------------
@pytest.fixture
def organizer(db):
    within_one_window(15 * 60, room=30.0)  # the logins' 15 minutes: all in one window
    return get_user_model().objects.create_superuser("organizer", "o@example.com", "right-pw-1")


def log_in(client, password, username="organizer", **extra):
    return client.post("/admin/login/?next=/admin/", {"username": username,
                                                      "password": password}, **extra)


def test_admin_login__after_10_failures__right_password_refused_429(client, service,
                                                                   organizer):
    failures = [log_in(client, f"wrong-{n}").status_code for n in range(10)]

    response = log_in(client, "right-pw-1")

    assert failures == [200] * 10
    assert response.status_code == 429
    assert "Too many failed logins" in response.content.decode()
    assert "_auth_user_id" not in client.session


def test_admin_login__failures_per_user_name__other_addresses_refused_too(client, service,
                                                                        organizer, settings):
    settings.ADMIN_LOGIN_RATE = "3/15m"
    for n in range(3):
        log_in(client, "wrong", REMOTE_ADDR=f"203.0.113.{n}")

    assert log_in(client, "right-pw-1", REMOTE_ADDR="203.0.113.99").status_code == 429


def test_admin_login__few_failures__right_password_logs_in(client, service, organizer):
    for n in range(3):
        log_in(client, "wrong")

    response = log_in(client, "right-pw-1")

    assert response.status_code == 302 and client.session["_auth_user_id"]


def signup_operations(client, event, n) -> list[str]:
    from booking.dynamo.metrics import RequestMeter
    from booking.wiring import get_booking_service

    token = form_page(client, event.id)[1]
    meter = RequestMeter().install(get_booking_service().store)
    try:
        with meter.track() as tally:
            response = client.post(reverse("booking:event_detail", args=[event.id]), {
                "name": f"Person {n}", "email": f"p{n}@example.com", "token": token})
    finally:
        meter.uninstall()
    assert response.status_code == 303
    return tally.operations


def test_signup__limiter_cost__one_counter_update_per_signup(client, service, event,
                                                            settings):
    settings.BOOKING_SIGNUP_RATE = settings.BOOKING_SIGNUP_EMAIL_RATE = "off"
    without = signup_operations(client, event, 0)
    settings.BOOKING_SIGNUP_RATE, settings.BOOKING_SIGNUP_EMAIL_RATE = "10/10m", "5/h"

    with_limits = signup_operations(client, event, 1)

    # The network's and the address's limits: one UpdateItem between them.
    assert len(with_limits) == len(without) + 1
    assert with_limits.count("UpdateItem") == without.count("UpdateItem") + 1
