"""The admin's home: each organizer's dashboard of their upcoming events (docs/admin.md)."""
import re
from datetime import datetime, timedelta, timezone

import pytest

from booking.admin import charts, dashboard, views
from booking.models import Event
from booking.service import tallies
from tests.organizers.helpers import staff

pytestmark = pytest.mark.django_db
SOON = (datetime.now(timezone.utc) + timedelta(days=30)).isoformat()


def devconf(service, organizer="acme", name="DevConf"):
    event = service.create_event(
        name=name, capacity=10, strategy="lock_table", starts_at=SOON, organizer=organizer,
        quotas={"workshop-a": 3}, ticket_types={"conference": [], "workshop-a": ["workshop-a"]},
        max_per_order=4)
    service.book(event.id, name="Ada", email="ada@example.com", tickets={"conference": 3})
    service.book(event.id, name="Bo", email="bo@example.com", tickets={"workshop-a": 1})
    return event


def test_home__upcoming_event_with_seats_per_quota_orders_and_chart(admin_client, service):
    event = devconf(service)
    html = admin_client.get("/admin/").content.decode()
    assert "Your upcoming events" in html and event.name in html
    assert "2 orders, 4 seats" in html
    assert "<th scope=\"row\">Workshop A</th><td>1</td><td>2</td><td>3</td>" in html
    assert 'role="img"' in html and "<title id=\"chart-" in html and "<desc" in html
    assert "Conference 3, Workshop A 1" in html  # the chart's description
    assert "<td>3</td><td>1</td><td>4</td>" in html  # today's row: per type, then the total
    assert "Checked in" not in html  # no check-in yet: its place shows nothing
    assert "Site administration" in html  # Django's own index below


def careless_scope(request, action=None):
    """A careless dashboard's scope: every event, whoever asks."""
    return {"organizers": None, "event_ids": ()}


@pytest.mark.parametrize("careless", [False, True])
def test_home__another_organizers_event__never_shown(client, service, monkeypatch, careless):
    devconf(service, organizer="acme", name="Ours")
    devconf(service, organizer="globex", name="Theirs")
    client.force_login(staff("ann", "acme"))
    if careless:  # the control: the same check must see the leak
        monkeypatch.setattr(dashboard, "visible_events", careless_scope)
    html = client.get("/admin/").content.decode()
    assert "Ours" in html
    assert ("Theirs" in html) is careless


def test_home__check_in_rate__per_list_once_the_event_has_lists(admin_client, service):
    event = devconf(service)
    door = service.create_checkin_list(event.id, name="Main door")
    ada = service.find_registration(event.id, email="ada@example.com")
    service.scan(door.id, service.passes(ada)[0].code, nonce="dashboard-1", gate="a")

    assert "Checked in: Main door: 1 of 4, 25%" in admin_client.get("/admin/").content.decode()


def test_tally__stops_at_its_limit_and_says_so(service):
    event = devconf(service)
    service.book(event.id, name="Cy", email="cy@example.com", tickets={"conference": 1})
    assert service.tally_registrations(event.id, limit=2).complete is False
    full = service.tally_registrations(event.id)
    assert (full.orders, full.seats, full.complete) == (3, 5, True)
    read = []
    tallies.tally(iter_counting(service.iter_registrations(event.id), read), limit=2)
    assert len(read) == 3  # the limit's registrations and the one that shows there are more


def iter_counting(registrations, read):
    for registration in registrations:
        read.append(registration)
        yield registration


def test_registrations_page__orders_and_seats_with_their_units(admin_client, service):
    event = devconf(service)
    html = admin_client.get(views.url("registrations", event.id)).content.decode()
    assert "2 orders, 4 seats confirmed" in html


def test_home__cancellations__orders_and_seats_by_attendee_and_organizer(admin_client,
                                                                         service):
    event = devconf(service)
    service.book(event.id, name="Cy", email="cy@example.com", tickets={"conference": 2})
    html = admin_client.get("/admin/").content.decode()
    assert "Cancelled" not in html  # none: no line, and no note about what counts
    service.cancel(event.id, email="bo@example.com")  # the attendee: the whole order
    service.cancel(event.id, email="ada@example.com", tickets={"conference": 1})  # a part
    # the organizer, from the registrations page
    admin_client.post(views.url("registrations", event.id),
                      {"action": "cancel_selected", "confirm": "yes", "selected": ["cy@example.com"]})

    html = admin_client.get("/admin/").content.decode()
    assert "Cancelled: 2 orders, 4 seats." in html
    assert html.count("whole orders cancelled by the attendee or by your team") == 1
    assert html.count("A waiting-list offer that lapses is not a cancellation.") == 1
    assert "1 order, 2 seats" in html  # Ada's order is kept, with 2 of its 3 seats


