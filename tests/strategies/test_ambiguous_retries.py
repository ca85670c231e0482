"""A write that applied but whose answer was lost, resent: "mine" is success, not a refusal.

moto in-process ignores ClientRequestToken, so these exercise the ``is_mine`` reading of the
refusal; the token path is covered against the embedded server in
tests/concurrency/test_faulty_races.py.
"""
import dataclasses
import uuid

import pytest
from django.utils import timezone

from booking.errors import AlreadyRegistered
from booking.models import Registration
from booking.strategies.base import client_token
from tests.helpers import book_directly
from harness.controls import control_service
from tests import conformance

# Strategies that answer a booking at once (streams: tests/strategies/test_streams.py).
ALL = (*conformance.AT_ONCE, "unguarded")


def attempt(event_id, email="ada@example.com"):
    return Registration(event_id=event_id, email=email, name="Ada", registered_at=timezone.now(),
                        registration_id=uuid.uuid4().hex)


@pytest.fixture(params=ALL)
def booked(request, service):
    """An event, its strategy, and a registration whose booking was applied once."""
    event = service.create_event(name="Talk", capacity=2, strategy=request.param)
    strategy = service.strategy(request.param)
    registration = attempt(event.id)
    book_directly(strategy, service, event, registration)
    return service, event, strategy, registration


def test_book__same_attempt_resent_after_it_applied__answers_success_once_stored(booked):
    service, event, strategy, registration = booked

    assert book_directly(strategy, service, event, registration) == registration

    assert [r.registration_id for r in service.registrations(event.id)] == [
        registration.registration_id]
    assert service.availability(event.id).confirmed == 1


def test_book__other_attempt_same_person__still_already_registered(booked):
    service, event, strategy, registration = booked
    other = dataclasses.replace(registration, registration_id=uuid.uuid4().hex)

    with pytest.raises(AlreadyRegistered) as refused:
        book_directly(strategy, service, event, other)

    assert refused.value.existing.registration_id == registration.registration_id


def test_book__checks_disabled__resend_is_falsely_refused(booked):
    # The control: without the check, the resend reports the person's own seat as taken.
    service, event, strategy, registration = booked
    blind = control_service(ambiguity_checks=False).strategy(strategy.name)

    with pytest.raises(AlreadyRegistered):
        blind.book(event.id, registration)


def test_client_token__same_registration__same_token_within_dynamodb_limit():
    token = client_token("a" * 32, "book")

    assert token == client_token("a" * 32, "book")
    assert token != client_token("a" * 32, "cancel")
    assert len(token) <= 36
