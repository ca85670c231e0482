"""The organizer's questions and the rules for their answers: the one place that checks
both, for the signup form, the JSON API and the service alike (docs/orders.md#questions).

A question is asked once per order or once per pass (``per_pass``: each seat's
attendee, "name on the pass"), of the ticket types it names (none: every type). An
answer's value by kind:

- ``text``, ``email``, ``phone``, ``choice``, ``date`` (``YYYY-MM-DD``): a string;
  ``long_text``: a string of several lines;
- ``multiple_choice``: a list of strings, each one of ``choices``;
- ``boolean``: true or false (a *required* one must be true: a consent ticked);
- ``number``: a number (a JSON number, or its digits as text from a form).

Text follows ``booking/validation.py``'s rules for people's text (no control or invisible
characters, a length limit), an e-mail its rules for addresses. A refusal is
``InvalidAnswers``: every field's message at once (``errors``), nothing stored.
"""
from collections.abc import Iterable, Mapping, Sequence
from typing import Any
import datetime as dt
import re
import unicodedata
from dataclasses import dataclass, field
from decimal import Decimal, InvalidOperation

from booking import validation
from booking.errors import InvalidBooking, StaleEdit
from booking.models import Question

KINDS = ("text", "long_text", "choice", "multiple_choice", "boolean", "number", "date",
         "email", "phone")
CHOICE_KINDS = ("choice", "multiple_choice")
MAX_QUESTIONS = 30
LABEL_MAX_LENGTH = 200
HELP_MAX_LENGTH = 500
MAX_CHOICES = 30
CHOICE_MAX_LENGTH = 100
TEXT_MAX_LENGTH = 200
LONG_TEXT_MAX_LENGTH = 2000
PHONE_MAX_LENGTH = 30
PHONE_PATTERN = re.compile(r"^\+?[0-9 ().\-/]+$")
NUMBER_LIMIT = Decimal("1e12")


class InvalidAnswers(InvalidBooking):
    """Answers that break their questions' rules: ``errors`` maps each field
    (``answers.<id>``, ``pass_answers.<n>.<id>``, n from 0) to its message; ``field`` and
    the message are the first of them. Nothing is stored."""

    def __init__(self, errors: dict[str, str]):
        first = next(iter(errors))
        super().__init__(errors[first], field=first)
        self.errors = dict(errors)


class StaleAnswers(StaleEdit):
    """An edit of answers read before someone else changed them: refused, nothing lost."""

    code = "stale_answers"
    default_message = ("These answers were changed since you opened them. Please look at "
                       "them again and redo your change.")


@dataclass(frozen=True)
class Asked:
    """What one order is asked: the order's questions, and each seat's (its ticket type
    and the per-pass questions that type asks), seats in the event's type order."""

    order: tuple[Question, ...]
    passes: tuple[tuple[str, tuple[Question, ...]], ...] = field(default=())

    @property
    def anything(self) -> bool:
        return bool(self.order) or any(questions for _, questions in self.passes)


def seat_types(tickets: dict[str, int], ticket_types: Mapping[str, Sequence[str]]) -> list[str]:
    """One ticket type per seat of an order, types by name (pass 0 first): a stored map keeps
    no order."""
    return [name for name in sorted(ticket_types) for _ in range(int(tickets.get(name, 0)))]


def asked(questions: Iterable[Question], tickets: dict[str, int],
          ticket_types: Mapping[str, Sequence[str]]) -> Asked:
    """The questions an order of ``tickets`` is asked."""
    types = seat_types(tickets, ticket_types)
    order = tuple(q for q in questions if not q.per_pass and any(q.asked_of(t) for t in types))
    passes = tuple((t, tuple(q for q in questions if q.per_pass and q.asked_of(t)))
                   for t in types)
    if not any(questions for _, questions in passes):
        passes = ()
    return Asked(order, passes)


# --- the organizer's questions ----------------------------------------------------------

def clean_questions(value: Any, *, ticket_types: Mapping[str, Sequence[str]]) -> tuple[Question, ...]:
    """An event's questions from a list of mappings (``Question``'s fields), in order;
    ``InvalidBooking`` naming ``questions.<n>.<field>``, nothing stored."""
    if value is None:
        return ()
    if not isinstance(value, (list, tuple)):
        raise InvalidBooking("Questions must be a list.", field="questions")
    if len(value) > MAX_QUESTIONS:
        raise InvalidBooking(f"An event asks at most {MAX_QUESTIONS} questions.",
                             field="questions")
    cleaned: list[Question] = []
    for index, raw in enumerate(value):
        question = _clean_question(raw, f"questions.{index}", ticket_types)
        if any(q.id == question.id for q in cleaned):
            raise InvalidBooking(f"Two questions have the id {question.id!r}.",
                                 field=f"questions.{index}.id")
        cleaned.append(question)
    return tuple(cleaned)


