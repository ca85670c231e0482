"""Event times in the event's own zone, description, venue, end time, calendar files, the
re-sent confirmation and HTML e-mail: service, pages, admin, e-mail, commands, CSV."""
import json
import re
from datetime import datetime, timezone
from io import StringIO

import pytest
from django.core import mail
from django.core.management import call_command
from django.urls import reverse

from booking.errors import InvalidBooking
from tests.mail.helpers import deliver_owed

pytestmark = pytest.mark.django_db
BERLIN_EVENING = "2030-12-12 19:30"  # 18:30 UTC in winter


@pytest.fixture
def berlin(service):
    return service.create_event(
        name="Wine tasting", capacity=1200, time_zone="Europe/Berlin",
        starts_at=BERLIN_EVENING, ends_at="2030-12-12 22:00",
        venue="Weinbar, Kastanienallee 1, Berlin", description="Six wines.\nBring a friend.")


def test_create__local_time__stored_in_utc_read_in_its_zone(service, berlin):
    stored = service.get_event(berlin.id)
    assert stored.starts_at == datetime(2030, 12, 12, 18, 30, tzinfo=timezone.utc)
    assert stored.ends_at == datetime(2030, 12, 12, 21, 0, tzinfo=timezone.utc)
    assert (stored.time_zone, stored.venue) == ("Europe/Berlin", berlin.venue)
    assert stored.description == "Six wines.\nBring a friend."


def test_create__no_zone_given__the_services_default_zone(dynamo):
    from booking.service import BookingService

    tokyo = BookingService(store=dynamo, default_strategy="lock_table",
                           default_time_zone="Asia/Tokyo")

    event = tokyo.create_event(name="Talk", capacity=5, starts_at="2031-12-12 19:30")

    assert event.time_zone == "Asia/Tokyo"
    assert event.starts_at == datetime(2031, 12, 12, 10, 30, tzinfo=timezone.utc)


def test_create__offset_given__same_instant_whatever_the_zone(service):
    event = service.create_event(name="Talk", capacity=1, time_zone="America/New_York",
                                 starts_at="2030-12-12T19:30+01:00")
    assert event.starts_at == datetime(2030, 12, 12, 18, 30, tzinfo=timezone.utc)


@pytest.mark.parametrize("fields, field", [
    ({"time_zone": "Mars/Olympus"}, "time_zone"),
    ({"time_zone": "cet "}, "time_zone"),
    ({"starts_at": "2030-12-12 19:30", "ends_at": "2030-12-12 19:00"}, "ends_at"),
    ({"starts_at": "2030-12-12 19:30", "ends_at": "2030-12-12 19:30"}, "ends_at"),
    ({"ends_at": "2030-12-12 19:00"}, "ends_at"),
    ({"starts_at": "12/12/2030 7:30 PM"}, "starts_at"),
    ({"venue": "x" * 201}, "venue"),
    ({"venue": "Hall\nB"}, "venue"),
    ({"description": "x" * 2001}, "description"),
    ({"description": "Bell\x07"}, "description"),
])
def test_create__bad_input__error_names_field_nothing_stored(service, fields, field):
    before = list(service.iter_events())
    with pytest.raises(InvalidBooking) as refused:
        service.create_event(name="Talk", capacity=1, **fields)
    assert refused.value.field == field
    assert list(service.iter_events()) == before


def test_update__end_before_new_start__refused(service, berlin):
    with pytest.raises(InvalidBooking) as refused:
        service.update_event(berlin.id, expected_version=berlin.version,
                             starts_at="2030-12-12 23:00")
    assert refused.value.field == "ends_at"
    assert service.get_event(berlin.id).starts_at == berlin.starts_at


def test_event_page__time_in_event_zone_labelled_venue_description_calendar(client, berlin):
    html = client.get(reverse("booking:event_detail", args=[berlin.id])).content.decode()
    assert "Thu 12 Dec 2030, 19:30–22:00 CET (Europe/Berlin)" in html
    assert 'datetime="2030-12-12T19:30:00+01:00"' in html
    assert "Kastanienallee 1" in html and "Six wines.<br>Bring a friend." in html
    assert "1,200 of 1,200 seats left" in html and "Capacity" not in html
    assert reverse("booking:event_ics", args=[berlin.id]) in html
    assert "calendar.google.com" in html and "dates=20301212T183000Z%2F20301212T210000Z" in html


