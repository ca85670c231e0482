"""The door's API takes strict input and the server's clock: integers are integers,
booleans are booleans, unknown fields are refused (problem+json, nothing stored); a batch
refused as bad input applied none of its scans; an online scan is stamped now; a closed
list takes no more offline uploads."""
import json
import uuid
from datetime import datetime, timedelta, timezone

import pytest

from booking.api.models import WRITE
from tests.organizers.helpers import issue
from tests.api.test_checkin_api import event  # noqa: F401 - the same door event

pytestmark = pytest.mark.django_db
PROBLEM = "application/problem+json"


def post(client, path, body, auth, **headers):
    raw = body if isinstance(body, str) else json.dumps(body)
    return client.post(path, raw, content_type="application/json", **auth, **headers)


@pytest.fixture
def auth():
    return issue(WRITE)[1]


def new_list(client, event, auth, **body):
    return post(client, f"/api/v1/events/{event.id}/checkin-lists/", {"name": "Main", **body},
                auth, HTTP_IDEMPOTENCY_KEY=uuid.uuid4().hex)


@pytest.mark.parametrize("field, value", [
    ("occupancy_limit", "3"), ("occupancy_limit", 3.0), ("occupancy_limit", True),
    ("allow_reentry", "yes"), ("allow_reentry", "on"), ("allow_reentry", 1),
    ("allow_reentry", "true"), ("name", 5), ("ticket_types", [1]), ("colour", "red"),
])
def test_list_create__lax_value_or_unknown_field__400_problem_nothing_stored(
        client, service, event, auth, field, value):
    answer = new_list(client, event, auth, **{field: value})
    assert answer.status_code == 400, answer.content
    assert answer["Content-Type"] == PROBLEM
    assert service.checkin_lists(event.id) == []


def test_list_create__strict_values__201(client, event, auth):
    answer = new_list(client, event, auth, occupancy_limit=3, allow_reentry=True)
    assert answer.status_code == 201, answer.content
    assert (answer.json()["occupancy_limit"], answer.json()["allow_reentry"]) == (3, True)


def scans_path(list_id, batch=False):
    return f"/api/v1/checkin-lists/{list_id}/scans/" + ("batch/" if batch else "")


@pytest.fixture
def door(client, service, event, auth):
    booked = service.book(event.id, name="Ann", email="ann@example.com",
                          tickets={"day": 1, "vip": 1})
    list_id = new_list(client, event, auth).json()["id"]
    return list_id, [p.code for p in service.passes(booked)]


@pytest.mark.parametrize("extra", [{"colour": "red"}, {"code": 5},
                                   {"scanned_at": "2026-01-01T00:00:00Z"}, {"gate": 7}])
def test_scan__unknown_field_or_lax_value__400_nothing_stored(client, service, auth, door,
                                                             extra):
    list_id, codes = door
    answer = post(client, scans_path(list_id),
                  {"code": codes[0], "nonce": uuid.uuid4().hex, **extra}, auth)
    assert answer.status_code == 400 and answer["Content-Type"] == PROBLEM
    assert service.scan_log(list_id) == []


def test_online_scan__is_stamped_with_the_servers_time(client, service, auth, door):
    list_id, codes = door
    before = datetime.now(timezone.utc)
    answer = post(client, scans_path(list_id), {"code": codes[0], "nonce": uuid.uuid4().hex},
                  auth).json()
    made = datetime.fromisoformat(answer["scanned_at"].replace("Z", "+00:00"))
    assert before - timedelta(seconds=1) <= made <= datetime.now(timezone.utc)


def scan(code, minutes_ago=1, **more):
    when = datetime.now(timezone.utc) - timedelta(minutes=minutes_ago)
    return {"code": code, "nonce": uuid.uuid4().hex, "scanned_at": when.isoformat(), **more}


@pytest.mark.parametrize("bad", [{"colour": "red"}, {"gate": "g" * 61}, {"direction": "up"},
                                 {"nonce": "x"}, {"code": ""}])
def test_batch__a_bad_later_scan__400_and_no_scan_applied(client, service, auth, door, bad):
    list_id, codes = door
    answer = post(client, scans_path(list_id, True),
                  {"scans": [scan(codes[0], 5), {**scan(codes[1]), **bad}]}, auth)
    assert answer.status_code == 400 and answer["Content-Type"] == PROBLEM
    assert service.scan_log(list_id) == [] and service.checkin_list(list_id).admitted == 0


def test_batch__nonce_used_before_for_another_code__400_and_no_scan_applied(
        client, service, auth, door):
    list_id, codes = door
    first = scan(codes[1])
    assert post(client, scans_path(list_id, True), {"scans": [first]}, auth).status_code == 200
    reused = {**scan(codes[0]), "nonce": first["nonce"]}
    answer = post(client, scans_path(list_id, True), {"scans": [scan(codes[0], 5), reused]},
                  auth)
    assert answer.status_code == 400
    assert len(service.scan_log(list_id)) == 1 and service.checkin_list(list_id).admitted == 1


def test_batch__unknown_top_level_field__400(client, auth, door):
    list_id, codes = door
    answer = post(client, scans_path(list_id, True), {"scans": [scan(codes[0])], "x": 1}, auth)
    assert answer.status_code == 400 and answer["Content-Type"] == PROBLEM


def test_batch__deep_json__400_problem(client, auth, door):
    list_id, _ = door
    deep = "[" * 3000 + "]" * 3000
    answer = post(client, scans_path(list_id, True), '{"scans": ' + deep + "}", auth)
    assert answer.status_code == 400 and answer["Content-Type"] == PROBLEM


def test_closed_list__offline_upload_dated_back_into_its_hours__not_open(
        client, service, event, auth):
    booked = service.book(event.id, name="Ann", email="ann@example.com", tickets={"day": 1})
    now = datetime.now(timezone.utc)
    lst = service.create_checkin_list(event.id, name="Morning",
                                      opens_at=now - timedelta(hours=3),
                                      closes_at=now - timedelta(hours=1))
    code = service.passes(booked)[0].code
    answer = post(client, scans_path(lst.id, True), {"scans": [scan(code, 120)]}, auth)
    assert answer.status_code == 200, answer.content
    assert answer.json()["results"][0]["status"] == "not_open"
    assert service.checkin_list(lst.id).admitted == 0
