"""Every read a page makes ends within the request's deadline: while the store throttles
every read (and answers each a little late), the booked page, the event list, an event's
page not remembered, the cancel page, the booking's page, the waiting-list place page and
the API's event answer 503 with Retry-After within the deadline and a small slack (the
pages: a short page that loads again by itself; the API: problem+json), never a thread
held through botocore's retries. On DynamoDB Local behind the fault proxy. The control is
each page as it was: its reads without the deadline (``page_deadline`` a no-op), which
holds the thread for every attempt. And the signup form told "that ticket type is full"
when the re-read of what is left could not be made in time: the refusal as typed, 409,
never "the event is full"."""
import contextlib
import time
import uuid

import pytest
from django.urls import reverse

from booking import links
from booking.web.views import booked_url
from booking.wiring import install, service_from_settings
from localdynamo.faults import THROTTLE, FaultSpec
from tests.conftest import proxied_tables

DEADLINE = 0.8
SLACK = 0.6  # scheduling on a loaded 2-core machine
LATE_MS = 450  # each throttled answer comes this late: four attempts take 1.8 s at least
SITE = "http://testserver"


@pytest.fixture
def site(local_server, settings):
    """(proxy, service, pages by name) with a short deadline; one booking made."""
    settings.BOOKING_REQUEST_DEADLINE = DEADLINE
    settings.SITE_URL = SITE
    with proxied_tables(local_server, "pd") as (proxy, store):
        made = service_from_settings(store=store)
        event = made.create_event(name="Busy", capacity=5, strategy="lock_table")
        ada = made.book(event.id, name="Ada", email="ada@example.com",
                        request_id=uuid.uuid4().hex)
        service = service_from_settings(store=store)  # the pages': nothing remembered
        install(service)
        pages = {
            "booked": booked_url(ada),
            "event_list": reverse("booking:event_list"),
            "event": reverse("booking:event_detail", args=[event.id]),
            "cancel": links.cancel_url(ada, site_url=SITE).removeprefix(SITE),
            "booking": links.booking_url(ada, site_url=SITE).removeprefix(SITE),
            "waiting_list_place": links.place_path(event.id, "bea@example.com"),
            "api_event": f"/api/v1/events/{event.id}/",
        }
        yield proxy, service, pages


def throttled(proxy, client, path):
    """GET ``path`` while every read is throttled, each answer late: (response, seconds)."""
    proxy.injector.spec = FaultSpec(delay_ms=(LATE_MS, LATE_MS))
    proxy.injector.script(THROTTLE, 100_000)
    try:
        started = time.monotonic()
        response = client.get(path)
        return response, time.monotonic() - started
    finally:
        proxy.injector.clear_script()
        proxy.injector.spec = FaultSpec()


def assert_busy_in_time(name, response, taken):
    assert response.status_code == 503, (name, response.status_code)
    assert response["Retry-After"].isdigit(), name
    if name.startswith("api_"):
        assert response["Content-Type"] == "application/problem+json", name
    else:
        assert response["Refresh"] == response["Retry-After"], name  # loads again by itself
        assert "could not load this page in time" in response.content.decode(), name
    assert taken < DEADLINE + SLACK, (name, taken)


PAGES = ["booked", "event_list", "event", "cancel", "booking", "waiting_list_place",
         "api_event"]


@pytest.mark.parametrize("name", PAGES)
def test_page__reads_throttled__503_retry_after_within_the_deadline(client, site, name):
    proxy, _, pages = site
    assert_busy_in_time(name, *throttled(proxy, client, pages[name]))


@pytest.mark.parametrize("name", ["booked", "event_list", "api_event"])
def test_page__reads_throttled__control_without_the_deadline__caught(client, site, name,
                                                                     monkeypatch):
    proxy, service, pages = site
    monkeypatch.setattr(service, "page_deadline", contextlib.nullcontext)

    with pytest.raises(AssertionError):
        assert_busy_in_time(name, *throttled(proxy, client, pages[name]))


def test_page__store_answers__the_pages_as_usual(client, site):
    _, _, pages = site
    for name in PAGES:
        status = client.get(pages[name]).status_code
        assert status in (200, 302, 404), (name, status)  # Bea is on no waiting list: 404
