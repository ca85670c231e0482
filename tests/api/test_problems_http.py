"""The API's errors over real HTTP (the live API on DynamoDB Local, DEBUG off): what fails
before DRF has the request, or outside it, is problem+json too, and nothing is stored."""
import http.client
import json

import pytest

from booking.wiring import get_booking_service

pytestmark = pytest.mark.concurrency


def call(port, method, path, body=b"", headers=None):
    connection = http.client.HTTPConnection("127.0.0.1", port, timeout=30)
    connection.request(method, path, body, headers or {})
    response = connection.getresponse()
    answer = response.status, response.getheader("Content-Type"), response.read()
    connection.close()
    return answer


def booking_body(size: int) -> bytes:
    return json.dumps({"name": "A" * size, "email": "ada@example.com"}).encode()


def test_http__every_failure_under_api_is_a_problem_nothing_stored(live_api, monkeypatch):
    service = get_booking_service()
    event = service.create_event(name="Over HTTP", capacity=5, strategy="lock_table")
    path = f"/api/v1/events/{event.id}/registrations/"
    keyed = {"Content-Type": "application/json", "Idempotency-Key": "k-1"}

    answers = {
        "limit=²": call(live_api, "GET", "/api/v1/events/?limit=%C2%B2"),
        "deep JSON": call(live_api, "POST", path, b"[" * 1000 + b"]" * 1000, keyed),
        "96 KiB": call(live_api, "POST", path, booking_body(96 * 1024), keyed),
        "no route": call(live_api, "GET", "/api/v1/no-such-thing/"),
        "415": call(live_api, "POST", path, b"x", {**keyed, "Content-Type": "text/plain"}),
    }

    expected = {"limit=²": 400, "deep JSON": 400, "96 KiB": 413, "no route": 404, "415": 415}
    assert {name: (status, kind) for name, (status, kind, _) in answers.items()} == {
        name: (status, "application/problem+json") for name, status in expected.items()}
    assert json.loads(answers["415"][2])["title"] == "Unsupported Media Type"
    assert service.registrations(event.id) == []

    monkeypatch.setattr(service, "events_page", lambda **kwargs: 1 / 0)
    status, kind, body = call(live_api, "GET", "/api/v1/events/")
    assert (status, kind) == (500, "application/problem+json")
    assert b"ZeroDivisionError" not in body and b"division" not in body
