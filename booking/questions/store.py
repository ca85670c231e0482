"""Answers items: one per order that was asked anything (table ``answers``).

    {event_id, registration_id, email, answers: {question id: value},
     pass_answers: [{question id: value}, ...], pass_types: [ticket type per seat],
     labels: {question id: label as asked}, version, questions_version, updated_at}

``labels`` keeps each answered question's label as it was asked, so an answer to a
question the organizer removed later is still shown, under its label, as removed.
``version`` starts at 1 and rises with each edit; an edit is a conditional write on the
version its editor read (``replace``), so a stale edit is refused, never lost.
"""
import time
from collections.abc import Iterable
from dataclasses import dataclass, field

from booking.dynamo.access import ConditionFailed, Store
from booking.dynamo.expressions import Actions, attr
from booking.dynamo.tables import ANSWERS
from booking.dynamo.expressions import Delete, Put

NEW = attr("registration_id").not_exists()  # an answers item not written yet


@dataclass(frozen=True)
class StoredAnswers:
    event_id: str
    registration_id: str
    answers: dict = field(default_factory=dict)
    pass_answers: tuple[dict, ...] = ()
    pass_types: tuple[str, ...] = ()
    labels: dict = field(default_factory=dict)
    version: int = 1
    questions_version: int = 0
    updated_at: int = 0

    def item(self, email: str = "") -> dict:
        return {"event_id": self.event_id, "registration_id": self.registration_id,
                **({"email": email} if email else {}),
                "answers": dict(self.answers), "pass_answers": [dict(p) for p in self.pass_answers],
                "pass_types": list(self.pass_types), "labels": dict(self.labels),
                "version": self.version, "questions_version": self.questions_version,
                "updated_at": self.updated_at}

    @classmethod
    def from_item(cls, item: dict) -> "StoredAnswers":
        return cls(event_id=item["event_id"], registration_id=item["registration_id"],
                   answers=dict(item.get("answers") or {}),
                   pass_answers=tuple(dict(p) for p in item.get("pass_answers") or []),
                   pass_types=tuple(item.get("pass_types") or []),
                   labels=dict(item.get("labels") or {}), version=int(item.get("version", 1)),
                   questions_version=int(item.get("questions_version", 0)),
                   updated_at=int(item.get("updated_at", 0)))


class AnswerStore:
    def __init__(self, store: Store):
        self.table = store.table(ANSWERS)

    @staticmethod
    def key(event_id: str, registration_id: str) -> dict:
        return {"event_id": event_id, "registration_id": registration_id}

    def put_op(self, stored: StoredAnswers, *, email: str = "") -> Put:
        """The order's answers, put with its seats (a new registration id: never there)."""
        return Put(self.table, stored.item(email), NEW)

    def delete_op(self, event_id: str, registration_id: str) -> Delete:
        """The order's answers deleted with its registration (absent: nothing to do)."""
        return Delete(self.table, self.key(event_id, registration_id))

    def read(self, event_id: str, registration_id: str) -> StoredAnswers | None:
        item = self.table.get(self.key(event_id, registration_id))
        return None if item is None else StoredAnswers.from_item(item)

    def replace(self, stored: StoredAnswers, *, expected_version: int) -> bool:
        """Write ``stored`` (its version one above ``expected_version``) only if the item
        is still at ``expected_version``; False when it is not (changed since, or gone)."""
        item = {**stored.item(), "version": expected_version + 1, "updated_at": int(time.time())}
        changed = ("answers", "pass_answers", "labels", "questions_version", "updated_at",
                   "version")
        try:
            self.table.update(
                self.key(stored.event_id, stored.registration_id),
                Actions().set_all({name: item[name] for name in changed}),
                condition=attr("registration_id").exists()
                & attr("version").eq(expected_version))
        except ConditionFailed:
            return False
        return True

    def for_event(self, event_id: str) -> dict[str, StoredAnswers]:
        """Every answers item of the event, by registration id."""
        return {item["registration_id"]: StoredAnswers.from_item(item)
                for item in self.table.query(key_condition=attr("event_id").eq(event_id))}

    def delete(self, event_id: str, registration_id: str) -> None:
        self.table.delete(self.key(event_id, registration_id))

    def delete_many(self, event_id: str, registration_ids: Iterable[str]) -> int:
        keys = [self.key(event_id, r) for r in registration_ids]
        for start in range(0, len(keys), 25):
            self.table.batch_delete(keys[start:start + 25])
        return len(keys)
