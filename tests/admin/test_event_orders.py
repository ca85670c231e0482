"""The admin and orders (docs/admin.md): the add form's ticket types, quotas and seats per
order, validated by the service; per-quota seats in the list and on the event's page; the
registrations with their tickets, and the CSV with a row per order."""
import csv
import io

import pytest
from django.contrib.admin.models import LogEntry

from tests.admin.test_events import admin_url
from tests.orders.test_orders import devconf

pytestmark = pytest.mark.django_db
PLAIN = {"name": "DevConf", "capacity": "10", "strategy": "lock_table"}
ORDERS = {**PLAIN, "quotas": "workshop-a = 3\nworkshop-b=2\n",
          "ticket_types": "conference\nworkshop-a: workshop-a\nboth: workshop-a, workshop-b",
          "max_per_order": "4"}


@pytest.mark.parametrize("strategy", ["lock_table", "slots"])
def test_add__types_quotas_and_max__creates_an_order_event(admin_client, service, strategy):
    response = admin_client.post(admin_url("add"), {**ORDERS, "strategy": strategy})
    assert response.status_code == 302, response.context and response.context["form"].errors
    (event,) = service.iter_events()
    assert event.quotas == {"workshop-a": 3, "workshop-b": 2} and event.max_per_order == 4
    assert {name: list(q) for name, q in event.ticket_types.items()} == {
        "conference": [], "workshop-a": ["workshop-a"], "both": ["workshop-a", "workshop-b"]}
    (entry,) = LogEntry.objects.all()
    assert "Quotas: workshop-a 3, workshop-b 2; ticket types: conference, workshop-a, both; " \
           "up to 4 seats per order." in entry.change_message


def test_add__plain__fields_left_empty_or_one_seat__a_plain_event(admin_client, service):
    form = admin_client.get(admin_url("add")).content.decode()
    assert "Ticket types, quotas and seats per order (optional)" in form
    assert "<details>" in form  # closed: a plain event's form looks as before
    for extra in ({}, {"quotas": "", "ticket_types": "", "max_per_order": "1"}):
        admin_client.post(admin_url("add"), {**PLAIN, **extra})
    events = list(service.iter_events())
    assert len(events) == 2 and all(event.is_plain for event in events)


@pytest.mark.parametrize(("data", "field", "text"), [
    ({"quotas": "workshop-a 3"}, "quotas", "A quota is NAME=N"),
    ({"quotas": "workshop-a=3\nworkshop-a=4"}, "quotas", "'workshop-a' is given twice"),
    ({"quotas": "capacity=3"}, "quotas", "the event's own quota"),
    ({"quotas": "Workshop A=3"}, "quotas", "not a valid name"),
    ({"ticket_types": "conference\nworkshop-c: workshop-c"}, "ticket_types", "unknown quota"),
    ({"ticket_types": "a\na"}, "ticket_types", "'a' is given twice"),
    ({"max_per_order": "0"}, "max_per_order", "greater than or equal to 1"),
    ({"max_per_order": "51"}, "max_per_order", "less than or equal to 50"),
    ({"strategy": "aggregate", "capacity": "420"}, "capacity", "at most 402 seats"),
])
def test_add__bad_orders__error_next_to_the_field_nothing_stored(admin_client, service, data,
                                                                 field, text):
    response = admin_client.post(admin_url("add"), {**ORDERS, **data})
    assert response.status_code == 200
    assert text in " ".join(response.context["form"].errors[field])
    assert '<details open>' in response.content.decode()  # the section shows its error
    assert list(service.iter_events()) == []


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
    assert rows[0] == ["name", "email", "registered_at", "tickets", "seats", "conference",
                       "workshop-a", "workshop-b"]
    by_email = {row[1]: row for row in rows[1:]}
    assert len(rows) == 3
    assert by_email["ada@example.com"][3:] == ["2 × conference, 1 × workshop-a", "3", "2", "1",
                                               "0"]
    assert by_email["bo@example.com"][3:] == ["1 × workshop-b", "1", "0", "0", "1"]


def test_export__plain_event__the_three_columns_as_ever(admin_client, service):
    event = service.create_event(name="Plain", capacity=2, strategy="lock_table")
    service.book(event.id, name="Ada", email="ada@example.com")
    response = admin_client.get(admin_url("export", event.id))
    rows = list(csv.reader(io.StringIO(b"".join(response.streaming_content).decode())))
    assert rows[0] == ["name", "email", "registered_at"] and len(rows[1]) == 3


def test_add__expected_rate__a_ticket_drop_split_for_it(admin_client, service):
    response = admin_client.post(admin_url("add"), {**PLAIN, "strategy": "shards",
                                                    "expected_rate": "5000"})
    assert response.status_code == 302, response.context and response.context["form"].errors
    (event,) = service.iter_events()
    assert event.expected_rate == 5000
    assert service.strategy("shards").shard_count(event.id) == 13
    refused = admin_client.post(admin_url("add"), {**PLAIN, "expected_rate": "0"})
    assert "expected_rate" in refused.context["form"].errors
    assert len(list(service.iter_events())) == 1
