"""Organizers over the API: tokens (hashed, scoped, revocable), conditional edits
(If-Match: 412 when the event changed, 428 without it), delete, registrations, export."""
import json

import pytest

from booking.api.models import READ, WRITE, ApiToken, digest
from tests.api.test_registrations import assert_problem, book

pytestmark = pytest.mark.django_db


from tests.organizers.helpers import DEFAULT, issue  # noqa: E402 - shared by the API tests


def patch(client, event, body, auth, if_match=None):
    headers = {**auth, **({"HTTP_IF_MATCH": if_match} if if_match else {})}
    return client.patch(f"/api/v1/events/{event.id}/", json.dumps(body),
                        content_type="application/json", **headers)


@pytest.fixture
def event(service):
    return service.create_event(name="Board", capacity=3, strategy="lock_table",
                                organizer=DEFAULT)


def test_token__stored_hashed_only(service):
    token, auth = issue(WRITE)
    secret = auth["HTTP_AUTHORIZATION"].split()[1]

    stored = ApiToken.objects.get(pk=token.pk)
    assert secret not in (stored.token_hash, stored.prefix) and stored.token_hash == digest(secret)
    assert ApiToken.authenticate(secret) == stored
    # One character changed (never the same one: a secret ending in "x" once made this
    # test compare the secret with itself).
    assert ApiToken.authenticate(secret[:-1] + ("y" if secret.endswith("x") else "x")) is None


def test_patch__if_match_current__applied_new_etag_then_stale_412(client, event):
    _, auth = issue(WRITE)

    first = patch(client, event, {"capacity": 5}, auth, if_match=f'"{event.version}"')
    stale = patch(client, event, {"name": "Late"}, auth, if_match=f'"{event.version}"')

    assert first.status_code == 200 and first.json()["capacity"] == 5
    assert first["ETag"] == f'"{event.version + 1}"'
    assert_problem(stale, 412, "stale-edit")


def test_patch__no_if_match__428_nothing_changed(client, service, event):
    _, auth = issue(WRITE)

    assert_problem(patch(client, event, {"capacity": 9}, auth), 428, "precondition-required")
    assert service.get_event(event.id).capacity == 3


def test_patch__unknown_field__400_nothing_changed(client, service, event):
    _, auth = issue(WRITE)

    response = patch(client, event, {"seats": 9}, auth, if_match=f'"{event.version}"')

    assert_problem(response, 400, "invalid")
    assert service.get_event(event.id).version == event.version


def test_scopes__read_token_cannot_write_no_token_401_revoked_401(client, event):
    read_token, read_auth = issue(READ)

    assert_problem(patch(client, event, {"capacity": 9}, read_auth, if_match='"1"'), 403,
                   "permission-denied")
    assert_problem(client.get(f"/api/v1/events/{event.id}/registrations/"), 401,
                   "not-authenticated")
    read_token.revoked_at = read_token.created_at
    read_token.save()
    assert_problem(client.get(f"/api/v1/events/{event.id}/registrations/", **read_auth), 401,
                   "authentication-failed")


def test_registrations__listed_exported_then_event_deleted(client, service, event):
    _, read_auth = issue(READ)
    _, write_auth = issue(WRITE, username="boss")
    book(client, event)

    listed = client.get(f"/api/v1/events/{event.id}/registrations/", **read_auth)
    export = client.get(f"/api/v1/events/{event.id}/registrations/export/", **read_auth)
    csv_text = b"".join(export.streaming_content)  # streamed: read before the delete
    waiting = client.get(f"/api/v1/events/{event.id}/waiting-list/", **read_auth)
    deleted = client.delete(f"/api/v1/events/{event.id}/", **write_auth)

    assert [r["email"] for r in listed.json()["results"]] == ["ada@example.com"]
    assert listed.json()["next_cursor"] is None
    assert export["Content-Type"].startswith("text/csv") and b"ada@example.com" in csv_text
    assert waiting.json() == [] and deleted.status_code == 204
    assert_problem(client.get(f"/api/v1/events/{event.id}/"), 404, "event-not-found")


def test_token__over_its_rate__429_retry_after(client, event, settings):
    settings.API_TOKEN_RATE = "2/m"
    _, auth = issue(READ)
    path = f"/api/v1/events/{event.id}/registrations/"

    assert [client.get(path, **auth).status_code for _ in range(2)] == [200, 200]
    response = client.get(path, **auth)

    assert_problem(response, 429, "rate-limited")
    assert int(response["Retry-After"]) > 0


def test_registrations__paged__cursor_walks_every_one_once(client, service):
    event = service.create_event(name="Paged", capacity=10, strategy="lock_table",
                                 organizer=DEFAULT)
    for n in range(5):
        service.book(event.id, name=f"P{n}", email=f"p{n}@example.com")
    _, auth = issue(READ)
    seen, cursor, pages = [], None, 0
    while True:
        query = "?limit=2" + (f"&cursor={cursor}" if cursor else "")
        page = client.get(f"/api/v1/events/{event.id}/registrations/{query}", **auth).json()
        seen += [r["email"] for r in page["results"]]
        pages, cursor = pages + 1, page["next_cursor"]
        if cursor is None:
            break
    assert seen == [f"p{n}@example.com" for n in range(5)] and pages == 3
    bad = client.get(f"/api/v1/events/{event.id}/registrations/?cursor=bm9wZQ", **auth)
    assert_problem(bad, 400, "invalid")


