"""The JSON API's public endpoints through Django's test client on moto: answers, the
Idempotency-Key rules, problem+json refusals with nothing stored."""
import json
from datetime import datetime, timezone

import pytest

from booking.api import idempotency

PROBLEM = "application/problem+json"


@pytest.fixture
def event(service):
    return service.create_event(name="API night", capacity=2, strategy="lock_table",
                                starts_at=datetime(2031, 5, 4, 18, 30, tzinfo=timezone.utc))


def post(client, path, body, key="key-0001", **headers):
    if key is not None:
        headers["HTTP_IDEMPOTENCY_KEY"] = key
    data = body if isinstance(body, (str, bytes)) else json.dumps(body)
    return client.post(path, data, content_type=headers.pop("content_type", "application/json"),
                       **headers)


def book(client, event, key="key-0001", name="Ada Lovelace", email="ada@example.com"):
    return post(client, f"/api/v1/events/{event.id}/registrations/",
                {"name": name, "email": email}, key=key)


def assert_problem(response, status, slug):
    assert response.status_code == status, response.content
    assert response["Content-Type"] == PROBLEM
    body = response.json()
    assert body["type"].endswith("/" + slug) and body["status"] == status and body["detail"]
    return body


def test_events__list__paged_with_seats_and_cursor(client, service):
    for number in range(3):
        service.create_event(name=f"E{number}", capacity=3)

    first = client.get("/api/v1/events/?limit=2").json()
    second = client.get(f"/api/v1/events/?limit=2&cursor={first['next_cursor']}").json()

    names = {e["name"] for e in first["results"] + second["results"]}
    assert names == {"E0", "E1", "E2"} and len(first["results"]) == 2
    assert first["results"][0]["availability"]["remaining"] == 3


def test_events__bad_cursor_or_limit__400_problem(client, service):
    assert_problem(client.get("/api/v1/events/?cursor=nonsense"), 400, "invalid")
    assert_problem(client.get("/api/v1/events/?limit=0"), 400, "invalid")


def test_event__detail__etag_is_version(client, event):
    response = client.get(f"/api/v1/events/{event.id}/")

    assert response.status_code == 200 and response["ETag"] == f'"{event.version}"'
    assert response.json()["availability"]["remaining"] == 2


def test_event__unknown__404_problem(client, service):
    assert_problem(client.get("/api/v1/events/" + "0" * 32 + "/"), 404, "event-not-found")


def test_book__new_key__201_then_same_key_replays_same_body(client, service, event):
    first = book(client, event)
    again = book(client, event)

    assert first.status_code == again.status_code == 201
    assert first.json() == again.json()
    assert first.json()["email"] == "ada@example.com"
    assert len(service.registrations(event.id)) == 1


def test_book__same_key_same_person_other_payload__422_nothing_stored(client, service, event):
    book(client, event)

    response = book(client, event, name="Ada King", email="ADA@example.com")

    assert_problem(response, 422, "idempotency-key-reused")
    assert [r.name for r in service.registrations(event.id)] == ["Ada Lovelace"]


def test_book__no_key__400_nothing_stored(client, service, event):
    assert_problem(book(client, event, key=None), 400, "idempotency-key-missing")
    assert service.registrations(event.id) == []


def test_book__key_scoped__request_id_is_hashed_and_valid():
    assert idempotency.request_id("k") != idempotency.request_id("k", "token-1")
    assert idempotency.request_id('"quoted"') != idempotency.request_id("quoted")


def test_book__after_cancel__same_key_answers_first_201_books_nothing(client, service, event):
    first = book(client, event).json()
    assert client.delete(f"/api/v1/registrations/{first['secret']}/").status_code == 204

    again = book(client, event)

    assert again.status_code == 201 and again.json() == first
    assert service.registrations(event.id) == []


@pytest.mark.parametrize("body, content_type, status, slug", [
    ("name=Ada&email=ada@example.com", "application/x-www-form-urlencoded", 415,
     "unsupported-media-type"),
    ("{not json", "application/json", 400, "parse-error"),
    ({"name": 7, "email": "ada@example.com"}, "application/json", 400, "invalid"),
    ({"name": "Ada", "email": "ada@example.com", "tickets": 3}, "application/json", 400,
     "invalid"),
    ({"name": "Ada", "email": "not-an-address"}, "application/json", 400, "invalid"),
    (["Ada"], "application/json", 400, "invalid"),
])
def test_book__bad_body__problem_nothing_stored(client, service, event, body, content_type,
                                                status, slug):
    response = post(client, f"/api/v1/events/{event.id}/registrations/", body,
                    content_type=content_type)

    assert_problem(response, status, slug)
    assert service.registrations(event.id) == []