def test_event_list__same_instant_and_label(client, berlin):
    html = client.get(reverse("booking:event_list")).content.decode()
    assert "19:30–22:00 CET (Europe/Berlin)" in html and "1,200 of 1,200 seats left" in html


def test_ics__utc_times_escaped_text_folded_lines(client, berlin):
    response = client.get(reverse("booking:event_ics", args=[berlin.id]))
    body = response.content.decode()
    assert response["Content-Type"].startswith("text/calendar")
    assert "DTSTART:20301212T183000Z\r\n" in body and "DTEND:20301212T210000Z\r\n" in body
    assert "LOCATION:Weinbar\\, Kastanienallee 1\\, Berlin\r\n" in body
    assert f"UID:{berlin.id}@event-booking" in body
    assert all(len(line.encode()) <= 75 for line in body.split("\r\n"))
    assert body.startswith("BEGIN:VCALENDAR\r\n") and body.endswith("END:VCALENDAR\r\n")


def test_ics__no_start__404(client, service):
    event = service.create_event(name="Someday", capacity=1)
    assert client.get(reverse("booking:event_ics", args=[event.id])).status_code == 404


def _book_through_form(client, event, email="ada@example.com"):
    page = client.get(reverse("booking:event_detail", args=[event.id])).content.decode()
    token = re.search(r'name="token" value="([^"]+)"', page).group(1)
    response = client.post(reverse("booking:event_detail", args=[event.id]),
                           {"name": "Grace Hopper", "email": email, "token": token})
    deliver_owed()
    return response


def test_confirmation_mail__html_and_text_zone_labelled_with_ics(client, berlin):
    _book_through_form(client, berlin)
    [message] = mail.outbox
    assert "Hello Grace Hopper,\n\nYour seat" in message.body
    assert "Thu 12 Dec 2030, 19:30–22:00 CET (Europe/Berlin)" in message.body
    [(html, mimetype)] = message.alternatives
    assert mimetype == "text/html" and "19:30–22:00 CET (Europe/Berlin)" in html
    assert "Cancel my booking" in html and "/cancel/" in html
    [(filename, ics, ics_type)] = message.attachments
    assert filename.endswith(".ics") and ics_type == "text/calendar"
    assert "DTSTART:20301212T183000Z" in ics


def test_success_page__last_seat__celebrates_without_full_badge(client, service):
    event = service.create_event(name="Tiny", capacity=1, starts_at="2030-12-12 19:30")
    booked = client.get(_book_through_form(client, event)["Location"]).content.decode()
    assert "You're booked!" in booked and "You got the last one." in booked
    assert "badge-full" not in booked and "Add to calendar" in booked


def test_already_registered__offers_resend__mailed_never_shown(client, berlin):
    _book_through_form(client, berlin)
    again = _book_through_form(client, berlin, email="ADA@example.com")
    html = again.content.decode()
    assert again.status_code == 409 and "E-mail my confirmation again" in html
    assert "/cancel/" not in html and "Book my seat" not in html

    response = client.post(reverse("booking:resend", args=[berlin.id]),
                           {"email": "ADA@example.com"})
    deliver_owed()
    assert response.status_code == 200 and "/cancel/" not in response.content.decode()
    assert [m.subject for m in mail.outbox] == ["Booked: Wine tasting"] * 2
    assert mail.outbox[0].body == mail.outbox[1].body  # the same cancellation link


def test_resend__unregistered_address__same_answer_no_mail(client, berlin):
    response = client.post(reverse("booking:resend", args=[berlin.id]),
                           {"email": "nobody@example.com"})
    deliver_owed()
    assert response.status_code == 200 and mail.outbox == []


