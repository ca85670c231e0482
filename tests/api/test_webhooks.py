"""Webhook endpoints over the API: organizers' tokens, https only, the Idempotency-Key
naming the endpoint, the delivery log."""
import json

import pytest

from booking.mail.sender import send_owed
from booking.wiring import mail_sender, webhook_sender
from tests.organizers.helpers import DEFAULT, issue
from tests.api.test_registrations import assert_problem

pytestmark = pytest.mark.django_db
HOOK = {"url": "https://hooks.example.com/b", "events": ["registration.created"]}


def register(client, auth, body=HOOK, key="hook-1"):
    return client.post("/api/v1/webhooks/", json.dumps(body), content_type="application/json",
                       HTTP_IDEMPOTENCY_KEY=key, **auth)


def test_register__write_token__201_secret_once_replay_same(client, service):
    _, auth = issue("write")
    first = register(client, auth)
    again = register(client, auth)

    assert first.status_code == again.status_code == 201
    assert first.json() == again.json() and first.json()["secret"].startswith("whsec_")
    listed = client.get("/api/v1/webhooks/", **auth).json()
    assert [e["id"] for e in listed] == [first.json()["id"]] and "secret" not in listed[0]
    assert_problem(register(client, auth, {**HOOK, "url": HOOK["url"] + "x"}), 422,
                   "idempotency-key-reused")


def test_register__refusals__problem_and_nothing_stored(client, service):
    _, read_auth = issue("read", username="reader")
    _, auth = issue("write")
    assert register(client, read_auth).status_code == 403
    assert register(client, {}).status_code == 401
    unkeyed = client.post("/api/v1/webhooks/", json.dumps(HOOK), content_type="application/json",
                          **auth)
    assert_problem(unkeyed, 400, "idempotency-key-missing")
    for body, key in (({**HOOK, "url": "http://hooks.example.com/b"}, "k2"),
                      ({**HOOK, "events": ["nope"]}, "k3"), ({**HOOK, "extra": 1}, "k4")):
        assert register(client, auth, body, key).status_code == 400
    assert_problem(register(client, auth, {**HOOK, "event_id": "nope"}, "k5"), 404,
                   "event-not-found")
    assert client.get("/api/v1/webhooks/", **auth).json() == []


def test_endpoint__other_organizer_404_owner_deletes_and_reads_log(client, service):
    _, auth = issue("write")
    _, other = issue("write", username="other", slug="other-org")
    endpoint = register(client, auth).json()
    event = service.create_event(name="Hooks", capacity=3, strategy="lock_table",
                                 organizer=DEFAULT)
    service.book(event.id, name="Ada", email="ada@example.com")
    send_owed(mail_sender(service), min_age=0)
    webhook_sender(service, post=lambda *a, **k: 204).run_pass()
    path = f"/api/v1/webhooks/{endpoint['id']}/"

    assert_problem(client.get(path, **other), 404, "webhook-not-found")
    [delivery] = client.get(path + "deliveries/", **auth).json()
    assert delivery["type"] == "registration.created" and delivery["status"] == "delivered"
    assert delivery["log"][0]["status_code"] == 204
    assert client.delete(path, **other).status_code == 404
    assert client.delete(path, **auth).status_code == 204
    assert client.get(path, **auth).status_code == 404