_QUESTION_FIELDS = {"id", "label", "kind", "required", "choices", "help_text",
                    "ticket_types", "per_pass"}


def _clean_question(raw: Any, where: str, ticket_types: Mapping[str, Sequence[str]]) -> Question:
    if isinstance(raw, Question):
        raw = raw.as_dict()
    if not isinstance(raw, dict):
        raise InvalidBooking("Each question must be an object.", field=where)
    unknown = sorted(set(raw) - _QUESTION_FIELDS)
    if unknown:
        raise InvalidBooking(f"Unknown field {unknown[0]!r}.", field=f"{where}.{unknown[0]}")
    qid = raw.get("id")
    if not isinstance(qid, str) or not validation.QUOTA_NAME_PATTERN.match(qid):
        raise InvalidBooking("An id is 1-40 lowercase letters, digits, '-' or '_', starting "
                             "with a letter or digit.", field=f"{where}.id")
    label = validation.clean_text(raw.get("label"), field=f"{where}.label", label="Label",
                                  max_length=LABEL_MAX_LENGTH)
    kind = raw.get("kind", "text")
    if kind not in KINDS:
        raise InvalidBooking(f"Kind must be one of: {', '.join(KINDS)}.", field=f"{where}.kind")
    required = raw.get("required", False)
    per_pass = raw.get("per_pass", False)
    for name, flag in (("required", required), ("per_pass", per_pass)):
        if not isinstance(flag, bool):
            raise InvalidBooking(f"{name} must be true or false.", field=f"{where}.{name}")
    choices = raw.get("choices") or []
    if not isinstance(choices, (list, tuple)):
        raise InvalidBooking("Choices must be a list of texts.", field=f"{where}.choices")
    if kind in CHOICE_KINDS:
        if not choices or len(choices) > MAX_CHOICES:
            raise InvalidBooking(f"A {kind.replace('_', ' ')} question needs 1-{MAX_CHOICES} "
                                 "choices.", field=f"{where}.choices")
        choices = [validation.clean_text(c, field=f"{where}.choices", label="A choice",
                                         max_length=CHOICE_MAX_LENGTH) for c in choices]
        if len(set(choices)) != len(choices):
            raise InvalidBooking("Choices must differ.", field=f"{where}.choices")
    elif choices:
        raise InvalidBooking("Only choice questions have choices.", field=f"{where}.choices")
    help_text = raw.get("help_text") or ""
    if help_text:
        help_text = validation.clean_text(help_text, field=f"{where}.help_text",
                                          label="Help text", max_length=HELP_MAX_LENGTH)
    types = raw.get("ticket_types") or []
    if not isinstance(types, (list, tuple)) or any(t not in ticket_types for t in types):
        raise InvalidBooking("Ticket types must name the event's ticket types: "
                             f"{', '.join(ticket_types)}.", field=f"{where}.ticket_types")
    return Question(id=qid, label=label, kind=kind, required=required,
                    choices=tuple(choices), help_text=help_text,
                    ticket_types=tuple(dict.fromkeys(types)), per_pass=per_pass)


# --- answers ----------------------------------------------------------------------------

def clean_answers(questions: Sequence[Question], answers: Any, pass_answers: Any, *,
                  tickets: dict[str, int], ticket_types: Mapping[str, Sequence[str]]) -> tuple[dict, list[dict]]:
    """An order's answers (question id -> value) and each seat's (a list, one mapping per
    seat, in ``seat_types`` order) checked against ``questions``: the cleaned values, or
    ``InvalidAnswers`` with every field's message. Answers to questions the order is not
    asked are refused (a removed question's answer, kept on an edit, is the caller's)."""
    errors: dict[str, str] = {}
    plan = asked(questions, tickets, ticket_types)
    answers = {} if answers is None else answers
    pass_answers = [] if pass_answers is None else pass_answers
    if not isinstance(answers, dict):
        raise InvalidAnswers({"answers": "Answers must be an object of question ids to values."})
    if not isinstance(pass_answers, (list, tuple)) or not all(
            isinstance(p, dict) for p in pass_answers):
        raise InvalidAnswers({"pass_answers": "Pass answers must be a list of objects, one "
                                              "per seat."})
    if len(pass_answers) > len(plan.passes):
        raise InvalidAnswers({"pass_answers": f"This order has {len(plan.passes)} passes "
                                              "to answer for." if plan.passes
                              else "This order asks nothing per pass."})
    order = _clean_set(plan.order, answers, "answers", errors)
    passes = [_clean_set(pass_questions, pass_answers[n] if n < len(pass_answers) else {},
                         f"pass_answers.{n}", errors)
              for n, (_, pass_questions) in enumerate(plan.passes)]
    if errors:
        raise InvalidAnswers(errors)
    return order, passes