def test_resend__rate_limited_per_network(client, berlin, settings):
    settings.BOOKING_RESEND_RATE = "1/h"
    url = reverse("booking:resend", args=[berlin.id])
    assert client.post(url, {"email": "ada@example.com"}).status_code == 200
    assert client.post(url, {"email": "bob@example.com"}).status_code == 429


def test_create_event_command__one_line_summary_with_zone(service, default_organizer):
    out = StringIO()
    call_command("create_event", name="Wine tasting", capacity="20", time_zone="Europe/Berlin",
                 starts_at=BERLIN_EVENING, stdout=out)
    line = out.getvalue().strip()
    event_id = line.split()[0]
    assert re.fullmatch(r"[0-9a-f]{32}", event_id) and "\n" not in line
    assert "Wine tasting" in line and "2030-12-12 19:30 CET (Europe/Berlin)" in line
    assert "lock_table" in line and "capacity 20" in line


def test_list_events__start_with_offset_and_zone(service, berlin):
    out = StringIO()
    call_command("list_events", stdout=out)
    assert "2030-12-12 19:30+01:00" in out.getvalue()
    out = StringIO()
    call_command("list_events", "--json", stdout=out)
    [row] = json.loads(out.getvalue())
    assert row["starts_at"] == "2030-12-12T19:30:00+01:00" and row["time_zone"] == "Europe/Berlin"


# --- local times that do not exist, or exist twice ------------------------------------
@pytest.mark.parametrize(("starts_at", "zone", "named"), [
    ("2030-03-31 02:30", "Europe/Berlin", ["02:00", "03:00", "01:59"]),   # clocks go forward
    ("2030-03-10 02:15", "America/New_York", ["02:00", "03:00", "01:59"]),
])
def test_create__start_in_a_daylight_saving_gap__refused_naming_valid_times(
        service, starts_at, zone, named):
    with pytest.raises(InvalidBooking) as refused:
        service.create_event(name="Night run", capacity=5, time_zone=zone, starts_at=starts_at)

    assert refused.value.field == "starts_at" and "does not exist" in refused.value.message
    assert all(time in refused.value.message for time in named)
    assert service.list_events() == []


def test_create__start_in_a_daylight_saving_overlap__refused_naming_both_offsets(service):
    with pytest.raises(InvalidBooking) as refused:
        service.create_event(name="Night run", capacity=5, time_zone="Europe/Berlin",
                             starts_at="2030-10-27 02:30")

    assert "happens twice" in refused.value.message
    assert "2030-10-27 02:30+02:00" in refused.value.message
    assert "2030-10-27 02:30+01:00" in refused.value.message
    assert service.list_events() == []


def test_create__overlap_time_with_its_offset__stored_as_that_instant(service):
    event = service.create_event(name="Night run", capacity=5, time_zone="Europe/Berlin",
                                 starts_at="2030-10-27 02:30+01:00")

    assert event.starts_at == datetime(2030, 10, 27, 1, 30, tzinfo=timezone.utc)


def test_admin_change__end_in_a_gap__error_at_field_nothing_changed(admin_client, service,
                                                                     berlin):
    response = admin_client.post(reverse("admin:booking_dynamoevent_change", args=[berlin.id]), {
        "name": berlin.name, "capacity": "1200", "time_zone": "Europe/Berlin",
        "starts_at": "2031-03-30 01:00", "ends_at": "2031-03-30 02:30", "version": "1"})

    assert response.status_code == 200
    assert "does not exist in Europe/Berlin" in response.content.decode()
    assert service.get_event(berlin.id) == berlin


def test_ticket_descriptions__stored_only_when_given__other_events_as_before(service):
    from booking.dynamo import items
    from booking.service.catalog import creation_fingerprint

    kinds = {"conference": [], "workshop-a": []}
    bare = service.create_event(name="A", capacity=5, ticket_types=kinds, max_per_order=2)
    assert "ticket_descriptions" not in items.event_item(bare)
    described = service.create_event(name="A", capacity=5, ticket_types=kinds, max_per_order=2,
                                     ticket_descriptions={"conference": "Both days."})
    assert service.get_event(described.id).ticket_descriptions == {"conference": "Both days."}
    assert creation_fingerprint(bare) != creation_fingerprint(described)
