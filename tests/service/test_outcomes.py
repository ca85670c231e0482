"""The service says what happened: applied by this asking, or replayed from an earlier one,
and what the write owes (its outbox row). Decided from the answer's own registration, never
from clocks."""
from booking.models import CANCELLATION, CONFIRMATION


def test_register__first_asking__applied_owes_its_confirmation(service):
    event = service.create_event(name="Outcome", capacity=3, strategy="lock_table")

    outcome = service.register(event.id, name="Ada", email="ada@example.com",
                               request_id="outcome-first")

    assert outcome.applied and not outcome.replayed
    assert outcome.owed == (CONFIRMATION,)
    assert outcome.registration.email == "ada@example.com"


def test_register__same_request_again__replayed_owes_nothing_one_seat(service):
    event = service.create_event(name="Outcome", capacity=3, strategy="lock_table")
    first = service.register(event.id, name="Ada", email="ada@example.com",
                             request_id="outcome-again")

    again = service.register(event.id, name="Ada", email="ada@example.com",
                             request_id="outcome-again", again=True)

    assert again.replayed and again.owed == ()
    assert again.registration.registration_id == first.registration.registration_id
    assert service.availability(event.id).confirmed == 1


def test_register__replayed_even_when_the_clock_went_back(service, monkeypatch):
    # The old API guessed "replayed" from registered_at >= the request's start: a clock
    # stepped back between two askings made a replay look new (and a new one old).
    from booking.service import bookings

    event = service.create_event(name="Outcome", capacity=3, strategy="lock_table")
    service.register(event.id, name="Ada", email="ada@example.com", request_id="outcome-clock")
    later = bookings.timezone.now()
    monkeypatch.setattr(bookings.timezone, "now", lambda: later.replace(year=later.year - 1))

    again = service.register(event.id, name="Ada", email="ada@example.com",
                             request_id="outcome-clock", again=None)

    assert again.replayed


def test_unregister__first_then_repeat__applied_then_replayed(service):
    event = service.create_event(name="Outcome", capacity=3, strategy="lock_table")
    service.book(event.id, name="Ada", email="ada@example.com")

    first = service.unregister(event.id, email="ada@example.com", request_id="outcome-cancel")
    again = service.unregister(event.id, email="ada@example.com", request_id="outcome-cancel")

    assert first.applied and first.owed == (CANCELLATION,)
    assert again.replayed and again.owed == ()
    assert again.registration.registration_id == first.registration.registration_id
