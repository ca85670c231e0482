"""The change form adds ticket types to an event that sells them (rows as on the add form),
each counting against the event's existing quotas; it says a type cannot be removed, and
refuses a new type naming no quota of the event or an existing name, nothing stored."""
import pytest

from booking.errors import EventFull
from tests.admin.test_events import admin_url, change_data
from tests.orders.test_orders import devconf

pytestmark = pytest.mark.django_db
NO_ROWS = {"newtype-TOTAL_FORMS": "2", "newtype-INITIAL_FORMS": "0"}


def new_type(label, against="", description=""):
    return {**NO_ROWS, "newtype-0-label": label, "newtype-0-counts_against": against,
            "newtype-0-description": description}


def test_change__add_vip_against_workshop_a__stored_labelled_and_counted(admin_client, service):
    event = devconf(service, "lock_table", capacity=10, workshop=3)
    opened = admin_client.get(admin_url("change", event.id))
    html = opened.content.decode()
    assert "cannot be removed" in html and 'name="newtype-0-label"' in html
    response = admin_client.post(admin_url("change", event.id), change_data(
        opened, **new_type("VIP", "Workshop A", "Front row.")))
    assert response.status_code == 302, response.context and response.context["form"].errors
    changed = service.get_event(event.id)
    assert changed.ticket_types["vip"] == ("workshop-a",)
    assert changed.label("vip") == "VIP" and changed.ticket_descriptions["vip"] == "Front row."
    assert {k: v for k, v in changed.ticket_types.items() if k != "vip"} == event.ticket_types
    service.book(changed.id, name="Ada", email="ada@example.com", tickets={"workshop-a": 2})
    with pytest.raises(EventFull) as full:
        service.book(changed.id, name="Bob", email="bob@example.com", tickets={"vip": 2})
    assert full.value.quota == "workshop-a"


@pytest.mark.parametrize("row, words", [
    (new_type("VIP", "Backstage"), "not one of this event's quotas"),
    (new_type("Workshop A"), "already exists"),
])
def test_change__bad_new_type__said_nothing_stored(admin_client, service, row, words):
    event = devconf(service, "lock_table")
    opened = admin_client.get(admin_url("change", event.id))
    response = admin_client.post(admin_url("change", event.id), change_data(opened, **row))
    assert response.status_code == 200
    assert words in response.content.decode().replace("&#x27;", "'")
    assert service.get_event(event.id) == event and (
        service.get_event(event.id).ticket_types == event.ticket_types)


def test_change__no_new_type__nothing_about_types_changes(admin_client, service):
    event = devconf(service, "lock_table")
    opened = admin_client.get(admin_url("change", event.id))
    response = admin_client.post(admin_url("change", event.id),
                                 change_data(opened, name="DevConf 2", **NO_ROWS))
    assert response.status_code == 302
    changed = service.get_event(event.id)
    assert changed.ticket_types == event.ticket_types and changed.ticket_labels == {}
