"""Questions and answers through the service (in-process moto): the kinds' table, required
answers, answers stored in the order's own write on every strategy, nothing stored on a
refusal, edits on the version read, deletion with the registration, the purge."""
import datetime as dt

import pytest

from booking.dynamo.tables import ANSWERS, REGISTRATIONS, STREAM_REGISTRATIONS
from booking.errors import (AlreadyRegistered, BookingClosed, EventFull, InvalidBooking,
                            NotRegistered, StaleEdit)
from booking.questions.rules import InvalidAnswers
from booking.questions.service import answer_rows
from tests import conformance
from tests.helpers import table
from tests.questions.helpers import CASES, QUESTIONS, case_id


def decide_pending(service, event_id):
    streams = service.strategy("streams")
    for r in sorted((r for r in service.registrations(event_id) if r.status == "pending"),
                    key=lambda r: r.registered_at):
        streams.decide(r)


def answer_items(event_id):
    return list(table(ANSWERS).query(key_condition="event_id = :e", values={":e": event_id}))


@pytest.fixture
def asked(service):
    event = service.create_event(name="Asked", capacity=5, strategy="lock_table")
    return service.set_questions(event.id, QUESTIONS, expected_version=0)


@pytest.mark.parametrize("case", CASES, ids=case_id)
def test_every_kind__valid_stored_invalid_refused_with_its_field(service, asked, case):
    qid, value, stored = case
    if stored is None:
        with pytest.raises(InvalidAnswers) as refused:
            service.book(asked.id, name="Ada", email="ada@example.com", answers={qid: value})
        assert refused.value.field == f"answers.{qid}"
        assert set(refused.value.errors) == {f"answers.{qid}"}
        assert service.registrations(asked.id) == [] and answer_items(asked.id) == []
    else:
        registration = service.book(asked.id, name="Ada", email="ada@example.com",
                                    answers={qid: value})
        assert service.answers(registration).answers == {qid: stored}


def test_required_answers__each_missing_one_named_nothing_stored(service):
    event = service.create_event(name="Req", capacity=5, strategy="aggregate")
    service.set_questions(event.id, [
        {"id": "company", "label": "Company", "kind": "text", "required": True},
        {"id": "consent", "label": "Photos", "kind": "boolean", "required": True}],
        expected_version=0)
    with pytest.raises(InvalidAnswers) as refused:
        service.book(event.id, name="Ada", email="ada@example.com", answers={"company": " "})
    assert refused.value.errors == {"answers.company": "This question is required.",
                                    "answers.consent": "Please tick this to continue."}
    assert service.registrations(event.id) == [] and answer_items(event.id) == []
    with pytest.raises(InvalidAnswers) as unknown:
        service.book(event.id, name="Ada", email="ada@example.com",
                     answers={"company": "A", "consent": True, "shoe": "42"})
    assert unknown.value.field == "answers.shoe"


def test_per_pass_questions_by_ticket_type(service):
    event = service.create_event(
        name="Conf", capacity=10, strategy="slots", quotas={"ws": 4},
        ticket_types={"conference": [], "ws": ["ws"]}, max_per_order=4)
    service.set_questions(event.id, [
        {"id": "name_on_pass", "label": "Name on the pass", "kind": "text", "required": True,
         "per_pass": True},
        {"id": "laptop", "label": "Bringing a laptop", "kind": "boolean", "per_pass": True,
         "ticket_types": ["ws"]},
        {"id": "invoice", "label": "Invoice address", "kind": "long_text"}],
        expected_version=0)
    with pytest.raises(InvalidAnswers) as refused:
        service.book(event.id, name="Ada", email="ada@example.com",
                     tickets={"conference": 1, "ws": 1},
                     pass_answers=[{"name_on_pass": "Ada"}])
    assert refused.value.errors == {"pass_answers.1.name_on_pass": "This question is required."}
    with pytest.raises(InvalidAnswers) as refused:
        service.book(event.id, name="Ada", email="ada@example.com",
                     tickets={"conference": 1, "ws": 1},
                     pass_answers=[{"name_on_pass": "Ada", "laptop": True},
                                   {"name_on_pass": "Bo"}])
    assert set(refused.value.errors) == {"pass_answers.0.laptop"}  # a conference pass
    order = service.book(event.id, name="Ada", email="ada@example.com",
                         tickets={"conference": 1, "ws": 1},
                         pass_answers=[{"name_on_pass": "Ada"},
                                       {"name_on_pass": "Bo", "laptop": True}])
    stored = service.answers(order)
    assert stored.pass_types == ("conference", "ws")
    assert stored.pass_answers == ({"name_on_pass": "Ada"},
                                   {"name_on_pass": "Bo", "laptop": True})