def test_patch__quotas__resized_shown_and_below_confirmed_400_names_it(client, service):
    _, auth = issue(WRITE)
    event = service.create_event(name="DevConf", capacity=10, strategy="lock_table",
                                 organizer=DEFAULT,
                                 quotas={"workshop-a": 3}, max_per_order=4,
                                 ticket_types={"conference": [], "workshop-a": ["workshop-a"]})
    service.book(event.id, name="Ada", email="ada@example.com", tickets={"workshop-a": 2})
    grown = patch(client, event, {"quotas": {"workshop-a": 40}}, auth,
                  if_match=f'"{event.version}"')
    assert grown.status_code == 200, grown.content
    assert grown.json()["quotas"] == {"workshop-a": 40} and grown["ETag"] == '"2"'
    refused = patch(client, event, {"quotas": {"workshop-a": 1}}, auth, if_match='"2"')
    assert refused.status_code == 400
    assert "'workshop-a'" in refused.json()["detail"] and "2 seats" in refused.json()["detail"]
    assert service.get_event(event.id).quotas == {"workshop-a": 40}


def devconf_api(service):
    return service.create_event(name="DevConf", capacity=10, strategy="lock_table",
                                organizer=DEFAULT, quotas={"workshop-a": 3}, max_per_order=4,
                                ticket_types={"conference": [], "workshop-a": ["workshop-a"]},
                                ticket_labels={"conference": "Main days"})


def test_patch__adds_a_type_with_label_description_and_seats_per_order(client, service):
    _, auth = issue(WRITE)
    event = devconf_api(service)
    service.book(event.id, name="Ada", email="ada@example.com", tickets={"workshop-a": 2})
    response = patch(client, event, {
        "ticket_types": {"vip": ["workshop-a"]}, "ticket_labels": {"vip": "VIP"},
        "ticket_descriptions": {"vip": "Front row."}, "max_per_order": 6},
        auth, if_match=f'"{event.version}"')
    assert response.status_code == 200, response.content
    body = response.json()
    assert body["ticket_types"] == {"conference": [], "workshop-a": ["workshop-a"],
                                    "vip": ["workshop-a"]}
    assert body["ticket_labels"] == {"conference": "Main days", "vip": "VIP"}  # merged
    assert body["ticket_descriptions"] == {"vip": "Front row."}
    assert body["max_per_order"] == 6 and response["ETag"] == f'"{event.version + 1}"'
    # The new type counts against its quota like any: one seat of Workshop A is left.
    assert_problem(client.post(f"/api/v1/events/{event.id}/registrations/", json.dumps(
        {"name": "Bob", "email": "bob@example.com", "tickets": {"vip": 2}}),
        content_type="application/json", HTTP_IDEMPOTENCY_KEY="bob-1"), 409, "event-full")
    relabelled = patch(client, event, {"ticket_labels": {"conference": ""}}, auth,
                       if_match=f'"{event.version + 1}"')
    assert relabelled.json()["ticket_labels"] == {"vip": "VIP"}  # "" returns to the derived


@pytest.mark.parametrize("body, words", [
    ({"ticket_types": {"workshop-a": []}}, "keeps the quotas"),  # moved: bookings may hold it
    ({"ticket_types": {"vip": ["backstage"]}}, "unknown quota"),
    ({"ticket_types": {"capacity": []}}, "the event's own capacity"),
    ({"ticket_labels": {"backstage": "Backstage"}}, "to label"),
    ({"ticket_descriptions": {"vip": "Front row."}}, "no ticket type"),
    ({"max_per_order": 1}, "Seats per order"),
])
def test_patch__bad_type_edit__400_problem_nothing_changed(client, service, body, words):
    _, auth = issue(WRITE)
    event = devconf_api(service)
    problem = assert_problem(patch(client, event, body, auth, if_match=f'"{event.version}"'),
                             400, "invalid")
    assert words in problem["detail"]
    stored = service.get_event(event.id)
    assert (stored.version, stored.ticket_types, stored.ticket_labels) == (
        event.version, event.ticket_types, event.ticket_labels)


def test_patch__types_on_a_plain_event__400_or_on_an_older_read__412(client, service, event):
    _, auth = issue(WRITE)
    refused = patch(client, event, {"ticket_types": {"vip": []}}, auth,
                    if_match=f'"{event.version}"')
    assert "created with ticket types" in assert_problem(refused, 400, "invalid")["detail"]
    orders = devconf_api(service)
    service.update_event(orders.id, expected_version=orders.version, name="DevConf 2")
    stale = patch(client, orders, {"ticket_labels": {"conference": "Talks"}}, auth,
                  if_match=f'"{orders.version}"')
    assert_problem(stale, 412, "stale-edit")
    assert service.get_event(orders.id).label("conference") == "Main days"
