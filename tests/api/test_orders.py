"""Orders over the JSON API (docs/api.md): events created with quotas, ticket types and
max_per_order; bookings of ``tickets``; payloads with tickets, seats and every quota's
seats; refusals as problems naming the field or the quota, with nothing stored."""
import pytest

from tests.mail.helpers import deliver_owed

from tests.api.test_create_event import create
from tests.api.test_organizer import issue
from tests.api.test_registrations import assert_problem, post
from tests.orders.test_orders import devconf

pytestmark = pytest.mark.django_db
ORDERS = {"name": "DevConf", "capacity": 10, "strategy": "lock_table",
          "quotas": {"workshop-a": 2},
          "ticket_types": {"conference": [], "workshop-a": ["workshop-a"]}, "max_per_order": 4}


def book(client, event_id, tickets, key="key-0001", email="ada@example.com"):
    body = {"name": "Ada", "email": email}
    if tickets is not None:
        body["tickets"] = tickets
    return post(client, f"/api/v1/events/{event_id}/registrations/", body, key=key)


def test_create__orders__201_with_types_quotas_and_their_seats(client, service):
    _, auth = issue("write")
    response = create(client, auth, ORDERS)
    assert response.status_code == 201, response.content
    body = response.json()
    assert body["quotas"] == {"workshop-a": 2} and body["max_per_order"] == 4
    assert body["ticket_types"] == {"conference": [], "workshop-a": ["workshop-a"]}
    assert body["availability"]["quotas"] == {
        "capacity": {"capacity": 10, "confirmed": 0, "held": 0, "remaining": 10},
        "workshop-a": {"capacity": 2, "confirmed": 0, "held": 0, "remaining": 2}}
    event = service.get_event(body["id"])
    assert event.quotas == {"workshop-a": 2} and event.max_per_order == 4


def test_create__same_key_other_quotas__422_key_reused(client, service):
    _, auth = issue("write")
    assert create(client, auth, ORDERS).status_code == 201
    for changed in ({"quotas": {"workshop-a": 3}}, {"max_per_order": 5},
                    {"ticket_types": {"conference": [], "workshop-a": []}}):
        assert_problem(create(client, auth, {**ORDERS, **changed}), 422,
                       "idempotency-key-reused")
    assert len(service.list_events()) == 1


@pytest.mark.parametrize("changed, field", [
    ({"quotas": {"capacity": 3}}, "quotas"),
    ({"ticket_types": {"workshop-a": ["nope"]}}, "ticket_types"),
    ({"max_per_order": 0}, "max_per_order"),
])
def test_create__bad_orders__400_problem_with_field_nothing_stored(client, service, changed,
                                                                  field):
    _, auth = issue("write")
    body = assert_problem(create(client, auth, {**ORDERS, **changed}), 400, "invalid")
    assert body["field"] == field
    assert service.list_events() == []


@pytest.mark.parametrize("changed", [{"quotas": [1]}, {"quotas": {"a": "2"}},
                                     {"ticket_types": {"a": "workshop-a"}},
                                     {"max_per_order": "x"}])
def test_create__bad_shapes__400_problem_nothing_stored(client, service, changed):
    _, auth = issue("write")
    body = assert_problem(create(client, auth, {**ORDERS, **changed}), 400, "invalid")
    assert set(body["errors"]) == set(changed)
    assert service.list_events() == []


def test_book__tickets__201_order_with_tickets_and_seats(client, service):
    event = devconf(service, "aggregate")
    response = book(client, event.id, {"conference": 2, "workshop-a": 1})
    assert response.status_code == 201, response.content
    body = response.json()
    assert body["tickets"] == {"conference": 2, "workshop-a": 1} and body["seats"] == 3
    again = book(client, event.id, {"conference": 2, "workshop-a": 1})
    assert again.status_code == 201 and again.json() == body
    assert_problem(book(client, event.id, {"conference": 1}), 422, "idempotency-key-reused")
    detail = client.get(f"/api/v1/events/{event.id}/").json()
    assert detail["availability"]["quotas"]["workshop-a"]["confirmed"] == 1
    assert detail["availability"]["quotas"]["capacity"]["remaining"] == 7
    secret = client.get(f"/api/v1/registrations/{body['secret']}/").json()
    assert secret["tickets"] == {"conference": 2, "workshop-a": 1}


def test_book__plain_event__tickets_and_seats_of_one_admission(client, service):
    event = service.create_event(name="Plain", capacity=2, strategy="lock_table")
    body = book(client, event.id, None).json()
    assert body["tickets"] == {"admission": 1} and body["seats"] == 1
    detail = client.get(f"/api/v1/events/{event.id}/").json()
    assert detail["ticket_types"] == {"admission": []} and detail["max_per_order"] == 1
    assert list(detail["availability"]["quotas"]) == ["capacity"]


@pytest.mark.parametrize("tickets, says", [
    ({"nope": 1}, "not a ticket type"), ({"conference": 0}, "whole number"),
    ({"conference": 5}, "at most 4"), ({}, "at least one"), ({"capacity": 1}, "a quota"),
    (None, "Choose your tickets"),
])
def test_book__bad_tickets__400_problem_field_tickets_nothing_stored(client, service, tickets,
                                                                    says):
    event = devconf(service, "lock_table")
    body = assert_problem(book(client, event.id, tickets), 400, "invalid")
    assert body["field"] == "tickets" and says in body["detail"]
    assert service.find_registration(event.id, email="ada@example.com") is None


