"""What the service offers for questions and answers (``BookingService`` hands these on).

- ``set_questions``: the event's questions, a conditional write on the version read
  (``questions_version``), so two organizers' edits never overwrite each other silently;
- ``prepare``: a booking's answers checked (``InvalidAnswers``, nothing stored) and made
  into the rider that puts them in the booking's own write;
- ``answers`` / ``edit_answers``: read and edit one order's answers (the person's signed
  link), the edit a conditional write on the version read (``StaleAnswers``);
- ``purge``: delete an event's answers some days after it ended.

Answers to a question the organizer removed are kept (an edit keeps them too) and shown
under the label they were asked with, marked as removed (``answer_rows``).
"""
from collections.abc import Iterable, Sequence
from typing import Any
import time
from dataclasses import dataclass
from datetime import datetime, timedelta

from django.utils import timezone

from booking import validation
from booking.dynamo.access import ConditionFailed, Table
from booking.dynamo.expressions import Actions, attr
from booking.dynamo import items
from booking.errors import BookingClosed, EventNotFound, InvalidBooking, NotRegistered, StaleEdit
from booking.models import Event, Question, Registration
from booking.questions import rules
from booking.questions.rider import AnswersRemoval, AnswersRider
from booking.questions.store import NEW, AnswerStore, StoredAnswers

STALE_QUESTIONS = "The questions were changed by someone else since you opened them."


@dataclass(frozen=True)
class AnswerRow:
    """One answer as shown: its question's label, the answer as text, and whether the
    organizer has since removed the question."""

    question_id: str
    label: str
    text: str
    removed: bool = False


class Questions:
    def __init__(self, *, catalog: Any, events: Table, answers: AnswerStore) -> None:
        self.catalog = catalog
        self.events = events
        self.store = answers

    # --- the organizer's questions ----------------------------------------------------
    def set_questions(self, event_id: Any, questions: Any, *, expected_version: Any) -> Event:
        """Replace the event's questions (``rules.clean_questions``) if they are still at
        ``expected_version`` (0: never set); return the event. ``StaleEdit`` when they
        changed since, ``EventNotFound``, ``InvalidBooking`` naming the field."""
        if isinstance(expected_version, bool) or not isinstance(expected_version, int) \
                or expected_version < 0:
            raise InvalidBooking("expected_version must be a whole number.",
                                 field="expected_version")
        event = self.catalog.get_event(event_id)
        cleaned = rules.clean_questions(questions, ticket_types=event.ticket_types)
        version = attr("questions_version")
        condition = (attr("event_id").exists() & version.not_exists()
                     if expected_version == 0 else version.eq(expected_version))
        try:
            self.events.update({"event_id": event.id},
                               Actions().set("questions", items.questions_value(cleaned))
                               .set(version, expected_version + 1),
                               condition=condition)
        except ConditionFailed as refused:
            if refused.old_item is None:
                raise EventNotFound() from None
            raise StaleEdit(STALE_QUESTIONS) from None
        self.catalog.forget(event.id)
        return self.catalog.get_event(event.id)

    # --- a booking's answers ----------------------------------------------------------
    def prepare(self, event: Event, tickets: dict[str, int], answers: Any, pass_answers: Any, *,
                at: float) -> AnswersRider | None:
        """The rider that stores the order's answers with it, or None when the order is
        asked nothing (and was given nothing: else ``InvalidAnswers``)."""
        given_nothing = not answers and not pass_answers
        if given_nothing and not event.questions:
            return None  # an event that asks nothing: no plan to make
        plan = rules.asked(event.questions, tickets, event.ticket_types)
        if given_nothing and not plan.anything:
            return None
        order, passes = rules.clean_answers(event.questions, answers, pass_answers,
                                            tickets=tickets, ticket_types=event.ticket_types)
        return AnswersRider(self.store, StoredAnswers(
            event_id=event.id, registration_id="", answers=order,
            pass_answers=tuple(passes), pass_types=tuple(t for t, _ in plan.passes),
            labels=_labels(event.questions, order, passes),
            questions_version=event.questions_version, updated_at=int(at)))

    def removal(self, event: Event, request_id: str) -> AnswersRemoval | None:
        """The rider deleting the answers of the order a cancellation removes (None on an
        event that never had questions: its cancellations cost what they always did)."""
        return AnswersRemoval(self.store, request_id) if event.questions_version else None

    # --- one order's answers ----------------------------------------------------------
    def answers(self, registration: Registration) -> StoredAnswers | None:
        return self.store.read(registration.event_id, registration.registration_id)

    def edit_answers(self, registration: Registration, *, answers: dict | None = None,
                     pass_answers: list | None = None, expected_version: int) -> StoredAnswers:
        """Replace the order's answers (the questions as they are now; answers to removed
        questions are kept) if they are still at ``expected_version``. Until the event
        starts (``BookingClosed``); ``InvalidAnswers`` (nothing stored), ``StaleAnswers``
        (changed since read: nothing written), ``NotRegistered`` (cancelled meanwhile)."""
        event = self.catalog.get_event(registration.event_id)
        if event.has_started:
            raise BookingClosed("The event has started: the answers can no longer be changed.")
        if isinstance(expected_version, bool) or not isinstance(expected_version, int):
            raise InvalidBooking("expected_version must be a whole number.",
                                 field="expected_version")
        stored = self.answers(registration)
        order, passes = rules.clean_answers(event.questions, answers, pass_answers,
                                            tickets=registration.tickets,
                                            ticket_types=event.ticket_types)
        current = {q.id for q in event.questions}
        kept = dict(stored.answers) if stored else {}
        order = {**{k: v for k, v in kept.items() if k not in current}, **order}
        old_passes = stored.pass_answers if stored else ()
        passes = [{**{k: v for k, v in (old_passes[n] if n < len(old_passes) else {}).items()
                      if k not in current}, **p} for n, p in enumerate(passes)]
        plan = rules.asked(event.questions, registration.tickets, event.ticket_types)
        labels = {**(stored.labels if stored else {}), **_labels(event.questions, order, passes)}
        fresh = StoredAnswers(
            event_id=event.id, registration_id=registration.registration_id, answers=order,
            pass_answers=tuple(passes), pass_types=tuple(t for t, _ in plan.passes),
            labels=labels, questions_version=event.questions_version)
        if stored is None:
            if expected_version != 0:
                raise rules.StaleAnswers()
            try:
                self.store.table.put({**fresh.item(registration.email), "version": 1,
                                      "updated_at": int(time.time())},
                                     condition=NEW)
            except ConditionFailed:
                raise rules.StaleAnswers() from None
        elif not self.store.replace(fresh, expected_version=expected_version):
            if self.store.read(event.id, registration.registration_id) is None:
                raise NotRegistered()
            raise rules.StaleAnswers()
        found = self.store.read(event.id, registration.registration_id)
        if found is None:
            raise NotRegistered()
        return found

    def answers_for_event(self, event_id: Any) -> dict[str, StoredAnswers]:
        return self.store.for_event(validation.clean_event_id(event_id))

    def purge(self, event_id: Any, *, after_days: int, now: datetime | None = None) -> int:
        """Delete the event's answers once ``after_days`` days have passed since it ended
        (its end, else its start); return how many. ``InvalidBooking`` before then."""
        event = self.catalog.get_event(event_id)
        if isinstance(after_days, bool) or not isinstance(after_days, int) or after_days < 0:
            raise InvalidBooking("--after-days must be a whole number of days.",
                                 field="after_days")
        over = event.ends_at or event.starts_at
        now = now or timezone.now()
        if over is None or over + timedelta(days=after_days) > now:
            raise InvalidBooking(
                f"This event has not been over for {after_days} days yet: its answers are "
                "kept." if over else "This event has no date: say when it is over first.",
                field="after_days")
        found = self.store.for_event(event.id)
        return self.store.delete_many(event.id, found)

    def delete_event_answers(self, event_id: str) -> None:
        self.store.table.delete_partition(event_id)


