import uuid

import pytest
from django.utils import timezone

from tests.helpers import book_directly, table
from booking.dynamo.metrics import RequestMeter
from booking.dynamo.tables import EVENTS
from booking.errors import InvalidBooking
from booking.models import Registration
from booking.waitlist import engine as waitlist_engine
from booking.strategies.aggregate import AggregateStrategy
from booking.strategies.aggregate.item import (ATTENDEE_MAX_BYTES, EVENT_ATTRIBUTES_RESERVE,
                                               ORDER_DEFINITION_RESERVE, ORDER_MAX_CAPACITY)


def test_create_event__beyond_item_size_limit__says_the_limit_in_organizer_words(service):
    limit = AggregateStrategy.max_capacity

    with pytest.raises(InvalidBooking) as raised:
        service.create_event(name="Huge", capacity=limit + 1, strategy="aggregate")

    assert f"at most {limit} seats" in raised.value.message
    assert "choose a larger crowd" in raised.value.message
    assert "lock_table" not in raised.value.message and "slots" not in raised.value.message
    assert service.list_events() == []


def test_max_capacity__worst_case_attendees_fit_in_one_item():
    worst_email = "a" * 242 + "@example.com"  # 254 bytes
    worst_name = "\U0001f600" * 100  # 100 characters, 400 bytes
    per_attendee = len(worst_email) + len("name") + len(worst_name.encode()) + len(
        "registered_at") + 32 + len("registration_id") + 32 + len("request_id") + 64 + 16
    assert per_attendee <= 1000
    assert AggregateStrategy.max_capacity * per_attendee < 400 * 1024


def test_order_max_capacity__worst_case_orders_and_definition_fit_in_one_item():
    name = "q" * 40  # the longest quota or ticket type name
    definition = 20 * (len(name) + 3 + 10 * (len(name) + 1)) + 2 * 10 * (len(name) + 3 + 3) + 64
    assert definition <= ORDER_DEFINITION_RESERVE
    # Every entry of an attendee's tickets map is at least one seat: at most one per seat.
    per_seat = ATTENDEE_MAX_BYTES + len("tickets") + len(name) + 3 + 3
    assert ORDER_MAX_CAPACITY < AggregateStrategy.max_capacity
    assert (ORDER_MAX_CAPACITY * per_seat + definition + EVENT_ATTRIBUTES_RESERVE
            < 400 * 1024)


def order_event(service, capacity):
    return service.create_event(name="DevConf", capacity=capacity, strategy="aggregate",
                                quotas={"workshop-a": 3}, max_per_order=4,
                                ticket_types={"conference": [], "workshop-a": ["workshop-a"]})


def test_create_and_update__order_event_beyond_order_max_capacity__refused(service):
    with pytest.raises(InvalidBooking) as raised:
        order_event(service, ORDER_MAX_CAPACITY + 1)
    assert raised.value.field == "capacity"
    assert f"at most {ORDER_MAX_CAPACITY} seats" in raised.value.message
    assert service.list_events() == []
    event = order_event(service, ORDER_MAX_CAPACITY)
    with pytest.raises(InvalidBooking) as raised:
        service.update_event(event.id, expected_version=event.version,
                             capacity=ORDER_MAX_CAPACITY + 1)
    assert raised.value.field == "capacity"
    assert service.get_event(event.id).capacity == ORDER_MAX_CAPACITY


def test_create_and_update__plain_event_above_order_max_capacity__accepted(service):
    # A plain event's attendees store no tickets: it keeps the larger limit.
    event = service.create_event(name="Big", capacity=ORDER_MAX_CAPACITY + 1, strategy="aggregate")
    updated = service.update_event(event.id, expected_version=event.version,
                                   capacity=AggregateStrategy.max_capacity)
    assert updated.capacity == AggregateStrategy.max_capacity > ORDER_MAX_CAPACITY


def test_book__bookings_bump_the_booking_version_never_the_edit_version(service):
    event = service.create_event(name="Talk", capacity=3, strategy="aggregate")
    events = table(EVENTS)

    service.book(event.id, name="Ada", email="ada@example.com")
    after_book = events.get({"event_id": event.id})
    service.cancel(event.id, email="ada@example.com")
    after_cancel = events.get({"event_id": event.id})

    assert (event.version, after_book["version"], after_cancel["version"]) == (1, 1, 1)
    assert (after_book["booking_version"], after_cancel["booking_version"]) == (1, 2)


def test_update__after_bookings__edit_at_the_version_read_is_accepted(service):
    event = service.create_event(name="Talk", capacity=3, strategy="aggregate")
    service.book(event.id, name="Ada", email="ada@example.com")

    updated = service.update_event(event.id, expected_version=event.version, capacity=5)

    assert (updated.capacity, updated.version) == (5, 2)


def test_book__refused__leaves_item_unchanged(service):
    event = service.create_event(name="Talk", capacity=1, strategy="aggregate")
    service.book(event.id, name="Ada", email="ada@example.com")
    before = table(EVENTS).get({"event_id": event.id})

    for email in ("ada@example.com", "bob@example.com"):
        with pytest.raises(Exception):
            service.book(event.id, name="X", email=email)

    assert table(EVENTS).get({"event_id": event.id}) == before


def test_plain_event__hold_and_attendee_stored_exactly_as_ever(service):
    # A plain booking is an order of one seat; what it stores is what it always stored: a
    # hold is a bare time in the holds map (no seats beside it), an attendee no tickets.
    event = service.create_event(name="Talk", capacity=1, strategy="aggregate")
    service.book(event.id, name="Ada", email="ada@example.com")
    service.join_waiting_list(event.id, name="Bo", email="bo@example.com")
    service.cancel(event.id, email="ada@example.com")
    waitlist_engine.flush()

    item = table(EVENTS).get({"event_id": event.id})
    assert "hold_seats" not in item and list(item["holds"]) == ["bo@example.com"]
    assert service.accept_offer(event.id, email="bo@example.com").ticket_counts is None
    item = table(EVENTS).get({"event_id": event.id})
    assert item["holds"] == {} and item["confirmed_count"] == 1
    assert set(item["attendees"]["bo@example.com"]) == {
        "name", "registered_at", "registration_id", "request_id"}
    assert service.audit(event.id) == []


def test_book__capacity_raised_since_the_event_was_read__one_seat_still_one_write(service):
    # One seat of a quota needs no guess of its capacity ("count < capacity"): a process
    # whose event says capacity 1 books the seat an edit elsewhere added in one write.
    stale = service.create_event(name="Talk", capacity=1, strategy="aggregate")
    service.book(stale.id, name="Ada", email="ada@example.com")
    service.update_event(stale.id, expected_version=stale.version, capacity=2)
    bob = Registration(event_id=stale.id, email="bob@example.com", name="Bob",
                       registered_at=timezone.now(), registration_id=uuid.uuid4().hex,
                       request_id=uuid.uuid4().hex)

    meter = RequestMeter().install(service.store)
    try:
        with meter.track() as booking:
            book_directly(service.strategy("aggregate"), service, stale, bob)
    finally:
        meter.uninstall()

    assert booking.operations == ["TransactWriteItems"]
    assert service.availability(stale.id).confirmed == 2