@pytest.mark.parametrize("strategy", conformance.ALL)
def test_answers_ride_in_the_orders_write_on_every_strategy(service, strategy):
    event = service.create_event(name="Every", capacity=1, strategy=strategy)
    service.set_questions(event.id, [{"id": "diet", "label": "Diet", "kind": "text",
                                      "required": True}], expected_version=0)
    first = service.book(event.id, name="Ada", email="ada@example.com",
                         answers={"diet": "Vegan"}, request_id="form-token-0001")
    decide_pending(service, event.id) if strategy == "streams" else None
    # refused bookings store nothing: invalid, duplicate, full
    with pytest.raises(InvalidAnswers):
        service.book(event.id, name="Bo", email="bo@example.com", answers={})
    with pytest.raises(AlreadyRegistered):
        service.book(event.id, name="Ada", email="ada@example.com", answers={"diet": "Meat"})
    if strategy == "streams":  # accepted, then rejected by the decider: answers deleted
        late = service.book(event.id, name="Cy", email="cy@example.com",
                            answers={"diet": "Fish"})
        assert {i["registration_id"] for i in answer_items(event.id)} == {
            first.registration_id, late.registration_id}
        decide_pending(service, event.id)
        from booking.wiring import mail_sender
        from booking.mail import sender as booking_mail
        booking_mail.send_owed(mail_sender())
    elif strategy != "unguarded":
        with pytest.raises(EventFull):
            service.book(event.id, name="Cy", email="cy@example.com", answers={"diet": "Fish"})
    items = answer_items(event.id)
    assert [(i["registration_id"], i["answers"], i["email"]) for i in items] == [
        (first.registration_id, {"diet": "Vegan"}, "ada@example.com")]
    # a repeat of the same form answers the same order and stores nothing more
    again = service.book(event.id, name="Ada", email="ada@example.com",
                         answers={"diet": "Vegan"}, request_id="form-token-0001")
    assert again.registration_id == first.registration_id and len(answer_items(event.id)) == 1
    service.cancel(event.id, email="ada@example.com")
    assert answer_items(event.id) == []


def test_an_event_without_questions_stores_no_answers_item(service):
    event = service.create_event(name="Plain", capacity=3, strategy="lock_table")
    service.book(event.id, name="Ada", email="ada@example.com")
    assert answer_items(event.id) == []
    with pytest.raises(InvalidAnswers) as refused:
        service.book(event.id, name="Bo", email="bo@example.com", answers={"x": "y"})
    assert refused.value.field == "answers.x"


def test_set_questions__stale_version_refused_and_bad_question_named(service):
    event = service.create_event(name="Q", capacity=3, strategy="aggregate")
    first = service.set_questions(event.id, QUESTIONS[:1], expected_version=0)
    assert first.questions_version == 1 and first.questions[0].label == "Company"
    with pytest.raises(StaleEdit):
        service.set_questions(event.id, QUESTIONS[:2], expected_version=0)
    assert service.get_event(event.id).questions == first.questions
    with pytest.raises(InvalidBooking) as bad:
        service.set_questions(event.id, [{"id": "x", "label": "X", "kind": "choice"}],
                              expected_version=1)
    assert bad.value.field == "questions.0.choices"
    with pytest.raises(InvalidBooking) as bad:
        service.set_questions(event.id, [{"id": "x", "label": "X", "ticket_types": ["vip"]}],
                              expected_version=1)
    assert bad.value.field == "questions.0.ticket_types"
    assert service.get_event(event.id).questions_version == 1


def test_an_answer_edit_on_a_stale_read_is_refused_not_lost(service, asked):
    order = service.book(asked.id, name="Ada", email="ada@example.com",
                         answers={"company": "Acme"})
    read_by_tab_one = service.answers(order)
    read_by_tab_two = service.answers(order)
    edited = service.edit_answers(order, answers={"company": "Beta"},
                                  expected_version=read_by_tab_one.version)
    assert edited.version == 2
    with pytest.raises(StaleEdit):
        service.edit_answers(order, answers={"company": "Gamma"},
                             expected_version=read_by_tab_two.version)
    assert service.answers(order).answers == {"company": "Beta"}  # the first edit kept
    with pytest.raises(InvalidAnswers):
        service.edit_answers(order, answers={"shirt": "XXL"}, expected_version=2)
    assert service.answers(order).version == 2


