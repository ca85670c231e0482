"""Organizers' actions land in Django's admin log with who did them."""
import re

import pytest
from django.contrib.admin.models import ADDITION, CHANGE, DELETION, LogEntry
from django.urls import reverse


def admin_url(name, *args):
    return reverse(f"admin:booking_dynamoevent_{name}", args=args)


def entries():
    return [(e.user.username, e.action_flag, e.object_repr, e.change_message)
            for e in LogEntry.objects.order_by("id")]


@pytest.fixture
def event(service):
    return service.create_event(name="Meetup", capacity=5, strategy="lock_table")


def test_add__logged_as_addition_by_user(admin_client, service):
    admin_client.post(admin_url("add"), {"name": "Workshop", "capacity": "3",
                                         "crowd": "hundreds", "starts_at": ""})

    [entry] = LogEntry.objects.all()
    event = service.list_events()[0]
    assert (entry.user.username, entry.action_flag, entry.object_id) == ("admin", ADDITION,
                                                                          event.id)
    assert entry.change_message == "Added with capacity 3, set up for “Hundreds at once”."
    assert entry.get_admin_url() == admin_url("change", event.id)


def test_change__logged_with_what_changed(admin_client, event):
    admin_client.post(admin_url("change", event.id), {
        "name": "Meetup 2", "capacity": "8", "starts_at": "", "version": "1"})

    assert entries() == [("admin", CHANGE, "Meetup 2",
                          "Changed name 'Meetup' → 'Meetup 2', capacity 5 → 8.")]


def test_change__refused__not_logged(admin_client, event):
    admin_client.post(admin_url("change", event.id), {
        "name": "Meetup", "capacity": "8", "starts_at": "", "version": "7"})

    assert entries() == []


def test_delete__logged_as_deletion(admin_client, event):
    admin_client.post(admin_url("delete", event.id))

    assert entries() == [("admin", DELETION, "Meetup", "Deleted with its registrations.")]


def test_cancel_selected__logged_with_the_cancelled(admin_client, service, event):
    for name in ("ada", "bo"):
        service.book(event.id, name=name, email=f"{name}@example.com")

    admin_client.post(admin_url("registrations", event.id), {
        "action": "cancel_selected", "selected": ["ada@example.com", "bo@example.com"],
        "confirm": "yes"})

    assert entries() == [("admin", CHANGE, "Meetup",
                          "Cancelled 2 registration(s): ada@example.com, bo@example.com.")]


def test_export__logged(admin_client, event):
    b"".join(admin_client.get(admin_url("export", event.id) + "?q=ada").streaming_content)

    assert entries() == [("admin", CHANGE, "Meetup",
                          "Exported registrations as CSV (nothing changed), search 'ada'.")]


def test_recent_actions__shown_on_admin_index(admin_client, event):
    admin_client.post(admin_url("delete", event.id))
    admin_client.get("/admin/")  # shows (and so clears) the "was deleted" message

    html = admin_client.get("/admin/").content.decode()
    assert re.search(r'class="actionlist">.*?Meetup.*?</ul>', html, re.S)
