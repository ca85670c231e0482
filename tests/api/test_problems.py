"""Every API error is application/problem+json, whatever fails and wherever: bad numbers,
deep JSON, bodies over the limits, wrong media types, no route, a refused method or
Accept, a server error (no detail of it); and integers are JSON integers. Nothing is
stored on any of them. Pages outside /api/ keep their HTML errors."""
import base64
import json

import pytest
from django.test import Client

from tests.api.test_create_event import create
from tests.api.test_orders import ORDERS
from tests.api.test_organizer import issue, patch
from tests.api.test_registrations import assert_problem, post
from tests.orders.test_orders import devconf
from tests.organizers.helpers import DEFAULT

DEEP = "[" * 1000 + "]" * 1000
DEEP_OBJECT = '{"name": ' + "[" * 1000 + "]" * 1000 + ', "email": "ada@example.com"}'


def body_of(size: int) -> str:
    """A booking body of about ``size`` bytes (the name is the padding)."""
    return json.dumps({"name": "A" * size, "email": "ada@example.com"})


def cursor_of(text: str) -> str:
    return base64.urlsafe_b64encode(text.encode()).decode()


@pytest.fixture
def server_errors_answered():
    """A client that lets an exception answer as it would in production (handler500)."""
    return Client(raise_request_exception=False)


@pytest.mark.parametrize("query", [
    "limit=²", "limit=٣", "limit=1" + "0" * 5000, "limit=-1", "limit=1.0", "limit=",
    "limit=+5", "limit= 5", "limit=101", "limit=0",
    "cursor=" + cursor_of(DEEP), "cursor=" + cursor_of('{"event_id": 5}'),
])
def test_list__bad_limit_or_cursor__400_problem_naming_it(client, service, query):
    response = client.get(f"/api/v1/events/?{query}")

    body = assert_problem(response, 400, "invalid")
    assert set(body["errors"]) == {query.split("=")[0]}
    assert query.split("=")[0] in body["detail"]


@pytest.mark.parametrize("body, content_type, status, slug", [
    (DEEP, "application/json", 400, "parse-error"),
    (DEEP_OBJECT, "application/json", 400, "parse-error"),
    ("{not json", "application/json", 400, "parse-error"),
    (b'{"name": "\xff\xfe", "email": "ada@example.com"}', "application/json", 400,
     "parse-error"),
    ('{"name": NaN, "email": "ada@example.com"}', "application/json", 400, "parse-error"),
    (body_of(70 * 1024), "application/json", 413, "body-too-large"),  # over 64 KiB
    (body_of(140 * 1024), "application/json", 413, "body-too-large"),  # over 128 KiB
    ('{"name": "Ada", "email": "ada@example.com"}', "application/json; charset=latin-1", 400,
     "bad-charset"),
    ('{"name": "Ada", "email": "ada@example.com"}', "text/plain", 415,
     "unsupported-media-type"),
    ("name=Ada&email=ada@example.com", "application/x-www-form-urlencoded", 415,
     "unsupported-media-type"),
])
def test_book__bad_body__problem_nothing_stored(client, service, body, content_type, status,
                                                slug):
    event = service.create_event(name="Problems", capacity=5, strategy="lock_table")

    response = post(client, f"/api/v1/events/{event.id}/registrations/", body,
                    content_type=content_type)

    problem = assert_problem(response, status, slug)
    assert "{" not in problem["title"]  # no template left unfilled ("{media_type}")
    assert service.registrations(event.id) == []


def test_415__title_is_the_status_phrase_detail_names_the_type(client, service):
    event = service.create_event(name="Problems", capacity=5, strategy="lock_table")

    body = assert_problem(post(client, f"/api/v1/events/{event.id}/registrations/", "x",
                               content_type="text/plain"), 415, "unsupported-media-type")

    assert body["title"] == "Unsupported Media Type" and "text/plain" in body["detail"]


@pytest.mark.parametrize("method, path, headers, status, slug", [
    ("get", "/api/v1/nothing/", {}, 404, "not-found"),
    ("get", "/api/v1/events/x/registrations/y/z/", {}, 404, "not-found"),
    ("post", "/api/v2/events/", {}, 404, "not-found"),
    ("put", "/api/v1/events/", {}, 401, "not-authenticated"),
    ("get", "/api/v1/events/", {"HTTP_ACCEPT": "text/html"}, 406, "not-acceptable"),
])
def test_routes__no_route_method_or_accept__problem(client, service, method, path, headers,
                                                    status, slug):
    body = assert_problem(getattr(client, method)(path, **headers), status, slug)

    assert "{" not in body["title"]


