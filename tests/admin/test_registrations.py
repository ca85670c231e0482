"""The registrations page of an event: list, search, paging, cancel action, CSV export."""
import csv
import io

import pytest
from django.urls import reverse

from django.core import mail

from booking.admin import EventAdmin
from tests.mail.helpers import deliver_owed

GUARDED = ("aggregate", "lock_table", "slots")
pytestmark = pytest.mark.django_db


def admin_url(name, *args):
    return reverse(f"admin:booking_dynamoevent_{name}", args=args)


def emails_on(response):
    return [r.email for r in response.context["registrations"]]


@pytest.fixture(params=GUARDED)
def booked_event(request, service):
    event = service.create_event(name="Talk", capacity=5, strategy=request.param)
    for name, email in [("Ada Lovelace", "ada@example.com"), ("Bob", "bob@example.com"),
                        ("Cy", "cy@example.com")]:
        service.book(event.id, name=name, email=email)
    return event


def test_registrations__lists_everyone_with_time(admin_client, booked_event):
    response = admin_client.get(admin_url("registrations", booked_event.id))
    assert emails_on(response) == ["ada@example.com", "bob@example.com", "cy@example.com"]
    assert "Ada Lovelace" in response.content.decode()
    assert "3 orders, 3 seats confirmed. 2 of 5 seats remaining." in response.content.decode()


def test_registrations__search__matches_name_or_email(admin_client, booked_event):
    url = admin_url("registrations", booked_event.id)
    assert emails_on(admin_client.get(url + "?q=lovelace")) == ["ada@example.com"]
    assert emails_on(admin_client.get(url + "?q=BOB@")) == ["bob@example.com"]


def test_registrations__pages__next_link_continues_after_cursor(admin_client, booked_event,
                                                                monkeypatch):
    monkeypatch.setattr(EventAdmin, "list_per_page", 2)
    url = admin_url("registrations", booked_event.id)
    first = admin_client.get(url)
    second = admin_client.get(url + first.context["next_url"])
    assert emails_on(first) + emails_on(second) == [
        "ada@example.com", "bob@example.com", "cy@example.com"]
    assert second.context["next_url"] == "" and second.context["first_url"]


def test_cancel_selected__asks_first_then_frees_seats_and_mails_each(admin_client, service,
                                                                      booked_event):
    url = admin_url("registrations", booked_event.id)
    deliver_owed()
    mail.outbox.clear()  # the bookings' confirmations
    chosen = {"action": "cancel_selected", "selected": ["ada@example.com", "cy@example.com"]}
    asked = admin_client.post(url, chosen)
    assert asked.status_code == 200 and "Yes, cancel and e-mail them" in asked.content.decode()
    assert service.availability(booked_event.id).confirmed == 3  # nothing yet

    response = admin_client.post(url, {**chosen, "confirm": "yes"}, follow=True)
    deliver_owed()
    assert "Cancelled 2 registrations" in response.content.decode()
    assert emails_on(response) == ["bob@example.com"]
    assert service.availability(booked_event.id).remaining == 4
    assert sorted(m.to[0] for m in mail.outbox) == ["ada@example.com", "cy@example.com"]
    assert all(m.subject == "Cancelled: Talk" for m in mail.outbox)


def test_registrations__sorted_by_time_both_ways_and_paged(admin_client, booked_event,
                                                           monkeypatch):
    url = admin_url("registrations", booked_event.id)
    booked_order = ["ada@example.com", "bob@example.com", "cy@example.com"]
    assert emails_on(admin_client.get(url + "?o=time")) == booked_order
    assert emails_on(admin_client.get(url + "?o=-time")) == booked_order[::-1]
    monkeypatch.setattr(EventAdmin, "list_per_page", 2)
    first = admin_client.get(url + "?o=-time")
    second = admin_client.get(url + first.context["next_url"])
    assert emails_on(first) + emails_on(second) == booked_order[::-1]


def test_cancel_selected__no_action_chosen__cancels_nothing(admin_client, service, booked_event):
    url = admin_url("registrations", booked_event.id)
    response = admin_client.post(url, {"selected": ["ada@example.com"]}, follow=True)
    assert "Choose an action" in response.content.decode()
    assert service.availability(booked_event.id).confirmed == 3


def test_export__streams_csv_with_header_and_guards_formulas(admin_client, service):
    event = service.create_event(name="Talk", capacity=3, strategy="lock_table")
    service.book(event.id, name="=HYPERLINK(\"http://x\")", email="eve@example.com")
    service.book(event.id, name="Zoë, \"Z\"", email="zoe@example.com")
    response = admin_client.get(admin_url("export", event.id))
    assert response.streaming and response["Content-Type"].startswith("text/csv")
    assert "attachment" in response["Content-Disposition"]
    body = b"".join(response.streaming_content).decode()
    rows = list(csv.reader(io.StringIO(body)))
    assert rows[0] == ["name", "email", "registered_at"]
    assert [row[:2] for row in rows[1:]] == [
        ["'=HYPERLINK(\"http://x\")", "eve@example.com"], ["Zoë, \"Z\"", "zoe@example.com"]]
    assert rows[1][2].startswith("20")
