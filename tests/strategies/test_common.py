"""The same booking scenarios against every strategy (unguarded is correct when alone)."""
import pytest

from booking.errors import (
    AlreadyRegistered,
    EventFull,
    EventNotFound,
    InvalidBooking,
    NotRegistered,
)
from tests import conformance

# Strategies that answer a booking at once (streams: tests/strategies/test_streams.py).
ALL = (*conformance.AT_ONCE, "unguarded")


@pytest.fixture(params=ALL)
def strategy(request):
    return request.param


def stored_emails(service, event_id):
    return sorted(r.email for r in service.registrations(event_id))


def test_book__seat_free__confirms_and_counts(service, strategy):
    event = service.create_event(name="Talk", capacity=3, strategy=strategy)

    registration = service.book(event.id, name="Ada Lovelace", email="ada@example.com")

    assert registration.email == "ada@example.com"
    assert registration.name == "Ada Lovelace"
    assert len(registration.registration_id) == 32
    assert service.availability(event.id).confirmed == 1
    assert service.availability(event.id).remaining == 2
    assert stored_emails(service, event.id) == ["ada@example.com"]


def test_book__event_full__raises_event_full(service, strategy):
    event = service.create_event(name="Talk", capacity=2, strategy=strategy)
    service.book(event.id, name="A", email="a@example.com")
    service.book(event.id, name="B", email="b@example.com")

    with pytest.raises(EventFull):
        service.book(event.id, name="C", email="c@example.com")

    assert stored_emails(service, event.id) == ["a@example.com", "b@example.com"]
    assert service.availability(event.id).is_full


@pytest.mark.parametrize("variant", ["ada@example.com", "ADA@Example.COM", "  ada@example.com\t"])
def test_book__same_person_again__raises_already_registered(service, strategy, variant):
    event = service.create_event(name="Talk", capacity=5, strategy=strategy)
    service.book(event.id, name="Ada", email="ada@example.com")

    with pytest.raises(AlreadyRegistered):
        service.book(event.id, name="Ada again", email=variant)

    assert service.availability(event.id).confirmed == 1


def test_book__full_and_already_registered__says_already_registered(service, strategy):
    event = service.create_event(name="Talk", capacity=1, strategy=strategy)
    service.book(event.id, name="Ada", email="ada@example.com")

    with pytest.raises(AlreadyRegistered):
        service.book(event.id, name="Ada", email="ada@example.com")


def test_cancel__registered__frees_the_seat_and_allows_rebooking(service, strategy):
    event = service.create_event(name="Talk", capacity=1, strategy=strategy)
    service.book(event.id, name="Ada", email="ada@example.com")

    removed = service.cancel(event.id, email=" Ada@Example.com ")

    assert removed.email == "ada@example.com"
    assert service.availability(event.id).confirmed == 0
    service.book(event.id, name="Bob", email="bob@example.com")
    with pytest.raises(EventFull):
        service.book(event.id, name="Ada", email="ada@example.com")
    service.cancel(event.id, email="bob@example.com")
    service.book(event.id, name="Ada", email="ada@example.com")
    assert stored_emails(service, event.id) == ["ada@example.com"]


def test_cancel__not_registered__raises_not_registered(service, strategy):
    event = service.create_event(name="Talk", capacity=1, strategy=strategy)

    with pytest.raises(NotRegistered):
        service.cancel(event.id, email="nobody@example.com")


def test_cancel__twice__second_raises_not_registered_and_count_stays(service, strategy):
    event = service.create_event(name="Talk", capacity=2, strategy=strategy)
    service.book(event.id, name="Ada", email="ada@example.com")
    service.cancel(event.id, email="ada@example.com")

    with pytest.raises(NotRegistered):
        service.cancel(event.id, email="ada@example.com")

    assert service.availability(event.id).confirmed == 0


def test_book__capacity_zero__event_is_closed(service, strategy):
    event = service.create_event(name="Closed", capacity=0, strategy=strategy)

    with pytest.raises(EventFull):
        service.book(event.id, name="Ada", email="ada@example.com")

    assert service.availability(event.id).remaining == 0
    assert stored_emails(service, event.id) == []


def test_book__capacity_one__second_person_is_refused(service, strategy):
    event = service.create_event(name="Solo", capacity=1, strategy=strategy)
    service.book(event.id, name="Ada", email="ada@example.com")

    with pytest.raises(EventFull):
        service.book(event.id, name="Bob", email="bob@example.com")


@pytest.mark.parametrize("event_id", ["0" * 32, "f" * 32])
def test_book__unknown_event__raises_event_not_found(service, strategy, event_id):
    service.create_event(name="Other", capacity=1, strategy=strategy)
    with pytest.raises(EventNotFound):
        service.book(event_id, name="Ada", email="ada@example.com")
    with pytest.raises(EventNotFound):
        service.cancel(event_id, email="ada@example.com")
    with pytest.raises(EventNotFound):
        service.availability(event_id)


BAD_BOOKINGS = [
    ({"name": "", "email": "a@example.com"}, "name"),
    ({"name": "   ", "email": "a@example.com"}, "name"),
    ({"name": "x" * 101, "email": "a@example.com"}, "name"),
    ({"name": "Ada\x00", "email": "a@example.com"}, "name"),
    ({"name": "Ada\nLovelace", "email": "a@example.com"}, "name"),
    ({"name": "Ada\u202eecalevoL", "email": "a@example.com"}, "name"),
    ({"name": 42, "email": "a@example.com"}, "name"),
    ({"name": None, "email": "a@example.com"}, "name"),
    ({"name": "Ada", "email": ""}, "email"),
    ({"name": "Ada", "email": "not-an-email"}, "email"),
    ({"name": "Ada", "email": "a@b@example.com"}, "email"),
    ({"name": "Ada", "email": "ada@exa\x07mple.com"}, "email"),
    ({"name": "Ada", "email": "a" * 250 + "@example.com"}, "email"),
    ({"name": "Ada", "email": ["a@example.com"]}, "email"),
]