@pytest.mark.django_db
def test_routes__method_the_view_lacks__405_problem_with_a_plain_title(client, service):
    _, auth = issue("write")

    body = assert_problem(client.put("/api/v1/events/", **auth), 405, "method-not-allowed")

    assert "{" not in body["title"]


def test_pages__outside_the_api__keep_their_html_errors(client, service):
    response = client.get("/no-such-page/")

    assert response.status_code == 404 and response["Content-Type"].startswith("text/html")


def test_server_error__500_problem_without_detail(server_errors_answered, service,
                                                  monkeypatch):
    def broken(*args, **kwargs):
        raise RuntimeError("secret-internal-detail /srv/app/booking.py line 7")

    monkeypatch.setattr(service, "events_page", broken)

    response = server_errors_answered.get("/api/v1/events/")

    assert_problem(response, 500, "server-error")
    assert b"secret-internal-detail" not in response.content and b"RuntimeError" not in (
        response.content)


def test_server_error__outside_the_api__still_a_page(server_errors_answered, service,
                                                     monkeypatch):
    def broken(*args, **kwargs):
        raise RuntimeError("boom")

    for read in ("get_event", "recent_event"):
        monkeypatch.setattr(service, read, broken)
    event_id = "0" * 32

    response = server_errors_answered.get(f"/events/{event_id}/")

    assert response.status_code == 500 and response["Content-Type"].startswith("text/html")


# --- Integers are JSON integers -----------------------------------------------------------
NOT_INTEGERS = ["5", 5.0, True, None, [5], {"n": 5}]


@pytest.mark.django_db
@pytest.mark.parametrize("field", ["capacity", "max_per_order"])
@pytest.mark.parametrize("value", NOT_INTEGERS, ids=repr)
def test_create__number_fields_take_json_integers_only(client, service, field, value):
    _, auth = issue("write")

    response = create(client, auth, {**ORDERS, field: value})

    body = assert_problem(response, 400, "invalid")
    assert set(body["errors"]) == {field} and field in body["detail"]
    assert service.list_events() == []


@pytest.mark.django_db
@pytest.mark.parametrize("value", ["2", 2.0, True], ids=repr)
def test_create__quota_sizes_take_json_integers_only(client, service, value):
    _, auth = issue("write")

    body = assert_problem(create(client, auth, {**ORDERS, "quotas": {"workshop-a": value}}),
                          400, "invalid")
    assert "quotas" in body["errors"]
    assert service.list_events() == []


@pytest.mark.django_db
@pytest.mark.parametrize("edit", [{"capacity": "5"}, {"capacity": 5.0}, {"capacity": True},
                                  {"quotas": {"workshop-a": "2"}}], ids=repr)
def test_patch__number_fields_take_json_integers_only(client, service, edit):
    event = devconf(service, "lock_table", organizer=DEFAULT)
    _, auth = issue("write")

    response = patch(client, event, edit, auth, if_match=f'"{event.version}"')

    body = assert_problem(response, 400, "invalid")
    assert set(body["errors"]) == set(edit)
    assert service.get_event(event.id).capacity == 10


@pytest.mark.parametrize("tickets", [{"conference": "1"}, {"conference": 1.0},
                                     {"conference": True}], ids=repr)
def test_book_and_cancel__ticket_quantities_take_json_integers_only(client, service, tickets):
    event = devconf(service, "lock_table")
    path = f"/api/v1/events/{event.id}/registrations/"

    booked = post(client, path, {"name": "Ada", "email": "ada@example.com", "tickets": tickets})
    assert set(assert_problem(booked, 400, "invalid")["errors"]) == {"tickets"}
    assert service.registrations(event.id) == []

    secret = post(client, path, {"name": "Ada", "email": "ada@example.com",
                                 "tickets": {"conference": 1}}, key="k-2").json()["secret"]
    cancelled = post(client, f"/api/v1/registrations/{secret}/cancellations/",
                     {"tickets": tickets}, key="k-3")
    assert set(assert_problem(cancelled, 400, "invalid")["errors"]) == {"tickets"}
    assert len(service.registrations(event.id)) == 1