@pytest.mark.parametrize("tickets", [[1], {"conference": "1"}, {"conference": True}, "x"])
def test_book__bad_ticket_shapes__400_nothing_stored(client, service, tickets):
    event = devconf(service, "lock_table")
    body = assert_problem(book(client, event.id, tickets), 400, "invalid")
    assert "tickets" in body["errors"]
    assert service.find_registration(event.id, email="ada@example.com") is None


def test_book__quota_full__409_names_the_quota_nothing_stored(client, service):
    event = devconf(service, "slots", workshop=1)
    service.book(event.id, name="Bo", email="bo@example.com", tickets={"workshop-a": 1})
    body = assert_problem(book(client, event.id, {"workshop-a": 1, "conference": 1}), 409,
                          "event-full")
    assert body["quota"] == "workshop-a" and "Workshop A" in body["detail"]
    assert service.find_registration(event.id, email="ada@example.com") is None


def test_events_list__every_strategy_carries_its_quotas(client, service):
    for strategy in ("aggregate", "lock_table", "slots", "streams"):
        event = devconf(service, strategy, workshop=2)
        service.book(event.id, name="Bo", email="bo@example.com", tickets={"workshop-a": 1})
    results = client.get("/api/v1/events/").json()["results"]
    assert len(results) == 4
    for body in results:
        quotas = body["availability"]["quotas"]
        assert set(quotas) == {"capacity", "workshop-a", "workshop-b"}, body
        decided_later = service.get_event(body["id"]).strategy == "streams"
        assert quotas["workshop-a"]["confirmed"] == (0 if decided_later else 1), body


def cancel_seats(client, secret, tickets, key="cancel-0001"):
    return post(client, f"/api/v1/registrations/{secret}/cancellations/", {"tickets": tickets},
                key=key)


@pytest.mark.parametrize("strategy", ["aggregate", "lock_table", "slots", "shards"])
def test_cancel_seats__part_then_the_rest__each_freed_once(client, service, mailoutbox,
                                                           strategy):
    event = devconf(service, strategy)
    secret = book(client, event.id, {"conference": 2, "workshop-a": 1}).json()["secret"]
    deliver_owed()
    mailoutbox.clear()

    part = cancel_seats(client, secret, {"conference": 1})
    assert part.status_code == 200, part.content
    assert part.json()["cancelled"] == {"conference": 1}
    assert part.json()["registration"]["tickets"] == {"conference": 1, "workshop-a": 1}
    again = cancel_seats(client, secret, {"conference": 1})  # a retry frees nothing more
    assert again.status_code == 200 and again.json()["cancelled"] == {"conference": 1}
    assert service.availability(event.id).quotas["capacity"].confirmed == 2
    assert_problem(cancel_seats(client, secret, {"workshop-a": 1}), 422,
                   "idempotency-key-reused")

    rest = cancel_seats(client, secret, {"conference": 1, "workshop-a": 1}, key="cancel-0002")
    assert rest.status_code == 200 and rest.json() == {
        "cancelled": {"conference": 1, "workshop-a": 1}, "registration": None}
    assert service.find_registration(event.id, email="ada@example.com") is None
    assert service.availability(event.id).quotas["workshop-a"].confirmed == 0
    assert client.get(f"/api/v1/registrations/{secret}/").status_code == 404
    deliver_owed()
    assert len(mailoutbox) == 2  # one notice per cancellation, none for the retry


@pytest.mark.parametrize("tickets, says", [
    ({"conference": 3}, "holds"), ({"workshop-b": 1}, "holds"), ({"nope": 1}, "not a ticket"),
    ({"conference": 0}, "whole number"), ({}, "at least one"),
])
def test_cancel_seats__more_than_held_or_bad__400_field_tickets_nothing_changed(
        client, service, tickets, says):
    event = devconf(service, "lock_table")
    secret = book(client, event.id, {"conference": 2, "workshop-a": 1}).json()["secret"]
    body = assert_problem(cancel_seats(client, secret, tickets), 400, "invalid")
    assert body["field"] == "tickets" and says in body["detail"], body
    assert service.find_registration(event.id, email="ada@example.com").tickets == {
        "conference": 2, "workshop-a": 1}


def test_cancel_seats__bad_shape_no_key_or_forged_secret__refused_nothing_changed(client,
                                                                                 service):
    event = devconf(service, "aggregate")
    secret = book(client, event.id, {"conference": 2}).json()["secret"]
    path = f"/api/v1/registrations/{secret}/cancellations/"
    assert "tickets" in assert_problem(post(client, path, {"tickets": {"conference": "1"}}),
                                       400, "invalid")["errors"]
    assert_problem(post(client, path, {"tickets": {"conference": 1}, "extra": 1}), 400,
                   "invalid")
    assert_problem(post(client, path, {"tickets": {"conference": 1}}, key=None), 400,
                   "idempotency-key-missing")
    assert_problem(cancel_seats(client, secret[:-4] + "AAAA", {"conference": 1}), 404,
                   "bad-secret")
    assert service.find_registration(event.id, email="ada@example.com").tickets == {
        "conference": 2}


def test_cancel_seats__plain_event__its_one_seat_cancels_the_registration(client, service):
    event = service.create_event(name="Plain", capacity=2, strategy="lock_table")
    secret = book(client, event.id, None).json()["secret"]
    response = cancel_seats(client, secret, {"admission": 1})
    assert response.status_code == 200 and response.json() == {
        "cancelled": {"admission": 1}, "registration": None}
    assert service.availability(event.id).confirmed == 0
