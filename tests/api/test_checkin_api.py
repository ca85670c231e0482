"""Check-in over the API: who may list lists (a checkin member's token of either scope)
and scan (write scope only), nothing else, list creation (admin/editor write tokens), answers at the door as
200s, the Idempotency-Key against the nonce, the offline batch, registration bodies'
passes, and another organizer's list answering exactly as a missing one."""
import json
import uuid
from datetime import datetime, timedelta, timezone

import pytest

from booking.api.models import READ, WRITE
from booking.organizers.models import CHECKIN, EDITOR, VIEWER
from tests.organizers.helpers import DEFAULT, issue
from tests.helpers import forged

pytestmark = pytest.mark.django_db


def post(client, path, body, auth, **headers):
    return client.post(path, json.dumps(body), content_type="application/json", **auth,
                       **headers)


@pytest.fixture
def event(service):
    return service.create_event(name="Door", capacity=10, strategy="lock_table",
                                organizer=DEFAULT, ticket_types={"day": [], "vip": []},
                                max_per_order=3)


@pytest.fixture
def booked(service, event):
    return service.book(event.id, name="Ann Lee", email="ann@example.com",
                        tickets={"day": 1, "vip": 1})


def create_list(client, event, auth, **body):
    return post(client, f"/api/v1/events/{event.id}/checkin-lists/",
                {"name": "Main", **body}, auth, HTTP_IDEMPOTENCY_KEY=uuid.uuid4().hex)


def scan(client, list_id, code, auth, **body):
    return post(client, f"/api/v1/checkin-lists/{list_id}/scans/",
                {"code": code, "nonce": uuid.uuid4().hex, **body}, auth)


def test_checkin_token_of_either_scope_lists_a_write_token_scans_nothing_else(
        client, service, event, booked):
    _, admin = issue(WRITE)
    made = create_list(client, event, admin, occupancy_limit=5)
    assert made.status_code == 201, made.content
    list_id = made.json()["id"]
    code = service.passes(booked)[0].code
    for index, scope in enumerate((READ, WRITE)):
        _, door = issue(scope, username=f"door{index}", role=CHECKIN)
        listed = client.get(f"/api/v1/events/{event.id}/checkin-lists/", **door)
        assert listed.status_code == 200 and listed.json()["results"][0]["id"] == list_id
        assert client.get(f"/api/v1/checkin-lists/{list_id}/", **door).status_code == 200
        # nothing else: not the registrations, not a new list, not an edit
        assert client.get(f"/api/v1/events/{event.id}/registrations/",
                          **door).status_code == 403
        assert create_list(client, event, door).status_code == 403
    _, door = issue(WRITE, username="door-w", role=CHECKIN)
    answer = scan(client, list_id, code, door, gate="g0")
    assert answer.status_code == 200
    assert answer.json()["status"] == "admitted"
    assert answer.json()["attendee_name"] == "Ann Lee"
    assert answer.json()["ticket_type"] == "day"
    second = scan(client, list_id, code, admin).json()
    assert second["first_gate"] == "g0" and second["first_admitted_at"]


@pytest.mark.parametrize("role", [CHECKIN, EDITOR, "admin"])
def test_read_scope_token_never_scans__403_nothing_stored(client, service, event, booked, role):
    _, admin = issue(WRITE)
    list_id = create_list(client, event, admin).json()["id"]
    _, reader = issue(READ, username=f"reader-{role}", role=role)
    code = service.passes(booked)[0].code
    one = scan(client, list_id, code, reader)
    many = post(client, f"/api/v1/checkin-lists/{list_id}/scans/batch/",
                {"scans": [{"code": code, "nonce": uuid.uuid4().hex,
                            "scanned_at": datetime.now(timezone.utc).isoformat()}]}, reader)
    assert (one.status_code, many.status_code) == (403, 403)
    assert one["Content-Type"] == "application/problem+json"
    assert service.scan_log(list_id) == [] and service.checkin_list(list_id).admitted == 0


def test_viewer_cannot_scan_and_editor_creates_lists(client, service, event, booked):
    _, viewer = issue(WRITE, username="v", role=VIEWER)
    _, editor = issue(WRITE, username="e", role=EDITOR)
    _, editor_read = issue(READ, username="e2", role=EDITOR)
    made = create_list(client, event, editor)
    assert made.status_code == 201
    assert create_list(client, event, editor_read).status_code == 403
    list_id = made.json()["id"]
    assert scan(client, list_id, service.passes(booked)[0].code, viewer).status_code == 403
    assert client.get(f"/api/v1/events/{event.id}/checkin-lists/", **viewer).status_code == 403


