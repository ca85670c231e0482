"""The admin and orders (docs/admin.md): the add form's ticket types, quotas and seats per
order, validated by the service; per-quota seats in the list and on the event's page; the
registrations with their tickets, and the CSV with a row per order."""
import csv
import io

import pytest
from django.contrib.admin.models import LogEntry

from booking.errors import InvalidBooking
from tests.admin.test_events import admin_url, change_data, rows
from tests.orders.test_orders import devconf

pytestmark = pytest.mark.django_db
PLAIN = {"name": "DevConf", "capacity": "10", "crowd": "few"}
ORDERS = {**PLAIN, **rows(quotas=[("Workshop A", "3"), ("Workshop B", "2")],
                          types=[("Conference", "The talks, both days.", ""),
                                 ("Workshop A", "", "Workshop A"),
                                 ("Both", "", "workshop-a, Workshop B")]),
          "max_per_order": "4"}


@pytest.mark.parametrize("crowd", ["few", "hundreds"])
def test_add__types_quotas_and_max__creates_an_order_event(admin_client, service, crowd):
    response = admin_client.post(admin_url("add"), {**ORDERS, "crowd": crowd})
    assert response.status_code == 302, response.context and response.context["form"].errors
    (event,) = service.iter_events()
    assert event.quotas == {"workshop-a": 3, "workshop-b": 2} and event.max_per_order == 4
    assert {name: list(q) for name, q in event.ticket_types.items()} == {
        "conference": [], "workshop-a": ["workshop-a"], "both": ["workshop-a", "workshop-b"]}
    assert event.ticket_descriptions == {"conference": "The talks, both days."}
    (entry,) = LogEntry.objects.all()
    assert "Quotas: workshop-a 3, workshop-b 2; ticket types: conference, workshop-a, both; " \
           "up to 4 seats per order." in entry.change_message


def test_add__plain__rows_left_empty_or_one_seat__a_plain_event(admin_client, service):
    form = admin_client.get(admin_url("add")).content.decode()
    assert "Ticket types, quotas and seats per order (optional)" in form
    assert "<details>" in form  # closed: a plain event's form looks as before
    for extra in ({}, {**rows(), "max_per_order": "1"}):
        assert admin_client.post(admin_url("add"), {**PLAIN, **extra}).status_code == 302
    events = list(service.iter_events())
    assert len(events) == 2 and all(event.is_plain for event in events)


@pytest.mark.parametrize(("data", "text"), [
    (rows(quotas=[("Workshop A", "")], types=[("Workshop A", "", "Workshop A")]),
     "How many seats does this quota have?"),
    (rows(quotas=[("Workshop A", "3"), ("workshop a", "4")], types=[("A", "", "")]),
     "“workshop a” is given twice"),
    (rows(quotas=[("Capacity", "3")], types=[("A", "", "")]), "the event's own capacity"),
    (rows(quotas=[("!!!", "3")], types=[("A", "", "")]), "Use letters or digits"),
    (rows(types=[("General", "", ""), ("Capacity", "", "")]), "the event's own capacity"),
    (rows(quotas=[("Workshop A", "3")], types=[("Workshop C", "", "Workshop C")]),
     "not one of the quotas above"),
    (rows(types=[("A", "", ""), ("a", "", "")]), "“a” is given twice"),
    (rows(quotas=[("Workshop A", "3")], types=[("", "", "")] * 3), "Add the ticket types"),
    ({"max_per_order": "0"}, "greater than or equal to 1"),
    ({"max_per_order": "51"}, "less than or equal to 50"),
])
def test_add__bad_orders__said_in_the_section_nothing_stored(admin_client, service, data, text):
    response = admin_client.post(admin_url("add"), {**ORDERS, **data})
    assert response.status_code == 200
    html = response.content.decode().replace("&#x27;", "'").replace("&quot;", '"')
    assert text in html
    assert '<details open>' in html  # the section shows its error
    assert list(service.iter_events()) == []


def test_add__every_seat_of_a_type_takes_a_line_saying_what(admin_client, service):
    response = admin_client.post(admin_url("add"), {**ORDERS, "capacity": "120",
                                                    "name": ""})  # refused: shown again
    html = response.content.decode().replace("&#x27;", "'")
    assert "A Workshop A seat takes 1 of the 120 seats and 1 of Workshop A's 3." in html
    assert "A Conference seat takes 1 of the 120 seats." in html


@pytest.mark.parametrize("strategy", ["aggregate", "lock_table", "slots", "streams"])
def test_list_and_event_page__seats_per_quota(admin_client, service, strategy):
    event = devconf(service, strategy, workshop=3)
    service.book(event.id, name="Ada", email="ada@example.com",
                 tickets={"conference": 1, "workshop-a": 2})
    listed = admin_client.get(admin_url("changelist"))
    (row,) = listed.context["rows"]
    assert set(row["seats"].further) == {"workshop-a", "workshop-b"}
    decided = 0 if strategy == "streams" else 2  # streams: decided by its worker
    html = listed.content.decode()
    assert f"Workshop A</span>: {3 - decided} of 3 left" in html
    assert "Workshop B</span>: 3 of 3 left" in html
    page = admin_client.get(admin_url("change", event.id)).content.decode()
    assert f"Workshop A</span>: {3 - decided} of 3 left" in page
    assert 'name="capacity"' in page and 'name="name"' in page  # the change form as ever


