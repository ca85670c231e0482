"""Lists read availability in one batch per strategy, not one request per event: the
home page and the admin's event list, counted on the wire against DynamoDB Local."""
import pytest
from django.urls import reverse

from booking.dynamo.metrics import RequestMeter
from booking.wiring import get_booking_service

pytestmark = pytest.mark.django_db

BATCHED = ("aggregate", "lock_table")


def make_events(service, per_strategy, strategies=BATCHED):
    events = []
    for strategy in strategies:
        for n in range(per_strategy):
            event = service.create_event(name=f"{strategy} {n}", capacity=5, strategy=strategy)
            for person in range(n % 3):
                service.book(event.id, name=f"P{person}", email=f"p{person}@example.com")
            events.append(event)
    return events


def counted(get):
    meter = RequestMeter().install(get_booking_service().store)
    try:
        with meter.track() as tally:
            response = get()
    finally:
        meter.uninstall()
    return response, tally.requests


def test_availabilities__every_strategy__same_as_one_by_one(server_store):
    service = get_booking_service()
    events = make_events(service, 3, strategies=("aggregate", "lock_table", "slots"))

    found = service.availabilities(events)

    assert found == {e.id: service.availability(e.id) for e in events}


def test_availabilities__event_deleted_meanwhile__left_out(server_store):
    service = get_booking_service()
    kept, deleted = make_events(service, 2, strategies=("lock_table",))
    service.delete_event(deleted.id)

    assert set(service.availabilities([kept, deleted])) == {kept.id}


@pytest.mark.parametrize("per_strategy", [1, 12])
def test_home_page__many_events__one_scan_and_one_batch_per_strategy(client, server_store,
                                                                    per_strategy):
    service = get_booking_service()
    events = make_events(service, per_strategy)

    response, requests = counted(lambda: client.get(reverse("booking:event_list")))

    assert response.status_code == 200
    assert requests == 1 + len(BATCHED)  # the events scan, one BatchGetItem per strategy
    shown = {event.id: seats for event, seats in response.context["rows"]}
    assert shown == {e.id: service.availability(e.id) for e in events}


@pytest.mark.parametrize("per_strategy", [1, 12])
def test_admin_list__many_events__one_scan_and_one_batch_per_strategy(admin_client,
                                                                     server_store, per_strategy):
    service = get_booking_service()
    events = make_events(service, per_strategy)

    response, requests = counted(
        lambda: admin_client.get(reverse("admin:booking_dynamoevent_changelist")))

    assert response.status_code == 200
    assert requests == 1 + len(BATCHED)
    shown = {row["event"].id: row["seats"] for row in response.context["rows"]}
    assert shown == {e.id: service.availability(e.id) for e in events}