def _clean_set(questions: Iterable[Question], given: dict, where: str, errors: dict) -> dict:
    known = {q.id for q in questions}
    for qid in given:
        if qid not in known:
            errors[f"{where}.{qid}"] = "This question is not asked of this order."
    cleaned = {}
    for question in questions:
        try:
            value = clean_value(question, given.get(question.id))
        except InvalidBooking as refused:
            errors[f"{where}.{question.id}"] = refused.message
            continue
        if value is not None:
            cleaned[question.id] = value
    return cleaned


def _blank(value: Any) -> bool:
    return value is None or value == "" or value == [] or (
        isinstance(value, str) and not value.strip())


def clean_value(question: Question, value: Any) -> Any:
    """One answer, cleaned; None when left blank (``InvalidBooking`` if it is required)."""
    kind = question.kind
    if kind == "boolean":
        if value is None or value == "":
            if question.required:
                raise InvalidBooking("Please tick this to continue.")
            return None
        if not isinstance(value, bool):
            raise InvalidBooking("Answer yes or no (true or false).")
        if question.required and not value:
            raise InvalidBooking("Please tick this to continue.")
        return value
    if _blank(value):
        if question.required:
            raise InvalidBooking("This question is required.")
        return None
    if kind in ("text", "long_text", "choice", "email", "phone", "date") and not isinstance(
            value, str):
        raise InvalidBooking("The answer must be text.")
    if kind == "text":
        return validation.clean_text(value, field="", label="The answer",
                                     max_length=TEXT_MAX_LENGTH)
    if kind == "long_text":
        return _long_text(value)
    if kind == "choice":
        if value not in question.choices:
            raise InvalidBooking("Choose one of the choices offered.")
        return value
    if kind == "multiple_choice":
        if not isinstance(value, (list, tuple)) or not all(isinstance(v, str) for v in value):
            raise InvalidBooking("The answer must be a list of the choices offered.")
        if any(v not in question.choices for v in value):
            raise InvalidBooking("Choose only among the choices offered.")
        chosen = set(value)
        return [c for c in question.choices if c in chosen]  # the organizer's order, once
    if kind == "number":
        return _number(value)
    if kind == "date":
        try:
            return dt.date.fromisoformat(value.strip()).isoformat()
        except ValueError:
            raise InvalidBooking("Enter a date as YYYY-MM-DD.") from None
    if kind == "email":
        return validation.clean_typed_email(value)
    if kind == "phone":
        phone = value.strip()
        digits = sum(c.isdigit() for c in phone)
        if len(phone) > PHONE_MAX_LENGTH or not PHONE_PATTERN.match(phone) or not (
                5 <= digits <= 20):
            raise InvalidBooking("Enter a phone number: digits, spaces and + - ( ) only.")
        return phone
    raise InvalidBooking("This question's kind is unknown.")  # clean_questions lets none in


def _long_text(value: str) -> str:
    value = value.replace("\r\n", "\n").strip()
    if len(value) > LONG_TEXT_MAX_LENGTH:
        raise InvalidBooking(f"The answer must be at most {LONG_TEXT_MAX_LENGTH} characters.")
    for line in value.replace("\t", " ").split("\n"):
        if validation.has_control_characters(line):
            raise InvalidBooking("The answer must not contain control characters.")
        hidden = validation.invisible_character(line)
        if hidden is not None:
            raise InvalidBooking(
                f"The answer contains a character that does not show (U+{ord(hidden):04X}, "
                f"{unicodedata.name(hidden, 'unnamed').lower()}). Please type it without.")
    return unicodedata.normalize("NFC", value)


def _number(value: Any) -> Decimal:
    if isinstance(value, bool) or not isinstance(value, (int, float, str, Decimal)):
        raise InvalidBooking("Enter a number.")
    try:
        number = Decimal(value.strip() if isinstance(value, str) else str(value))
    except InvalidOperation:
        raise InvalidBooking("Enter a number.") from None
    if not number.is_finite() or abs(number) >= NUMBER_LIMIT:
        raise InvalidBooking("Enter a number below a trillion.")
    if number.as_tuple().exponent < -6:  # type: ignore[operator]
        raise InvalidBooking("Enter a number with at most 6 decimal places.")
    return number.normalize() if number != number.to_integral_value() else number.quantize(1)


def value_text(value: Any) -> str:
    """An answer as people read it (pages, e-mails, the CSV)."""
    if isinstance(value, bool):
        return "Yes" if value else "No"
    if isinstance(value, (list, tuple)):
        return ", ".join(str(v) for v in value)
    if isinstance(value, Decimal):
        return format(value, "f")
    return str(value)


def json_value(value: Any) -> Any:
    """An answer as the API and webhooks carry it (a number as a JSON number)."""
    if isinstance(value, Decimal):
        return int(value) if value == value.to_integral_value() else float(value)
    if isinstance(value, (list, tuple)):
        return list(value)
    return value
