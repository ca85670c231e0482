"""The scanner's start page (``/checkin/``): the events the door is most likely scanning
for come first (under way and upcoming, soonest first; then past ones, most recent
first), and an event without a list links its admin or editor to the one-click
"Create the entrance list" (door staff, who may not create lists, are told who can)."""
from datetime import datetime, timedelta, timezone

from booking.organizers.models import CHECKIN, EDITOR
from tests.organizers.helpers import staff


def test_door_events__upcoming_soonest_first_then_past_most_recent_first(service, db, client):
    now = datetime.now(timezone.utc)
    made = {}
    for name, days in (("Last year", -365), ("Last week", -7), ("Tomorrow", 1),
                       ("Next month", 30), ("Yesterday", -1), ("In a week", 7)):
        starts = now + timedelta(days=days)
        made[name] = service.create_event(
            name=f"{name} at the door", capacity=5, organizer="pickorg",
            starts_at=starts.isoformat(), ends_at=(starts + timedelta(hours=3)).isoformat())
    under_way = service.create_event(
        name="Under way at the door", capacity=5, organizer="pickorg",
        starts_at=(now - timedelta(hours=1)).isoformat(),
        ends_at=(now + timedelta(hours=2)).isoformat())
    for event in [*made.values(), under_way]:
        service.create_checkin_list(event.id, name="Main door")
    client.force_login(staff("pick-door", "pickorg", CHECKIN))

    page = client.get("/checkin/").content.decode()

    order = ["Under way", "Tomorrow", "In a week", "Next month",
             "Yesterday", "Last week", "Last year"]
    positions = [page.index(f"{name} at the door") for name in order]
    assert positions == sorted(positions), order


def test_event_without_a_list__the_editor_gets_the_entrance_link_door_staff_do_not(
        service, db, client):
    event = service.create_event(name="Listless night", capacity=5, organizer="pickorg",
                                 starts_at="2031-05-01T18:00:00+00:00")
    entrance = f"/admin/booking/dynamoevent/{event.id}/checkin/"

    client.force_login(staff("pick-editor", "pickorg", EDITOR))
    page = client.get("/checkin/").content.decode()
    assert "Create the entrance list" in page and entrance in page

    client.force_login(staff("pick-door2", "pickorg", CHECKIN))
    page = client.get("/checkin/").content.decode()
    assert "Listless night" in page and "Create the entrance list" not in page
    assert "an organizer's admin or editor creates one" in page
