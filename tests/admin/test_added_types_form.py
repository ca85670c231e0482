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
    (new_type("Capacity"), "the event's own capacity"),
    ({**new_type("Main days"), "label_conference": "Main days"}, "reads like the ticket type"),
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


# --- existing types: label and description editable, key and quotas fixed ---------------
def test_change__existing_type_relabelled_and_described__key_and_quotas_kept(
        admin_client, service):
    event = devconf(service, "lock_table", ticket_labels={"workshop-b": "Workshop B (room 2)"})
    service.book(event.id, name="Ada", email="ada@example.com", tickets={"workshop-a": 1})
    opened = admin_client.get(admin_url("change", event.id))
    html = opened.content.decode()
    assert 'name="label_workshop-a"' in html and 'value="Workshop A"' in html
    assert "keeps its key and the quotas it counts against" in html  # said before saving
    assert "bookings may hold it" in html and 'name="quota_workshop-a"' in html
    response = admin_client.post(admin_url("change", event.id), change_data(
        opened, **{"label_workshop-a": "Robotics workshop",
                   "description_workshop-a": "Bring a laptop."}))
    assert response.status_code == 302, response.context and response.context["form"].errors
    changed = service.get_event(event.id)
    assert changed.ticket_types == event.ticket_types and changed.quotas == event.quotas
    assert changed.ticket_labels == {"workshop-a": "Robotics workshop",
                                     "workshop-b": "Workshop B (room 2)"}
    assert changed.ticket_descriptions == {"workshop-a": "Bring a laptop."}
    (booked,) = service.registrations(event.id)
    assert booked.tickets == {"workshop-a": 1}  # the booking still names its type's key
    page = admin_client.get(admin_url("change", event.id)).content.decode()
    assert "A Robotics workshop seat takes 1 of the 10 seats" in page


def test_change__label_emptied__derived_label_again(admin_client, service):
    event = devconf(service, "lock_table", ticket_labels={"conference": "Main days"})
    opened = admin_client.get(admin_url("change", event.id))
    response = admin_client.post(admin_url("change", event.id),
                                 change_data(opened, label_conference=""))
    assert response.status_code == 302, response.context and response.context["form"].errors
    changed = service.get_event(event.id)
    assert changed.ticket_labels == {} and changed.label("conference") == "Conference"


def test_change__two_types_one_label__refused_nothing_stored(admin_client, service):
    event = devconf(service, "lock_table")
    opened = admin_client.get(admin_url("change", event.id))
    response = admin_client.post(admin_url("change", event.id), change_data(
        opened, **{"label_workshop-b": "workshop a", "description_conference": "Talks."}))
    assert response.status_code == 200
    errors = response.context["form"].errors["label_workshop-b"]
    assert "already the label of the ticket type" in errors[0]
    assert "#id_label_workshop-b" in response.content.decode()  # linked from the summary
    stored = service.get_event(event.id)
    assert stored.ticket_labels == {} and stored.ticket_descriptions == {}


def test_change__type_added_since_the_form_was_read__keeps_its_label_and_description(
        admin_client, service):
    event = devconf(service, "lock_table")
    opened = admin_client.get(admin_url("change", event.id))
    posted = change_data(opened, label_conference="Main days")
    added = service.update_event(  # another organizer adds a type meanwhile
        event.id, expected_version=event.version,
        ticket_types={**{n: list(q) for n, q in event.ticket_types.items()}, "vip": []},
        ticket_labels={"vip": "VIP"}, ticket_descriptions={"vip": "Front row."})
    stale = admin_client.post(admin_url("change", event.id), posted)
    assert stale.status_code == 200 and stale.context["conflict"].version == added.version
    # The reapplied form shows the new type as it is now; saving it keeps it.
    assert stale.context["form"]["label_vip"].value() == "VIP"
    again = admin_client.post(admin_url("change", event.id), change_data(stale))
    assert again.status_code == 302, again.context and again.context["form"].errors
    changed = service.get_event(event.id)
    assert changed.ticket_labels == {"conference": "Main days", "vip": "VIP"}
    assert changed.ticket_descriptions == {"vip": "Front row."}
    # A post without a type's fields at all (a script's) changes neither.
    current = admin_client.get(admin_url("change", event.id))
    data = {k: v for k, v in change_data(current).items() if not k.endswith("_vip")}
    assert admin_client.post(admin_url("change", event.id), data).status_code == 302
    assert service.get_event(event.id).label("vip") == "VIP"
    assert service.get_event(event.id).ticket_descriptions == {"vip": "Front row."}


def test_change__one_seat_per_order_event_with_types__says_why_it_stays(admin_client, service):
    event = service.create_event(name="Gala", capacity=5, strategy="lock_table",
                                 ticket_types={"standing": [], "vip": []})
    html = admin_client.get(admin_url("change", event.id)).content.decode()
    assert "created for one seat per order" in html and 'name="max_per_order"' not in html
    assert 'name="label_vip"' in html
