"""The answers' riders: an order's answers put in its booking's own write, and deleted in
its cancellation's (``booking/exactly_once/riders.py``).

The members name the registration the write answers (``members(answer)``), so the same
rider rides on every strategy without knowing it: the booking's new registration id keys
the put, a cancellation's removed registration keys the delete (a cancellation by e-mail
learns the id only from what the strategy read). Neither member can refuse a write that
its seats would let through: the put's key is a registration id made for this asking,
the delete has no condition.
"""
from dataclasses import dataclass, replace

from booking.dynamo.expressions import Member, Refusal
from booking.models import Registration
from booking.questions.store import AnswerStore, StoredAnswers


@dataclass(frozen=True)
class AnswersRider:
    """Puts ``answers`` (the order's, its registration id filled in from the write's answer)."""

    store: AnswerStore
    answers: StoredAnswers

    def members(self, answer: Registration, *, notice: bool = True) -> list[tuple[str, Member]]:
        stored = replace(self.answers, event_id=answer.event_id,
                         registration_id=answer.registration_id)
        return [("answers", self.store.put_op(stored, email=answer.email))]

    def answer(self, refusal: Refusal) -> Registration | None:
        # Its put is refused only beside the request row's own refusal (a re-sent write of
        # an asking that applied: the registration id is made afresh for each asking), and
        # the request's rider answers first.
        return None


@dataclass(frozen=True)
class AnswersRemoval:
    """Deletes the answers of the registration a cancellation removes; a cancellation of
    part of an order (its answer is that part, named by the request: ``part_of``) keeps
    them, one of every seat left (asked by tickets or not) deletes them."""

    store: AnswerStore
    request_id: str

    def members(self, answer: Registration, *, notice: bool = True) -> list[tuple[str, Member]]:
        if answer.part_request_id and answer.part_request_id == self.request_id:
            return []  # the order stays, with its answers
        return [("answers", self.store.delete_op(answer.event_id, answer.registration_id))]

    def answer(self, refusal: Refusal) -> Registration | None:
        return None
