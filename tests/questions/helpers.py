"""Shared by the questions' tests: an event with one question of every kind, and the table
of valid and invalid answers every entry point (service, form, API) runs."""
import datetime as dt
from decimal import Decimal

QUESTIONS = [
    {"id": "company", "label": "Company", "kind": "text"},
    {"id": "bio", "label": "About you", "kind": "long_text", "help_text": "A few lines."},
    {"id": "shirt", "label": "T-shirt size", "kind": "choice", "choices": ["S", "M", "L"]},
    {"id": "diet", "label": "Dietary needs", "kind": "multiple_choice",
     "choices": ["Vegetarian", "Vegan", "No nuts"]},
    {"id": "photos", "label": "I agree to be photographed", "kind": "boolean"},
    {"id": "age", "label": "Age", "kind": "number"},
    {"id": "arrival", "label": "Arrival day", "kind": "date"},
    {"id": "work_email", "label": "Work e-mail", "kind": "email"},
    {"id": "phone", "label": "Phone", "kind": "phone"},
]

# (question id, value as the API sends it, the stored value or None when refused).
# The form sends the same values as text (``form_value``).
CASES = [
    ("company", "Acme Ltd", "Acme Ltd"),
    ("company", "Acme\u0007", None),              # a control character
    ("company", "Ac\u200bme", None),              # an invisible character
    ("company", "x" * 201, None),                 # too long
    ("bio", "Line one\nLine two", "Line one\nLine two"),
    ("bio", "y" * 2001, None),
    ("shirt", "M", "M"),
    ("shirt", "XXL", None),                       # not a choice
    ("diet", ["Vegan", "Vegetarian"], ["Vegetarian", "Vegan"]),
    ("diet", ["Vegan", "Pizza"], None),
    ("photos", True, True),
    ("age", 42, Decimal(42)),
    ("age", "forty", None),
    ("age", "1e40", None),
    ("arrival", "2030-05-01", "2030-05-01"),
    ("arrival", "2030-13-01", None),
    ("arrival", "tomorrow", None),
    ("work_email", "ada@example.com", "ada@example.com"),
    ("work_email", "not an address", None),
    ("phone", "+44 20 7946 0958", "+44 20 7946 0958"),
    ("phone", "call me", None),
    ("phone", "12", None),
]


def case_id(case):
    qid, value, stored = case
    return f"{qid}-{'ok' if stored is not None else 'refused'}-{str(value)[:12]}"


def form_value(qid, value):
    """What a browser posts for the value (a list for several checkboxes)."""
    if isinstance(value, bool):
        return "on" if value else ""
    if isinstance(value, (int, Decimal, dt.date)):
        return str(value)
    return value