def test_home__cancellations_unreadable__the_rest_still_shows(admin_client, service,
                                                              monkeypatch):
    devconf(service)

    def unavailable(event_ids):
        from booking.errors import StoreUnavailable
        raise StoreUnavailable()

    monkeypatch.setattr(service, "cancellation_counts", unavailable)
    html = admin_client.get("/admin/").content.decode()
    assert "Cancellations cannot be read right now." in html and "2 orders, 4 seats" in html


def test_home__every_upcoming_event__in_pages_of_ten(admin_client, service):
    """A sixth event no longer pushes one off: all 13 are shown, 10 then 3, soonest first."""
    now = datetime.now(timezone.utc)
    names = [f"Event {n:02d}" for n in range(13)]
    for n, name in enumerate(names):
        service.create_event(name=name, capacity=2, organizer="acme",
                             starts_at=(now + timedelta(days=n + 1)).isoformat())
    first = admin_client.get("/admin/").content.decode()
    assert [name for name in names if name in first] == names[:10]
    assert "Events 1–10 of 13, soonest first." in first
    assert 'href="?events_page=2"' in first and "Later events" in first
    second = admin_client.get("/admin/?events_page=2").content.decode()
    assert [name for name in names if name in second] == names[10:]
    assert "Events 11–13 of 13" in second and "Sooner events" in second
    assert "Later events" not in second


def test_home__beyond_one_read__a_signed_link_continues(admin_client, service, monkeypatch):
    now = datetime.now(timezone.utc)
    for n in range(3):
        service.create_event(name=f"Read {n}", capacity=2, organizer="acme",
                             starts_at=(now + timedelta(days=n + 1)).isoformat())
    monkeypatch.setattr(dashboard, "EVENTS_READ", 2)
    monkeypatch.setattr(dashboard, "EVENTS_SHOWN", 2)
    html = admin_client.get("/admin/").content.decode()
    later = re.search(r'href="(\?events_from=[^"]+)"[^>]*>More upcoming events', html).group(1)
    seen = {n for n in range(3) if f"Read {n}" in html}
    following = admin_client.get("/admin/" + later.replace("&amp;", "&")).content.decode()
    seen |= {n for n in range(3) if f"Read {n}" in following}
    assert seen == {0, 1, 2} and "Back to the first page" in following
    forged = admin_client.get("/admin/?events_from=forged", follow=True).content.decode()
    assert "not valid" in forged and "Read" in forged


def test_chart__two_bookings_a_minute_apart__steps_over_their_minutes_zone_named():
    """Not a diagonal from one day to the next: the axis spans the bookings' minute (and
    now), labelled in the event's zone, named; each booking is a vertical step."""
    event = Event(id="e1", name="Meetup", capacity=10, strategy="lock_table", starts_at=None,
                  created_at=None, version=1, time_zone="Europe/Berlin")
    at = datetime(2026, 12, 1, 23, 41, tzinfo=timezone.utc)  # 2 Dec 00:41 in Berlin
    chart = charts.bookings_chart(event, [(at, {"admission": 1}),
                                          (at + timedelta(minutes=1), {"admission": 1})],
                                  now=at + timedelta(minutes=3))
    assert chart.zone == "CET (Europe/Berlin)" and "Time in CET (Europe/Berlin)" in chart.svg
    assert chart.start == "2 Dec 2026, 00:40:51" and chart.end == "2 Dec 2026, 00:44:00"
    assert "01 Dec" not in chart.svg and [row[0] for row in chart.rows] == ["02 Dec"]
    points = [tuple(map(float, p.split(",")))
              for p in re.search(r'points="([^"]+)"', chart.svg).group(1).split()]
    # flat at 0, up at the first booking, flat, up at the second, flat to the end
    assert [round(y) for _, y in points] == [202, 202, 109, 109, 16, 16]
    assert points[1][0] == points[2][0] and points[3][0] == points[4][0]
    assert points[0][0] < points[1][0] < points[3][0] <= points[5][0]