def test_removed_questions_keep_their_answers_shown_as_removed(service, asked):
    order = service.book(asked.id, name="Ada", email="ada@example.com",
                         answers={"company": "Acme", "shirt": "M"})
    event = service.set_questions(asked.id, QUESTIONS[:2], expected_version=1)  # no shirt
    rows, _ = answer_rows(event.questions, service.answers(order))
    assert [(r.label, r.text, r.removed) for r in rows] == [
        ("Company", "Acme", False), ("T-shirt size", "M", True)]
    edited = service.edit_answers(order, answers={"company": "Beta"}, expected_version=1)
    assert edited.answers == {"company": "Beta", "shirt": "M"}


def test_edits_close_when_the_event_starts_and_after_cancellation(service):
    soon = dt.datetime.now(dt.timezone.utc) + dt.timedelta(days=1)
    event = service.create_event(name="S", capacity=3, strategy="lock_table", starts_at=soon)
    service.set_questions(event.id, QUESTIONS[:1], expected_version=0)
    order = service.book(event.id, name="Ada", email="ada@example.com",
                         answers={"company": "A"})
    service.cancel(event.id, email="ada@example.com")
    with pytest.raises((NotRegistered, StaleEdit)):
        service.edit_answers(order, answers={"company": "B"}, expected_version=1)
    assert answer_items(event.id) == []
    past = service.create_event(name="P", capacity=3, strategy="lock_table",
                                starts_at=soon)
    service.set_questions(past.id, QUESTIONS[:1], expected_version=0)
    order = service.book(past.id, name="Ada", email="ada@example.com", answers={"company": "A"})
    service.events.update({"event_id": past.id}, "SET starts_at = :s",
                          values={":s": "2020-01-01T00:00:00+00:00"})
    with pytest.raises(BookingClosed):
        service.edit_answers(order, answers={"company": "B"}, expected_version=1)


def test_purge_answers_after_the_event(service):
    start = dt.datetime.now(dt.timezone.utc) + dt.timedelta(days=1)
    event = service.create_event(name="P", capacity=3, strategy="slots", starts_at=start)
    service.set_questions(event.id, QUESTIONS[:1], expected_version=0)
    service.book(event.id, name="Ada", email="ada@example.com", answers={"company": "A"})
    service.book(event.id, name="Bo", email="bo@example.com", answers={"company": "B"})
    with pytest.raises(InvalidBooking):
        service.purge_answers(event.id, after_days=0)  # not over yet
    later = start + dt.timedelta(days=31)
    with pytest.raises(InvalidBooking):
        service.purge_answers(event.id, after_days=60, now=later)
    assert service.purge_answers(event.id, after_days=30, now=later) == 2
    assert answer_items(event.id) == []
    assert len(service.registrations(event.id)) == 2  # the registrations stay


@pytest.mark.parametrize("strategy", ["aggregate", "lock_table", "slots", "shards", "streams"])
def test_an_orders_answers_and_each_pass_stored_whole_on_every_strategy_taking_orders(
        service, strategy):
    event = service.create_event(
        name="Conf", capacity=10, strategy=strategy, quotas={"ws": 4},
        ticket_types={"conference": [], "ws": ["ws"]}, max_per_order=4)
    service.set_questions(event.id, [
        {"id": "name_on_pass", "label": "Name on the pass", "required": True, "per_pass": True},
        {"id": "invoice", "label": "Invoice to", "required": True}], expected_version=0)
    order = service.book(event.id, name="Ada", email="ada@example.com",
                         tickets={"ws": 1, "conference": 2}, answers={"invoice": "Acme"},
                         pass_answers=[{"name_on_pass": n} for n in ("Ada", "Bo", "Cy")])
    decide_pending(service, event.id) if strategy == "streams" else None
    [item] = answer_items(event.id)
    assert (item["registration_id"], item["answers"], item["pass_types"]) == (
        order.registration_id, {"invoice": "Acme"}, ["conference", "conference", "ws"])
    assert [p["name_on_pass"] for p in item["pass_answers"]] == ["Ada", "Bo", "Cy"]
    service.cancel(event.id, email="ada@example.com", tickets={"conference": 1})
    assert len(answer_items(event.id)) == 1  # part of the order: its answers stay
    service.cancel(event.id, email="ada@example.com", tickets={"conference": 1, "ws": 1})
    assert answer_items(event.id) == []  # every seat left, by tickets: the order is gone