def test_another_organizers_list_answers_as_a_missing_one(client, service, event, booked):
    _, ours = issue(WRITE)
    list_id = create_list(client, event, ours).json()["id"]
    _, theirs = issue(WRITE, username="other", slug="globex")
    code = service.passes(booked)[0].code
    for path in (f"/api/v1/checkin-lists/{list_id}/", f"/api/v1/checkin-lists/{'f' * 32}/"):
        answer = client.get(path, **theirs)
        assert answer.status_code == 404
        assert answer.json()["type"].endswith("checkin-list-not-found")
    missing = scan(client, "f" * 32, code, theirs).json()
    assert scan(client, list_id, code, theirs).json() == missing
    assert service.checkin_list(list_id).admitted == 0


def test_the_same_nonce_answers_the_first_answer_and_the_key_must_equal_it(client, service,
                                                                          event, booked):
    _, auth = issue(WRITE)
    list_id = create_list(client, event, auth).json()["id"]
    code, nonce = service.passes(booked)[0].code, uuid.uuid4().hex
    path = f"/api/v1/checkin-lists/{list_id}/scans/"
    first = post(client, path, {"code": code, "nonce": nonce, "gate": "a"}, auth,
                 HTTP_IDEMPOTENCY_KEY=nonce)
    again = post(client, path, {"code": code, "nonce": nonce, "gate": "a"}, auth)
    assert first.json()["status"] == again.json()["status"] == "admitted"
    other = post(client, path, {"code": code, "nonce": uuid.uuid4().hex}, auth,
                 HTTP_IDEMPOTENCY_KEY="not-the-nonce")
    assert other.status_code == 400
    assert len(service.scan_log(list_id)) == 1


def test_bad_scans_are_400_with_nothing_stored(client, service, event, booked):
    _, auth = issue(WRITE)
    list_id = create_list(client, event, auth).json()["id"]
    path = f"/api/v1/checkin-lists/{list_id}/scans/"
    code = service.passes(booked)[0].code
    for body in ({"code": code}, {"code": code, "nonce": "x"},
                 {"code": code, "nonce": uuid.uuid4().hex, "direction": "up"}, {}):
        assert post(client, path, body, auth).status_code == 400
    assert service.scan_log(list_id) == []
    bad = create_list(client, event, auth, ticket_types=["nope"])
    assert bad.status_code == 400
    assert len(service.checkin_lists(event.id)) == 1


def test_forged_code_is_a_200_unknown_code(client, service, event, booked):
    _, auth = issue(WRITE)
    list_id = create_list(client, event, auth).json()["id"]
    code = service.passes(booked)[0].code
    answer = scan(client, list_id, forged(code), auth)
    assert answer.status_code == 200 and answer.json()["status"] == "unknown_code"
    assert answer.json()["accepted"] is False


def test_batch_decides_in_time_order_and_a_reupload_changes_nothing(client, service, event,
                                                                     booked):
    _, auth = issue(WRITE)
    list_id = create_list(client, event, auth).json()["id"]
    code = service.passes(booked)[0].code
    now = datetime.now(timezone.utc)
    scans = [{"code": code, "nonce": uuid.uuid4().hex, "gate": "late",
              "scanned_at": (now - timedelta(minutes=5)).isoformat()},
             {"code": code, "nonce": uuid.uuid4().hex, "gate": "early",
              "scanned_at": (now - timedelta(minutes=10)).isoformat()}]
    path = f"/api/v1/checkin-lists/{list_id}/scans/batch/"
    first = post(client, path, {"scans": scans}, auth)
    assert first.status_code == 200, first.content
    statuses = [r["status"] for r in first.json()["results"]]
    assert statuses == ["already_admitted", "admitted"]  # the earlier scan admitted
    assert first.json()["results"][0]["first_gate"] == "early"
    again = post(client, path, {"scans": scans}, auth)
    assert again.json() == first.json()
    counts = client.get(f"/api/v1/checkin-lists/{list_id}/", **auth).json()
    assert (counts["admitted"], counts["conflicts"], counts["expected"]) == (1, 1, 2)
    assert counts["conflict_log"][0]["second_gate"] == "late"


def test_registration_bodies_list_their_passes(client, service, event, booked):
    _, auth = issue(WRITE)
    body = client.get(f"/api/v1/events/{event.id}/registrations/", **auth).json()
    passes = body["results"][0]["passes"]
    assert [(p["ticket_type"], p["status"]) for p in passes] == [("day", "valid"),
                                                                  ("vip", "valid")]
    assert passes[0]["code"] == service.passes(booked)[0].code


def test_scan_by_booking_reference__choose_pass_then_its_short_code_admits(client, service,
                                                                          event, booked):
    _, auth = issue(WRITE)
    list_id = create_list(client, event, auth).json()["id"]
    pick = scan(client, list_id, booked.reference, auth)
    assert pick.status_code == 200, pick.content
    body = pick.json()
    assert body["status"] == "choose_pass" and body["accepted"] is False
    assert [c["ticket_label"] for c in body["choices"]] == ["Day", "Vip"]
    assert service.scan_log(list_id) == []  # nothing decided, nothing stored
    admitted = scan(client, list_id, body["choices"][1]["short_code"], auth).json()
    assert admitted["status"] == "admitted" and admitted["ticket_type"] == "vip"
