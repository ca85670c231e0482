"""Service-level edits behind the admin: update_event, delete_event, paging helpers."""
import pytest

from tests.helpers import table
from booking.dynamo.tables import EVENT_LOCKS, REGISTRATIONS, SLOTS
from booking.errors import EventNotFound, InvalidBooking, StaleEdit

GUARDED = ("aggregate", "lock_table", "slots")


def _book(service, event, count, start=0):
    for n in range(start, start + count):
        service.book(event.id, name=f"Person {n}", email=f"p{n:03d}@example.com")


def _items_under(table_spec, event_id):
    return list(table(table_spec).query(key_condition="event_id = :e", values={":e": event_id}))


@pytest.mark.parametrize("strategy", GUARDED)
def test_update__current_version__changes_fields_and_bumps_version(service, strategy):
    event = service.create_event(name="Talk", capacity=3, strategy=strategy)
    updated = service.update_event(
        event.id, expected_version=event.version, name="Talk 2", capacity=5,
        starts_at="2030-01-02T10:00:00+00:00")
    assert (updated.name, updated.capacity, updated.version) == ("Talk 2", 5, event.version + 1)
    assert updated.starts_at.year == 2030
    assert service.availability(event.id).capacity == 5
    _book(service, event, 5)
    assert service.availability(event.id).is_full


@pytest.mark.parametrize("strategy", GUARDED)
def test_update__stale_version__raises_and_keeps_newer_change(service, strategy):
    event = service.create_event(name="Talk", capacity=3, strategy=strategy)
    service.update_event(event.id, expected_version=event.version, name="First", capacity=4)
    with pytest.raises(StaleEdit):
        service.update_event(event.id, expected_version=event.version, name="Second", capacity=9)
    current = service.get_event(event.id)
    assert (current.name, current.capacity) == ("First", 4)
    assert service.availability(event.id).capacity == 4


@pytest.mark.parametrize("strategy", GUARDED)
def test_update__below_confirmed__refused_with_capacity_error(service, strategy):
    event = service.create_event(name="Talk", capacity=4, strategy=strategy)
    _book(service, event, 3)
    version = service.get_event(event.id).version
    with pytest.raises(InvalidBooking) as refused:
        service.update_event(event.id, expected_version=version, capacity=2)
    assert refused.value.field == "capacity" and "3 people" in refused.value.message
    assert service.availability(event.id).capacity == 4
    assert len(service.registrations(event.id)) == 3
    service.update_event(event.id, expected_version=version, capacity=3)
    assert service.availability(event.id).is_full


@pytest.mark.parametrize("strategy", GUARDED)
def test_update__booked_since_read__edit_applies(service, strategy):
    """Bookings never refuse an edit: the version counts edits only."""
    event = service.create_event(name="Talk", capacity=4, strategy=strategy)
    _book(service, event, 1)
    updated = service.update_event(event.id, expected_version=event.version, capacity=10)
    assert (updated.capacity, updated.version) == (10, event.version + 1)


@pytest.mark.parametrize("strategy", GUARDED)
def test_update__beyond_strategy_limit__says_the_limit_in_organizer_words(service, strategy):
    event = service.create_event(name="Talk", capacity=1, strategy=strategy)
    limit = service.strategy(strategy).max_capacity
    with pytest.raises(InvalidBooking) as refused:
        service.update_event(event.id, expected_version=event.version, capacity=limit + 1)
    assert refused.value.field == "capacity" and f"{limit:,}" in refused.value.message
    assert "create a new event" in refused.value.message
    for internal in ("lock_table", "aggregate", "slots", "streams", "shards", "strategy"):
        assert internal not in refused.value.message
    assert service.get_event(event.id).version == event.version


@pytest.mark.parametrize(("old", "new"), [(3, 60), (60, 2), (5, 5)])
def test_update__slots__slot_count_follows_capacity(service, old, new):
    event = service.create_event(name="Talk", capacity=old, strategy="slots")
    _book(service, event, 2)
    service.update_event(event.id, expected_version=event.version, capacity=new)
    slots = _items_under(SLOTS, event.id)
    assert len(slots) == new == service.get_event(event.id).capacity
    assert sum(1 for s in slots if "holder" in s) == 2
    _book(service, event, new - 2, start=2)
    assert service.availability(event.id).is_full


def test_update__clear_start__removes_it(service):
    event = service.create_event(name="Talk", capacity=1, starts_at="2030-01-01T09:00:00+00:00")
    updated = service.update_event(event.id, expected_version=event.version, starts_at="")
    assert updated.starts_at is None and updated.name == "Talk"


@pytest.mark.parametrize("strategy", GUARDED)
def test_delete__with_registrations__leaves_nothing(service, strategy):
    event = service.create_event(name="Talk", capacity=3, strategy=strategy)
    other = service.create_event(name="Other", capacity=2, strategy=strategy)
    _book(service, event, 2)
    _book(service, other, 1)
    service.delete_event(event.id)
    with pytest.raises(EventNotFound):
        service.get_event(event.id)
    for spec in (REGISTRATIONS, SLOTS, EVENT_LOCKS):
        assert _items_under(spec, event.id) == []
    with pytest.raises(EventNotFound):
        service.book(event.id, name="Late", email="late@example.com")
    assert service.availability(other.id).confirmed == 1


def test_events_page__follows_scan_pages_and_search(service):
    created = {service.create_event(name=f"Event {n}", capacity=1).id for n in range(7)}
    seen, key = [], None
    for _ in range(4):
        page, key = service.events_page(start_key=key, limit=3)
        seen.extend(e.id for e in page)
        if key is None:
            break
    assert sorted(seen) == sorted(created)
    matches, _ = service.events_page(search="Event 3", limit=3)
    assert [e.name for e in matches] == ["Event 3"]


def test_registrations_page__cursor_and_search(service):
    event = service.create_event(name="Talk", capacity=5, strategy="lock_table")
    _book(service, event, 5)
    first, cursor = service.registrations_page(event.id, limit=3)
    rest, end = service.registrations_page(event.id, after=cursor, limit=3)
    assert [r.email for r in first + rest] == [f"p{n:03d}@example.com" for n in range(5)]
    assert end is None
    found, _ = service.registrations_page(event.id, search="PERSON 4")
    assert [r.email for r in found] == ["p004@example.com"]


def test_lower__slots__booking_claims_listed_free_slot__held_slot_kept(service):
    event = service.create_event(name="Talk", capacity=3, strategy="slots")
    _book(service, event, 1)
    strategy = service.strategy("slots")
    calls = []

    def book_in_between():
        calls.append(1)
        if len(calls) == 1:  # both free slots are listed; a booking now takes one of them
            _book(service, event, 1, start=1)

    strategy.between_read_and_write = book_in_between
    with pytest.raises(InvalidBooking) as refused:
        service.update_event(event.id, expected_version=event.version, capacity=1)
    assert "2 people" in refused.value.message
    slots = _items_under(SLOTS, event.id)
    assert len(slots) == 3 == service.get_event(event.id).capacity
    assert sorted(s["holder"] for s in slots if "holder" in s) == ["p000@example.com",
                                                                    "p001@example.com"]