@pytest.mark.parametrize(("fields", "field"), BAD_BOOKINGS)
def test_book__bad_input__raises_invalid_and_stores_nothing(service, strategy, fields, field):
    event = service.create_event(name="Talk", capacity=3, strategy=strategy)

    with pytest.raises(InvalidBooking) as raised:
        service.book(event.id, **fields)

    assert raised.value.field == field
    assert service.availability(event.id).confirmed == 0
    assert stored_emails(service, event.id) == []


@pytest.mark.parametrize("event_id", ["", "../etc", "x" * 33, None, 7, "0" * 31 + "G"])
def test_book__malformed_event_id__raises_event_not_found(service, event_id):
    with pytest.raises(EventNotFound):
        service.book(event_id, name="Ada", email="ada@example.com")


@pytest.mark.parametrize("capacity", [-1, -100, 1.5, "10", None, True, 10**9])
def test_create_event__bad_capacity__raises_invalid_and_stores_nothing(service, strategy, capacity):
    with pytest.raises(InvalidBooking) as raised:
        service.create_event(name="Talk", capacity=capacity, strategy=strategy)

    assert raised.value.field == "capacity"
    assert service.list_events() == []


@pytest.mark.parametrize(
    ("fields", "field"),
    [
        ({"name": ""}, "name"),
        ({"name": "x" * 201}, "name"),
        ({"name": "Talk\x1b[31m"}, "name"),
        ({"strategy": "nonsense"}, "strategy"),
        ({"starts_at": "next tuesday"}, "starts_at"),
        ({"starts_at": 12}, "starts_at"),
    ],
)
def test_create_event__bad_input__raises_invalid_and_stores_nothing(service, fields, field):
    with pytest.raises(InvalidBooking) as raised:
        service.create_event(**{"name": "Talk", "capacity": 5, **fields})

    assert raised.value.field == field
    assert service.list_events() == []


def test_create_event__defaults__uses_configured_strategy(service, settings):
    event = service.create_event(name="Talk", capacity=5, starts_at="2030-05-01T18:30:00+02:00")

    stored = service.get_event(event.id)
    assert stored == event
    assert stored.strategy == settings.BOOKING_DEFAULT_STRATEGY
    assert stored.starts_at.isoformat() == "2030-05-01T16:30:00+00:00"  # stored in UTC
    assert stored.version == 1


def test_list_events__soonest_first(service, strategy):
    later = service.create_event(name="Later", capacity=1, strategy=strategy, starts_at="2031-01-01T10:00")
    sooner = service.create_event(name="Sooner", capacity=1, strategy=strategy, starts_at="2030-01-01T10:00")
    undated = service.create_event(name="Undated", capacity=1, strategy=strategy)

    assert [e.id for e in service.list_events()] == [sooner.id, later.id, undated.id]


def test_book__replayed_submission__returns_the_same_registration(service, strategy):
    event = service.create_event(name="Talk", capacity=1, strategy=strategy)
    first = service.book(event.id, name="Ada", email="ada@example.com", request_id="form-token-1")

    replay = service.book(event.id, name="Ada", email="ADA@example.com", request_id="form-token-1")

    assert replay == first
    assert service.availability(event.id).confirmed == 1


def test_book__other_submission_same_person__raises_already_registered(service, strategy):
    event = service.create_event(name="Talk", capacity=2, strategy=strategy)
    service.book(event.id, name="Ada", email="ada@example.com", request_id="form-token-1")

    with pytest.raises(AlreadyRegistered) as raised:
        service.book(event.id, name="Ada", email="ada@example.com", request_id="form-token-2")

    assert raised.value.existing.request_id == "form-token-1"


@pytest.mark.parametrize("request_id", ["", "short", "x" * 65, "bad token!", 12])
def test_book__malformed_request_id__raises_invalid_and_stores_nothing(service, request_id):
    event = service.create_event(name="Talk", capacity=2)
    with pytest.raises(InvalidBooking):
        service.book(event.id, name="Ada", email="ada@example.com", request_id=request_id)
    assert service.availability(event.id).confirmed == 0


def test_find_registration__booked_and_not(service, strategy):
    event = service.create_event(name="Talk", capacity=2, strategy=strategy)
    booked = service.book(event.id, name="Ada", email="ada@example.com")

    assert service.find_registration(event.id, email=" ADA@example.com") == booked
    assert service.find_registration(event.id, email="bob@example.com") is None


def test_cancel__with_old_registration_id__refused_and_new_booking_kept(service, strategy):
    event = service.create_event(name="Talk", capacity=2, strategy=strategy)
    old = service.book(event.id, name="Ada", email="ada@example.com")
    service.cancel(event.id, email="ada@example.com")
    new = service.book(event.id, name="Ada", email="ada@example.com")

    with pytest.raises(NotRegistered):
        service.cancel(event.id, email="ada@example.com", registration_id=old.registration_id)
    with pytest.raises(NotRegistered):
        service.cancel(event.id, email="ada@example.com", registration_id="not-an-id")

    assert service.find_registration(event.id, email="ada@example.com") == new
    removed = service.cancel(event.id, email="ada@example.com",
                             registration_id=new.registration_id)
    assert removed == new
    assert service.availability(event.id).confirmed == 0