def test_book__full__409_event_full_same_words_as_page(client, service, event):
    book(client, event, key="key-a", email="a@example.com")
    book(client, event, key="key-b", email="b@example.com")

    body = assert_problem(book(client, event, key="key-c", email="c@example.com"), 409,
                          "event-full")
    assert body["detail"] == "Sorry, this event is full."


def test_book__rate_limited__429_retry_after(client, service, event, settings):
    settings.BOOKING_SIGNUP_RATE = "1/10m"
    book(client, event, key="key-a", email="a@example.com")

    response = book(client, event, key="key-b", email="b@example.com")

    assert_problem(response, 429, "rate-limited")
    assert int(response["Retry-After"]) > 0
    assert len(service.registrations(event.id)) == 1


def test_registration__get_with_secret__then_delete_then_gone(client, service, event):
    secret = book(client, event).json()["secret"]

    assert client.get(f"/api/v1/registrations/{secret}/").json()["name"] == "Ada Lovelace"
    assert client.delete(f"/api/v1/registrations/{secret}/").status_code == 204
    assert client.delete(f"/api/v1/registrations/{secret}/").status_code == 204
    assert_problem(client.get(f"/api/v1/registrations/{secret}/"), 404, "not-registered")


def test_registration__forged_secret__404_problem(client, service):
    assert_problem(client.get("/api/v1/registrations/forged/"), 404, "bad-secret")


def test_schema_and_docs__served_from_own_static_files(client, service):
    schema = client.get("/api/v1/schema/?format=json")
    docs = client.get("/api/v1/docs/")

    assert schema.status_code == 200 and "Idempotency-Key" in schema.content.decode()
    assert docs.status_code == 200 and "cdn" not in docs.content.decode().lower()


def test_book__outcome_unknown__202_ask_again_with_the_same_key(client, service, monkeypatch):
    """As the pages do: a lost answer that could not be read back is 202, not an error;
    the same key asked again answers the truth."""
    from booking.errors import OutcomeUnknown

    event = service.create_event(name="Lost", capacity=3, strategy="lock_table")
    booked = service.register

    def lost(*args, **kwargs):
        booked(*args, **kwargs)  # it applied; the answer was lost
        raise OutcomeUnknown()

    monkeypatch.setattr(service, "register", lost)
    first = book(client, event, key="lost-1")
    monkeypatch.setattr(service, "register", booked)
    again = book(client, event, key="lost-1")

    assert first.status_code == 202 and first["Retry-After"] in ("1", "2", "3")
    assert first.json()["status"] == "pending" and "same Idempotency-Key" in first.json()["detail"]
    assert again.status_code == 201 and len(service.registrations(event.id)) == 1


def contention_as_in_flight(error, context):
    """A control: the handler as it was, answering a keyed request's contention 409
    ``request-in-flight``, the status this API uses for "full"."""
    from booking.api import problems
    from booking.errors import BookingContention

    if isinstance(error, BookingContention) and getattr(context.get("request"),
                                                        "idempotency_keyed", False):
        return problems.problem((409, "request-in-flight", "In flight"), error.message,
                                retry_after=1)
    return problems.exception_handler(error, context)


def contended_then_retried(client, service, monkeypatch):
    """Every attempt of the first ask meets contention (nothing written); the same key
    asked again books."""
    from booking.errors import BookingContention

    event = service.create_event(name="Busy", capacity=1, strategy="lock_table")
    strategy = service.catalog.strategy_for(event.id)

    def contended(*args, **kwargs):
        raise BookingContention()

    monkeypatch.setattr(strategy, "book", contended)
    first = book(client, event, key="busy-1")
    assert service.registrations(event.id) == []  # nothing was written
    monkeypatch.undo()
    return event, first, book(client, event, key="busy-1")


def assert_pending_then_definite(service, event, first, again):
    assert first.status_code == 202, first.content
    assert 1 <= int(first["Retry-After"]) <= 3
    body = first.json()
    assert body["status"] == "pending" and "same Idempotency-Key" in body["detail"]
    assert again.status_code == 201 and len(service.registrations(event.id)) == 1


def test_book__keyed_contention__202_pending_then_the_same_key_answers_201(
        client, service, monkeypatch):
    event, first, again = contended_then_retried(client, service, monkeypatch)

    assert_pending_then_definite(service, event, first, again)


def test_book__keyed_contention__control_answering_409_in_flight__caught(
        client, service, monkeypatch, settings):
    settings.REST_FRAMEWORK = {**settings.REST_FRAMEWORK, "EXCEPTION_HANDLER":
                               "tests.api.test_registrations.contention_as_in_flight"}
    event, first, again = contended_then_retried(client, service, monkeypatch)

    with pytest.raises(AssertionError):
        assert_pending_then_definite(service, event, first, again)
