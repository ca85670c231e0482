"""The webhook endpoints' "Send test ping": a signed ``ping`` delivered now to the endpoint,
its answer shown (status code, time, the start of the body); nothing stored or retried;
another organizer's endpoint answers as a missing one."""
import json
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import pytest
from django.urls import reverse

from booking.webhooks import signing
from booking.wiring import webhook_registry
from tests.admin.test_webhooks import admin_url, organizer
from tests.organizers.helpers import DEFAULT

pytestmark = pytest.mark.django_db


class Answering:
    """A receiver on 127.0.0.1 that answers ``status`` with ``body`` and keeps what came."""

    def __init__(self, status=200, body=b"pong from the CRM"):
        self.received, outer = [], self

        class Handler(BaseHTTPRequestHandler):
            def do_POST(self):
                data = self.rfile.read(int(self.headers.get("Content-Length", 0)))
                outer.received.append((dict(self.headers), data))
                self.send_response(status)
                self.send_header("Content-Length", str(len(body)))
                self.end_headers()
                self.wfile.write(body)

            def log_message(self, *args):
                pass
        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        threading.Thread(target=self.server.serve_forever, daemon=True).start()

    def url(self, path="hook"):
        return f"http://127.0.0.1:{self.server.server_address[1]}/{path}"

    def close(self):
        self.server.shutdown()
        self.server.server_close()


@pytest.fixture
def receiver(settings):
    settings.WEBHOOK_ALLOWED_HOSTS = ["127.0.0.1"]  # the development setting, for the test
    found = Answering()
    yield found
    found.close()


def endpoint_for(service, url, slug=DEFAULT):
    return webhook_registry(service).register(url=url, events=["registration.created"],
                                              organizer=slug)


def test_ping__signed_ping_delivered__answer_shown_nothing_stored(client, django_user_model,
                                                                 service, receiver):
    organizer(client, django_user_model, "ann")
    endpoint = endpoint_for(service, receiver.url())
    listing = client.get(admin_url("changelist")).content.decode()
    assert admin_url("ping", endpoint.id) in listing and "Send test ping" in listing

    page = client.post(admin_url("ping", endpoint.id))

    html = page.content.decode()
    assert page.status_code == 200 and "Delivered" in html, page.context["answer"]
    assert "<td>200</td>" in html and " ms</td>" in html and "pong from the CRM" in html
    [(headers, body)] = receiver.received
    assert signing.verify(endpoint.secret, headers, body)
    payload = json.loads(body)
    assert payload["type"] == "ping" and payload["data"]["endpoint_id"] == endpoint.id
    assert webhook_registry(service).deliveries(endpoint.id) == []  # nothing owed or logged


def test_ping__receiver_fails__status_and_body_shown(client, django_user_model, service,
                                                     settings):
    settings.WEBHOOK_ALLOWED_HOSTS = ["127.0.0.1"]
    failing = Answering(status=503, body=b"maintenance")
    try:
        organizer(client, django_user_model, "ann")
        endpoint = endpoint_for(service, failing.url())
        html = client.post(admin_url("ping", endpoint.id)).content.decode()
    finally:
        failing.close()
    assert "Failed" in html and "HTTP 503" in html and "maintenance" in html


def test_ping__nobody_listening__says_so(client, django_user_model, service, receiver):
    organizer(client, django_user_model, "ann")
    endpoint = endpoint_for(service, receiver.url())
    receiver.close()
    html = client.post(admin_url("ping", endpoint.id)).content.decode()
    assert "Failed" in html and "could not connect" in html and "no answer" in html


def test_ping__another_organizers_endpoint__as_missing_nothing_sent(
        client, django_user_model, service, receiver):
    organizer(client, django_user_model, "ann")
    theirs = endpoint_for(service, receiver.url(), slug="globex")
    response = client.post(admin_url("ping", theirs.id))
    assert response.status_code == 302 and response["Location"] == admin_url("changelist")
    assert receiver.received == []
    missing = client.post(admin_url("ping", "0" * 32))
    assert missing.status_code == 302 and receiver.received == []


def test_ping__get__sends_nothing(client, django_user_model, service, receiver):
    organizer(client, django_user_model, "ann")
    endpoint = endpoint_for(service, receiver.url())
    assert client.get(admin_url("ping", endpoint.id)).status_code == 302
    assert receiver.received == [] and reverse("api:docs")