def test_registrations__each_order_with_its_tickets(admin_client, service):
    event = devconf(service, "lock_table")
    service.book(event.id, name="Ada", email="ada@example.com",
                 tickets={"conference": 2, "workshop-a": 1})
    html = admin_client.get(admin_url("registrations", event.id)).content.decode()
    assert "<span>Tickets</span>" in html
    assert "2 × Conference, 1 × Workshop A (3 seats)" in html


def test_export__a_row_per_order_with_its_tickets_and_a_column_per_type(admin_client, service):
    event = devconf(service, "slots")
    service.book(event.id, name="Ada", email="ada@example.com",
                 tickets={"conference": 2, "workshop-a": 1})
    service.book(event.id, name="Bo", email="bo@example.com", tickets={"workshop-b": 1})
    response = admin_client.get(admin_url("export", event.id))
    rows = list(csv.reader(io.StringIO(b"".join(response.streaming_content).decode())))
    assert rows[0] == ["name", "email", "registered_at", "tickets", "seats", "Conference",
                       "Workshop A", "Workshop B"]  # the types' labels, never their keys
    by_email = {row[1]: row for row in rows[1:]}
    assert len(rows) == 3
    assert by_email["ada@example.com"][3:] == ["2 × Conference, 1 × Workshop A", "3", "2", "1",
                                               "0"]
    assert by_email["bo@example.com"][3:] == ["1 × Workshop B", "1", "0", "0", "1"]


def test_export__plain_event__the_three_columns_as_ever(admin_client, service):
    event = service.create_event(name="Plain", capacity=2, strategy="lock_table")
    service.book(event.id, name="Ada", email="ada@example.com")
    response = admin_client.get(admin_url("export", event.id))
    rows = list(csv.reader(io.StringIO(b"".join(response.streaming_content).decode())))
    assert rows[0] == ["name", "email", "registered_at"] and len(rows[1]) == 3


def test_add__expected_rate__a_ticket_drop_split_for_it(admin_client, service):
    response = admin_client.post(admin_url("add"), {**PLAIN, "crowd": "thousands",
                                                    "expected_rate": "5000"})
    assert response.status_code == 302, response.context and response.context["form"].errors
    (event,) = service.iter_events()
    assert event.expected_rate == 5000
    assert service.strategy("shards").shard_count(event.id) == 13
    refused = admin_client.post(admin_url("add"), {**PLAIN, "expected_rate": "0"})
    assert "expected_rate" in refused.context["form"].errors
    assert len(list(service.iter_events())) == 1


@pytest.mark.parametrize("strategy", ["aggregate", "lock_table", "slots", "shards"])
def test_change__types_shown_seats_per_order_and_descriptions_editable(admin_client, service,
                                                                      strategy):
    event = devconf(service, strategy)
    opened = admin_client.get(admin_url("change", event.id))
    html = opened.content.decode().replace("&#x27;", "'")
    assert "A Workshop A seat takes 1 of the 10 seats and 1 of Workshop A's 3." in html
    assert opened.context["form"]["max_per_order"].value() == 4
    response = admin_client.post(admin_url("change", event.id), change_data(
        opened, max_per_order="6", **{"description_workshop-a": "Bring a laptop."}))
    assert response.status_code == 302, response.context and response.context["form"].errors
    changed = service.get_event(event.id)
    assert changed.max_per_order == 6
    assert changed.ticket_descriptions == {"workshop-a": "Bring a laptop."}
    assert changed.ticket_types == event.ticket_types and changed.quotas == event.quotas


def test_change__plain_event__no_seats_per_order_field_and_service_refuses(admin_client,
                                                                         service):
    event = service.create_event(name="Plain", capacity=5, strategy="lock_table")
    form = admin_client.get(admin_url("change", event.id)).context["form"]
    assert "max_per_order" not in form.fields
    with pytest.raises(InvalidBooking) as refused:
        service.update_event(event.id, expected_version=event.version, max_per_order=3)
    assert refused.value.field == "max_per_order"
    assert service.get_event(event.id).is_plain


def test_change__beyond_what_the_event_holds__said_before_saving(admin_client, service):
    event = service.create_event(name="Small", capacity=10, strategy="aggregate")
    opened = admin_client.get(admin_url("change", event.id))
    assert "at most 441" in opened.context["form"]["capacity"].help_text
    response = admin_client.post(admin_url("change", event.id), change_data(opened,
                                                                            capacity="500"))
    errors = " ".join(response.context["form"].errors["capacity"])
    assert "at most 441 seats" in errors and "create a new event" in errors
    assert "aggregate" not in response.content.decode() and "lock_table" not in errors
    assert service.get_event(event.id).capacity == 10


def test_ticket_description__shown_beside_its_type_on_the_event_page(client, service):
    event = service.create_event(
        name="DevConf", capacity=10, strategy="lock_table", quotas={"workshop-a": 3},
        ticket_types={"conference": [], "workshop-a": ["workshop-a"]}, max_per_order=2,
        ticket_descriptions={"workshop-a": "Bring a laptop.", "conference": "  "})
    assert event.ticket_descriptions == {"workshop-a": "Bring a laptop."}
    html = client.get(f"/events/{event.id}/").content.decode()
    assert "Bring a laptop." in html


def test_change__plain_event__says_seats_per_order_cannot_change(admin_client, service):
    event = service.create_event(name="Plain", capacity=5, strategy="lock_table")
    html = admin_client.get(admin_url("change", event.id)).content.decode()
    assert "this cannot change" in html and 'name="max_per_order"' not in html
