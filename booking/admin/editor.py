"""The event editor's parts in an organizer's words: the crowd that picks the strategy,
time zones found by city, ticket types and quotas as rows, and what a seat of each type
takes. The forms (``booking/admin/forms.py``) use them; the service decides what is valid.
"""
import difflib
from dataclasses import dataclass

from django import forms
from django.utils.text import slugify

from booking import times, validation
from booking.errors import BookingError
from booking.models import RESERVED_NAMES
from booking.models import ticket_label as derived_label
from booking.strategies import STRATEGIES


@dataclass(frozen=True)
class Crowd:
    label: str
    sentence: str
    strategy: str


# "How many people do you expect in the first minute?": the one place an answer becomes a
# strategy (docs/admin.md names which strategy each picks; pages and errors never do).
CROWDS = {
    "few": Crowd("A few at a time",
                 "Sign-ups spread over days or weeks; the right choice for almost every event.",
                 "lock_table"),
    "hundreds": Crowd("Hundreds at once",
                      "A popular opening: hundreds try in the same minute and each gets an "
                      "answer at once.", "slots"),
    "thousands": Crowd("Thousands a second",
                       "A ticket drop: thousands of people a second when sales open.",
                       "shards"),
    "line": Crowd("Far more people than seats",
                  "Everyone is told at once that their request arrived; the seats go to the "
                  "first arrivals a moment later and the others are told by e-mail.",
                  "streams"),
}
# Events created before the question was asked (the small-event kind is no longer offered).
OLDER_KINDS = {"aggregate": Crowd("A small event",
                                  "Set up for a small crowd, a few at a time.", "aggregate")}


def crowd_of(strategy: str) -> Crowd:
    """The crowd an event was set up for, by its strategy."""
    found = [crowd for crowd in (*CROWDS.values(), *OLDER_KINDS.values())
             if crowd.strategy == strategy]
    return found[0] if found else Crowd("Set up by a developer", "", strategy)


def most_seats(strategy: str) -> int:
    return STRATEGIES[strategy].max_capacity


def crowd_choices() -> list[tuple[str, str]]:
    return [(key, f"{crowd.label}: {crowd.sentence} Up to {most_seats(crowd.strategy):,} seats.")
            for key, crowd in CROWDS.items()]


# --- time zones ----------------------------------------------------------------------
def _city(name: str) -> str:
    return name.rsplit("/", 1)[-1].replace("_", " ").casefold()


def resolve_zone(typed: str) -> str:
    """An IANA name from what was typed: the name itself (any case), or a city whose zone
    is unambiguous ("Berlin" -> Europe/Berlin). ``forms.ValidationError`` suggests close
    names otherwise."""
    text = " ".join(typed.replace("_", " ").split())
    names = times.zone_names()
    exact = [n for n in names if n.casefold() == text.replace(" ", "_").casefold()]
    if exact:
        return exact[0]
    by_city = sorted(n for n in names if _city(n) == text.casefold() and "/" in n)
    if len(by_city) == 1:
        return by_city[0]
    cities = {_city(n): n for n in sorted(names) if "/" in n}
    close = by_city or [cities[c] for c in difflib.get_close_matches(text.casefold(), cities, 3)]
    hint = f" Did you mean {' or '.join(close)}?" if close else (
        " Type a city, such as Berlin, or a name such as Europe/Berlin.")
    raise forms.ValidationError(f"“{typed}” is not a time zone we know.{hint}")


def zone_options(first: str = "") -> list[tuple[str, str]]:
    """(IANA name, city) for the searchable list, ``first`` (the last one chosen) first."""
    names = sorted(times.zone_names())
    if first in names:
        names.remove(first)
        names.insert(0, first)
    return [(name, _city(name).title()) for name in names]


class TimeZoneField(forms.CharField):
    def clean(self, value):
        value = super().clean(value)
        return resolve_zone(value) if value else value


# --- quotas and ticket types as rows ---------------------------------------------------
def derived_name(label: str) -> str:
    """The key a label gets: "Workshop A" -> ``workshop-a``."""
    return slugify(label)[:40]


class QuotaRow(forms.Form):
    label = forms.CharField(label="Quota", max_length=60, required=False,
                            widget=forms.TextInput(attrs={"size": 20}))
    seats = forms.IntegerField(label="Seats", min_value=0, required=False,
                               widget=forms.NumberInput(attrs={"size": 6}))

    def clean(self):
        super().clean()
        data = self.cleaned_data
        label, seats = data.get("label", ""), data.get("seats")
        if label and seats is None and "seats" not in self.errors:
            self.add_error("seats", "How many seats does this quota have?")
        if seats is not None and not label:
            self.add_error("label", "Name this quota, such as Workshop A.")
        if label:
            data["name"] = checked_name(self, label)
        return data


class TicketTypeRow(forms.Form):
    label = forms.CharField(label="Ticket type", max_length=60, required=False,
                            widget=forms.TextInput(attrs={"size": 20}))
    description = forms.CharField(
        label="Description", required=False, max_length=validation.TICKET_DESCRIPTION_MAX_LENGTH,
        widget=forms.TextInput(attrs={"size": 30}))
    counts_against = forms.CharField(
        label="Also counts against", required=False, max_length=400,
        widget=forms.TextInput(attrs={"size": 20, "list": "quota-names"}),
        help_text="Quotas, separated by commas")
    code_only = forms.BooleanField(
        label="Only with an access code", required=False,
        help_text="Hidden on the event's page and bookable only with a code that unlocks it "
                  "(Access codes, once the event is saved).")

    def clean(self):
        super().clean()
        data = self.cleaned_data
        label = data.get("label", "")
        if not label and (data.get("description") or data.get("counts_against")
                          or data.get("code_only")):
            self.add_error("label", "Name this ticket type, such as Workshop A.")
        if label:
            data["name"] = checked_name(self, label)
        data["against"] = [q.strip() for q in (data.get("counts_against") or "").split(",")
                           if q.strip()]  # as typed, for errors
        data["quotas"] = [derived_name(q) for q in data["against"]]
        return data


