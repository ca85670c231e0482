"""The event's page while the store throttles its reads: the seats' read runs within the
request's deadline, and the page still answers 200 with its form (no count), never a 503
or a thread held for botocore's whole retry schedule. On DynamoDB Local behind the fault
proxy (throttling every request after the event was read). The control is the page as it
was: the seats read without a deadline or a fallback."""
import time
import uuid

import pytest
from django.urls import reverse

from booking.dynamo.provision import ensure_tables
from booking.wiring import install, reset_services, service_from_settings
from harness.controls import local_store
from localdynamo.faults import THROTTLE
from tests.conftest import start_fault_proxy

DEADLINE = 0.8


@pytest.fixture
def throttling(local_server, settings):
    """(proxy, service) with a short deadline; the service is this process's."""
    settings.BOOKING_REQUEST_DEADLINE = DEADLINE
    proxy = start_fault_proxy(local_server)
    store = local_store(proxy.url, table_prefix=f"p{uuid.uuid4().hex[:8]}-")
    ensure_tables(store)
    service = service_from_settings(store=store)
    install(service)
    yield proxy, service
    reset_services()
    proxy.stop()


def page_under_throttling(client, proxy, service, strategy):
    event = service.create_event(name="Drop", capacity=50, strategy=strategy)
    service.recent_event(event.id)  # the event as remembered, as on a busy page
    proxy.injector.script(THROTTLE, 100_000)
    try:
        started = time.monotonic()
        response = client.get(reverse("booking:event_detail", args=[event.id]))
        return response, time.monotonic() - started
    finally:
        proxy.injector.clear_script()


def assert_form_in_time(response, taken):
    html = response.content.decode()
    assert response.status_code == 200, html
    assert "Seats are being taken fast" in html and 'name="token"' in html
    assert taken < DEADLINE + 0.6, taken


@pytest.mark.parametrize("strategy", ["shards", "lock_table"])
def test_page__reads_throttled__200_form_within_the_deadline(client, throttling, strategy):
    assert_form_in_time(*page_under_throttling(client, *throttling, strategy))


def test_page__reads_throttled__control_reading_unbounded__caught(client, throttling,
                                                                  monkeypatch):
    proxy, service = throttling
    monkeypatch.setattr(service, "page_availability", service.availability)

    with pytest.raises(AssertionError):
        assert_form_in_time(*page_under_throttling(client, proxy, service, "shards"))