def _labels(questions: Iterable[Question], order: dict, passes: list[dict]) -> dict:
    answered = set(order) | {k for p in passes for k in p}
    return {q.id: q.label for q in questions if q.id in answered}


def answer_rows(questions: Sequence[Question], stored: StoredAnswers | None) -> tuple[list[AnswerRow],
                                                                  list[list[AnswerRow]]]:
    """An order's answers as shown (the order's, then each pass's), the current questions'
    order first, answers to removed questions after them (``removed``)."""
    if stored is None:
        return [], []
    return (_rows(questions, stored.answers, stored.labels, per_pass=False),
            [_rows(questions, p, stored.labels, per_pass=True) for p in stored.pass_answers])


def _rows(questions: Iterable[Question], given: dict, labels: dict, *,
          per_pass: bool) -> list[AnswerRow]:
    current = [q for q in questions if q.per_pass == per_pass]
    rows = [AnswerRow(q.id, q.label, rules.value_text(given[q.id]))
            for q in current if q.id in given]
    known = {q.id for q in questions}
    rows += [AnswerRow(qid, labels.get(qid, qid), rules.value_text(value), removed=True)
             for qid, value in given.items() if qid not in known]
    return rows


# --- whose pass it is: the answer to "Name on the pass" --------------------------------
NAME_WORDS = ("name", "名")  # "Name on the pass", "attendee_name", "お名前", "氏名"


def holder_question(questions: Iterable[Question]) -> Question | None:
    """The per-pass question that asks each attendee's name: the first per-pass text
    question whose id or label names a name; None when the event asks none."""
    return next((q for q in questions if q.per_pass and q.kind == "text" and any(
        word in f"{q.id} {q.label}".casefold() for word in NAME_WORDS)), None)


def pass_holders(questions: Iterable[Question], stored: StoredAnswers | None, passes: Any, *,
                 default: str) -> dict[str, str]:
    """Each pass's holder by pass id (seat ``n``'s pass answers are ``pass_answers[n-1]``):
    its answer to the event's name question, else ``default`` (the order's name)."""
    question = holder_question(questions)
    given = stored.pass_answers if stored is not None and question is not None else ()
    holders = {}
    for pass_ in passes:
        seat = int(pass_.pass_id.rsplit("-", 1)[1])
        answer = given[seat - 1].get(question.id) if question and seat <= len(given) else None
        holders[pass_.pass_id] = (answer.strip() if isinstance(answer, str) and answer.strip()
                                  else default)
    return holders