def checked_name(row: forms.Form, label: str) -> str:
    name = derived_name(label)
    if not validation.QUOTA_NAME_PATTERN.match(name):
        row.add_error("label", "Use letters or digits in the name (it becomes "
                               "“workshop-a” for “Workshop A”).")
    elif name in RESERVED_NAMES:
        row.add_error("label", f"“{label}” is the name of the event's own capacity (every "
                               "ticket type counts against it): choose another name, such "
                               "as “General” or “Main hall”.")
    return name


QuotaRows = forms.formset_factory(QuotaRow, extra=3, max_num=validation.MAX_QUOTAS,
                                  validate_max=True)
TypeRows = forms.formset_factory(TicketTypeRow, extra=4, max_num=validation.MAX_TICKET_TYPES,
                                 validate_max=True)


class AddedTypeRow(TicketTypeRow):
    """A ticket type added after creation: whether a type needs a code is set when the
    event is created (the service's ``update_event`` does not change it)."""

    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        del self.fields["code_only"]


# Ticket types added to an event after it was created (the change form).
NewTypeRows = forms.formset_factory(AddedTypeRow, extra=2, max_num=validation.MAX_TICKET_TYPES,
                                    validate_max=True)


def code_only_of(type_rows) -> list[str]:
    """The names of the (valid) rows' types ticked "Only with an access code"."""
    return [row["name"] for row in type_rows.cleaned_data
            if row.get("name") and row.get("code_only")]


def rows_as_added_types(rows, event) -> tuple[dict, dict, dict]:
    """(ticket_types, descriptions, labels) of the types added in ``rows`` (valid) to
    ``event``, each counting against its existing quotas; ``forms.ValidationError`` lists
    every problem at once."""
    types: dict[str, list[str]] = {}
    descriptions: dict[str, str] = {}
    labels: dict[str, str] = {}
    problems = []
    quota_by_label = {event.label(q).casefold(): q for q in event.quotas}
    for row in rows.cleaned_data:
        if not row.get("name"):
            continue
        if row["name"] in event.ticket_types or row["name"] in types:
            problems.append(f"The ticket type “{row['label']}” already exists.")
        quotas = [quota_by_label.get(typed.casefold(), derived)
                  for typed, derived in zip(row["against"], row["quotas"])]
        unknown = [typed for typed, q in zip(row["against"], quotas) if q not in event.quotas]
        if unknown:
            problems.append(f"The ticket type “{row['label']}” counts against "
                            f"“{', '.join(unknown)}”, which is not one of this event's quotas "
                            "(quotas cannot be added after creation).")
        types[row["name"]] = quotas
        labels[row["name"]] = row["label"]
        if row.get("description"):
            descriptions[row["name"]] = row["description"]
    if problems:
        raise forms.ValidationError(problems)
    return types, descriptions, labels


def rows_as_orders(quota_rows, type_rows) -> tuple[dict, dict, dict, dict]:
    """(quotas, ticket_types, descriptions, labels) from valid rows, ``labels`` being each
    name's label as typed ("VIP" for ``vip``); ``forms.ValidationError`` lists every
    problem across rows at once."""
    quotas: dict[str, int] = {}
    labels: dict[str, str] = {}
    problems = []
    for row in quota_rows.cleaned_data:
        if row.get("name"):
            if row["name"] in quotas:
                problems.append(f"The quota “{row['label']}” is given twice.")
            quotas[row["name"]] = row["seats"]
            labels[row["name"]] = row["label"]
    types: dict[str, list[str]] = {}
    descriptions: dict[str, str] = {}
    for row in type_rows.cleaned_data:
        if not row.get("name"):
            continue
        if row["name"] in types:
            problems.append(f"The ticket type “{row['label']}” is given twice.")
        unknown = [typed for typed, q in zip(row["against"], row["quotas"]) if q not in quotas]
        if unknown:
            problems.append(f"The ticket type “{row['label']}” counts against "
                            f"“{', '.join(unknown)}”, which is not one of the quotas above.")
        types[row["name"]] = row["quotas"]
        labels[row["name"]] = row["label"]
        if row.get("description"):
            descriptions[row["name"]] = row["description"]
    if quotas and not types:
        problems.append("Add the ticket types that count against these quotas.")
    if problems:
        raise forms.ValidationError(problems)
    return quotas, types, descriptions, labels


# --- what a seat takes ----------------------------------------------------------------
def seat_takes(capacity: int, quotas: dict, ticket_types: dict,
               labels: dict | None = None) -> dict[str, str]:
    """Type -> "A Workshop A seat takes 1 of the 120 seats and 1 of Workshop A's 30"
    (``labels``: the typed ones, else derived)."""
    labels = labels or {}

    def ticket_label(name: str) -> str:
        return labels.get(name) or derived_label(name)

    lines = {}
    for name, counted in ticket_types.items():
        parts = [f"1 of the {capacity:,} seats"] + [
            f"1 of {ticket_label(quota)}'s {quotas.get(quota, 0):,}" for quota in counted]
        lines[name] = f"A {ticket_label(name)} seat takes {_join(parts)}."
    return lines


def _join(parts: list[str]) -> str:
    return parts[0] if len(parts) == 1 else ", ".join(parts[:-1]) + " and " + parts[-1]


def show_on(form: forms.Form, error: BookingError) -> None:
    """A service error next to its field when the form has it, else above the form."""
    field = error.field if error.field in form.fields and error.field != "version" else None
    form.add_error(field, error.message)
