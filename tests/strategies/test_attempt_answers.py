"""The transaction loop's typed answers (``booking/strategies/base.py``): ``AGAIN`` is
written again by ``transact`` itself, ``READ_AGAIN`` and results are handed back, a
``Rewrite`` replaces the members, a conflict is written again and an unexplained refusal
raised as it came. A store that answers each ``TransactWriteItems`` from a script."""
import pytest

from booking.dynamo.errors import CancellationReason, TransactionCancelled
from booking.dynamo.expressions import Members
from booking.strategies.base import (AGAIN, READ_AGAIN, ReadAgain, RetryPolicy, Rewrite,
                                     Strategy, TryAgain, WriteAgain)
from booking.errors import BookingContention


class ScriptedStore:
    """``transact_write`` answers in turn: None applies, a code cancels the one member."""

    def __init__(self, *codes: str | None) -> None:
        self.codes, self.written = list(codes), []

    def transact_write(self, operations, token=None) -> None:
        self.written.append(list(operations))
        code = self.codes.pop(0)
        if code is not None:
            raise TransactionCancelled([CancellationReason(code, None)])


class Loop:
    """The strategy's transaction loop alone (no tables, no request log)."""

    transact, transact_once = Strategy.transact, Strategy.transact_once

    def __init__(self, store: ScriptedStore) -> None:
        self.store, self.retry = store, RetryPolicy(max_attempts=4, base_delay=0.0)


def members(name: str = "item") -> Members:
    return Members([(name, ("Put", {"TableName": "items", "Item": {"id": {"S": name}}}))])


def test_again_is_written_again_and_read_again_is_handed_back():
    answers = iter([AGAIN, AGAIN, READ_AGAIN])
    store = ScriptedStore("ConditionalCheckFailed", "ConditionalCheckFailed",
                          "ConditionalCheckFailed")
    outcome = Loop(store).transact(members(), written="done",
                                       decode=lambda refusal: next(answers))
    assert outcome is READ_AGAIN and isinstance(outcome, ReadAgain)
    assert len(store.written) == 3  # twice again, then the caller reads


def test_a_result_and_a_rewrite():
    store = ScriptedStore("ConditionalCheckFailed", None)
    rewritten = members("other")
    outcome = Loop(store).transact(
        members(), written="done",
        decode=lambda refusal: Rewrite(rewritten) if refusal.refused("item") else None)
    assert outcome == "done" and len(store.written) == 2
    assert store.written[1] == rewritten.operations  # the rewrite's members, not the first


def test_a_conflict_is_written_again_until_the_attempts_are_spent():
    store = ScriptedStore(*["TransactionConflict"] * 4)
    with pytest.raises(BookingContention):
        Loop(store).transact(members(), written="done", decode=lambda refusal: None)
    assert len(store.written) == 4


def test_an_unexplained_refusal_is_raised_as_it_came():
    with pytest.raises(TransactionCancelled):
        Loop(ScriptedStore("ConditionalCheckFailed")).transact(
            members(), written="done", decode=lambda refusal: None)


def test_one_attempt_answers_again_for_a_conflict():
    outcome = Loop(ScriptedStore("TransactionConflict")).transact_once(
        members(), written="done", decode=lambda refusal: None)
    assert outcome is AGAIN and isinstance(outcome, WriteAgain)
    assert isinstance(AGAIN, TryAgain) and isinstance(READ_AGAIN, TryAgain)
    assert repr(AGAIN) == "AGAIN" and repr(READ_AGAIN) == "READ_AGAIN"
