"""The answers' guarantees with controls that break them, each failing the same check:

- an edit made from a stale read is refused, not written over the newer one: the control
  store writes without the version condition and the check fails;
- answers ride in the order's own write, so a refused booking stores none: the control
  writes them in a write of their own before the booking and the check fails;
- a booking without questions costs exactly what it cost (one transaction for
  lock_table, counted on the wire against DynamoDB Local), and one with answers the same.
"""
from dataclasses import dataclass

import pytest

from booking.dynamo.metrics import RequestMeter
from booking.dynamo.tables import ANSWERS
from booking.errors import EventFull, StaleEdit
from booking.questions.rider import AnswersRider
from booking.questions.service import Questions
from booking.questions.store import AnswerStore, StoredAnswers
from booking.dynamo.expressions import as_op
from tests.helpers import table

QUESTION = [{"id": "diet", "label": "Diet", "kind": "text"}]


class CarelessAnswerStore(AnswerStore):
    """Writes an edit whatever version it was read at (the control)."""

    def replace(self, stored: StoredAnswers, *, expected_version: int) -> bool:
        current = self.read(stored.event_id, stored.registration_id)
        return super().replace(stored, expected_version=current.version)


@dataclass(frozen=True)
class AheadOfTheSeat(AnswersRider):
    """Puts the answers in a write of their own before the seat's (the control)."""

    def members(self, answer, *, notice=True):
        name, member = super().members(answer, notice=notice)[0]
        self.store.table.store.call("put_item", **as_op(member)[1])
        return []


class AheadQuestions(Questions):
    def prepare(self, *args, **kwargs):
        rider = super().prepare(*args, **kwargs)
        return rider and AheadOfTheSeat(rider.store, rider.answers)


def stale_edit_refused(service) -> bool:
    event = service.create_event(name="Edit", capacity=3, strategy="lock_table")
    service.set_questions(event.id, QUESTION, expected_version=0)
    order = service.book(event.id, name="Ada", email="ada@example.com",
                         answers={"diet": "Vegan"})
    first, second = service.answers(order), service.answers(order)
    service.edit_answers(order, answers={"diet": "Vegetarian"}, expected_version=first.version)
    try:
        service.edit_answers(order, answers={"diet": "Fish"}, expected_version=second.version)
    except StaleEdit:
        pass
    return service.answers(order).answers == {"diet": "Vegetarian"}


def refused_booking_stores_nothing(service, strategy) -> bool:
    event = service.create_event(name="Full", capacity=1, strategy=strategy)
    service.set_questions(event.id, QUESTION, expected_version=0)
    service.book(event.id, name="Ada", email="ada@example.com", answers={"diet": "Vegan"})
    with pytest.raises(EventFull):
        service.book(event.id, name="Bo", email="bo@example.com", answers={"diet": "Fish"})
    items = list(table(ANSWERS).query(key_condition="event_id = :e", values={":e": event.id}))
    return [i["email"] for i in items] == ["ada@example.com"]


def test_stale_edit__refused_not_lost(service):
    assert stale_edit_refused(service)


def test_stale_edit__control_without_the_version_check_loses_the_edit(service, monkeypatch):
    monkeypatch.setattr(service.questions, "store", CarelessAnswerStore(service.store))
    assert not stale_edit_refused(service)


@pytest.mark.parametrize("strategy", ["aggregate", "lock_table", "slots", "shards"])
def test_refused_booking__no_answers_stored(service, strategy):
    assert refused_booking_stores_nothing(service, strategy)


# (slots answers a sold-out event from a read before any write: no control there)
@pytest.mark.parametrize("strategy", ["lock_table", "aggregate", "shards"])
def test_refused_booking__control_writing_answers_apart_leaves_them(service, strategy):
    careless = AheadQuestions(catalog=service.catalog, events=service.catalog.events,
                              answers=service.questions.store)
    service.bookings.questions = careless
    assert not refused_booking_stores_nothing(service, strategy)


def test_requests__a_booking_without_questions_costs_what_it_did_and_answers_ride_free(
        server_store):
    from booking.wiring import get_booking_service

    service = get_booking_service()
    plain = service.create_event(name="Plain", capacity=5, strategy="lock_table")
    asked = service.create_event(name="Asked", capacity=5, strategy="lock_table")
    service.set_questions(asked.id, QUESTION, expected_version=0)
    meter = RequestMeter().install(service.store)
    try:
        with meter.track() as without:
            service.book(plain.id, name="Ada", email="ada@example.com")
        with meter.track() as cancelled:
            service.cancel(plain.id, email="ada@example.com")
        with meter.track() as answered:
            service.book(asked.id, name="Ada", email="ada@example.com",
                         answers={"diet": "Vegan"})
        with meter.track() as cancelled_with_answers:
            service.cancel(asked.id, email="ada@example.com")
    finally:
        meter.uninstall()
    assert without.operations == answered.operations == ["TransactWriteItems"]
    assert cancelled.operations == cancelled_with_answers.operations
    assert list(table(ANSWERS).query(
        key_condition="event_id = :e", values={":e": asked.id})) == []
