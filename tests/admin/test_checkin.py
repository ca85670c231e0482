"""The admin's check-in pages: lists with live counts, adding a list, the scan log with
its conflicts, the CSV; another organizer's event or list answers as a missing one."""
import csv
import io
import uuid
from datetime import datetime, timedelta, timezone

import pytest
from django.urls import reverse

from booking.organizers.models import CHECKIN, VIEWER
from tests.organizers.helpers import DEFAULT, staff

pytestmark = pytest.mark.django_db


def admin_url(name, *args):
    return reverse(f"admin:booking_dynamoevent_{name}", args=args)


@pytest.fixture
def door(service):
    event = service.create_event(name="Gala", capacity=5, organizer=DEFAULT)
    ann = service.book(event.id, name="Ann", email="ann@example.com")
    hall = service.create_checkin_list(event.id, name="Hall", occupancy_limit=3)
    code = service.passes(ann)[0].code
    service.scan(hall.id, code, nonce=uuid.uuid4().hex, gate="north")
    when = datetime.now(timezone.utc) - timedelta(minutes=1)
    service.scan_batch(hall.id, [{"code": code, "nonce": uuid.uuid4().hex, "gate": "south",
                                  "scanned_at": when}])
    return event, hall


def test_lists_with_live_counts_and_the_log_with_its_conflict(admin_client, door):
    event, hall = door
    listed = admin_client.get(admin_url("checkin", event.id))
    assert listed.status_code == 200
    [counted] = listed.context["lists"]
    assert (counted.expected, counted.admitted, counted.inside, counted.conflicts) == (1, 1, 1, 1)
    detail = admin_client.get(admin_url("checkin", event.id) + f"?list={hall.id}")
    html = detail.content.decode()
    assert detail.status_code == 200 and "Conflicts: passes let in offline twice" in html
    assert [c.second_gate for c in detail.context["conflicts"]] == ["south"]
    exported = admin_client.get(admin_url("checkin_export", event.id) + f"?list={hall.id}")
    rows = list(csv.DictReader(io.StringIO(b"".join(exported.streaming_content).decode())))
    assert sorted((r["gate"], r["status"], r["conflict"]) for r in rows) == [
        ("north", "admitted", ""), ("south", "already_admitted", "yes")]
    assert rows[0]["name"] == "Ann"


def test_adding_a_list_and_bad_input(admin_client, service, door):
    event, _ = door
    admin_client.post(admin_url("checkin", event.id), {"name": "Side", "occupancy_limit": "7"})
    admin_client.post(admin_url("checkin", event.id), {"name": "", "occupancy_limit": "x"})
    assert sorted((l.name, l.occupancy_limit) for l in service.checkin_lists(event.id)) == [
        ("Hall", 3), ("Side", 7)]


def test_a_viewer_sees_a_checkin_member_does_not_another_organizer_as_missing(client, service,
                                                                             door):
    event, hall = door
    client.force_login(staff("viewer", role=VIEWER))
    assert client.get(admin_url("checkin", event.id)).status_code == 200
    assert client.post(admin_url("checkin", event.id), {"name": "X"}).status_code == 403
    client.force_login(staff("door", role=CHECKIN))
    assert client.get(admin_url("checkin", event.id)).status_code == 403
    client.force_login(staff("other", slug="globex"))
    theirs = client.get(admin_url("checkin", event.id) + f"?list={hall.id}")
    missing = client.get(admin_url("checkin", "0" * 32) + f"?list={hall.id}")
    assert theirs.status_code == missing.status_code == 404
    other = service.create_event(name="Theirs", capacity=2, organizer="globex")
    mine = client.get(admin_url("checkin", other.id) + f"?list={hall.id}")
    assert mine.status_code == 404  # a list of another event


@pytest.mark.parametrize("limit", ["²", "٣", "3.0", "-1"])
def test_add_list__limit_not_ascii_digits__a_clear_error_nothing_stored(admin_client, service,
                                                                       limit):
    event = service.create_event(name="Fair", capacity=5, organizer=DEFAULT)
    answer = admin_client.post(admin_url("checkin", event.id),
                               {"name": "Hall", "occupancy_limit": limit}, follow=True)
    assert answer.status_code == 200
    assert "whole number" in answer.content.decode()
    assert service.checkin_lists(event.id) == []


def test_scanner_batch__json_3000_deep__400_not_500(admin_client, door):
    _, hall = door
    deep = '{"scans": ' + "[" * 3000 + "]" * 3000 + "}"
    answer = admin_client.post(reverse("booking:checkin_batch", args=[hall.id]), deep,
                               content_type="application/json")
    assert answer.status_code == 400 and "error" in answer.json()
