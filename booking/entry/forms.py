"""The public signup form: presence and length here; the rules themselves are the service's
(booking.validation), checked here too so that every field's error shows at once.

Its one-time token (``new_form_token``: a ``django.core.signing`` value naming the event and
a fresh request id, so a resubmitted form is the same request, never a second seat) travels
in a hidden input that the view checks (``request_id_from_form_token``).
"""
import uuid
from typing import cast

from django import forms
from django.core import signing

from booking import validation
from booking.errors import InvalidBooking
from booking.links import BadLink
from booking.models import PENDING, ticket_label
from booking.questions import rules
from booking.validation import EMAIL_MAX_LENGTH, NAME_MAX_LENGTH
from booking.wiring import web_settings

FORM_SALT = "booking.signup-form"
# The cancel page's form for part of an order: its own salt, so a signup form's token never
# passes as a cancellation's request id (or the other way round).
CANCEL_FORM_SALT = "booking.cancel-form"


def new_form_token(event_id: str, *, salt: str = FORM_SALT) -> str:
    """A fresh signed one-time token for one signup form of one event."""
    return signing.dumps({"e": event_id, "r": uuid.uuid4().hex}, salt=salt)


def request_id_from_form_token(token: str, event_id: str, *, salt: str = FORM_SALT) -> str:
    """The submission's request id, or BadLink if the token is forged, expired or foreign."""
    try:
        data = signing.loads(token, salt=salt, max_age=web_settings().form_max_age)
    except signing.BadSignature:
        raise BadLink() from None
    if not isinstance(data, dict) or data.get("e") != event_id or not data.get("r"):
        raise BadLink()
    return data["r"]


class SignupForm(forms.Form):
    # What the limits' count found for a valid submission (``rate_limits.check_signup``):
    # asked before (True), not (False), unknown (None); set by the view that read it.
    asked_before: bool | None = None
    name = forms.CharField(
        label="Your name", max_length=NAME_MAX_LENGTH,
        error_messages={"required": "Enter your name."},
        widget=forms.TextInput(attrs={"autocomplete": "name"}),
    )
    email = forms.CharField(
        label="E-mail", max_length=EMAIL_MAX_LENGTH,
        error_messages={"required": "Enter your e-mail address."},
        widget=forms.EmailInput(attrs={"autocomplete": "email"}),
        help_text="We send your confirmation and cancellation link here.",
    )
    access_code = forms.CharField(
        label="Access code", max_length=64, required=False,
        help_text="If you were given one (letters and digits; any case).",
        widget=forms.TextInput(attrs={"autocomplete": "off", "autocapitalize": "characters",
                                      "spellcheck": "false"}),
    )

    def __init__(self, *args, event=None, availability=None, unlocked=None, **kwargs):
        """With an ``event`` that sells orders (docs/orders.md), a quantity per ticket type,
        each labelled with the seats its quotas have left (``availability``). Types bookable
        only with a code appear when ``unlocked`` names them; a posted form with a code
        shows them all (the booking's write checks the code unlocks what is ordered)."""
        super().__init__(*args, **kwargs)
        self.event = event
        if unlocked is None:
            unlocked = event.code_only_types if event and self.data.get("access_code") else ()
        self.ticket_types = sorted(
            t for t in event.ticket_types
            if t not in event.code_only_types or t in unlocked) \
            if event and event.offers_orders else []
        single = len(self.ticket_types) == 1
        for ticket_type in self.ticket_types:
            self.fields[f"qty_{ticket_type}"] = forms.IntegerField(
                label=event.label(ticket_type),
                min_value=0, max_value=event.max_per_order, initial=1 if single else 0,
                error_messages={"required": "Enter a number of tickets (0 for none).",
                                "invalid": "Enter a whole number of tickets."},
                widget=forms.NumberInput(attrs={"inputmode": "numeric"}))
        self.questions = tuple(event.questions) if event else ()
        self.order_questions = [q for q in self.questions if not q.per_pass]
        self.pass_questions = [q for q in self.questions if q.per_pass]
        # Per-pass questions are asked for every seat an order may hold (the seats beyond
        # the order's are left out when it is checked: ``clean``).
        self.passes = (event.max_per_order if event and event.offers_orders else 1) \
            if self.pass_questions else 0
        for question in self.order_questions:
            self.fields[f"q_{question.id}"] = question_field(question)
        for n in range(self.passes):
            for question in self.pass_questions:
                field = question_field(question)
                if self.passes > 1:  # the error summary names the pass too
                    field.label = f"{field.label}, pass {n + 1}"
                self.fields[f"p{n}_{question.id}"] = field
        self.show_availability(availability)

    def show_availability(self, availability) -> None:
        """Label each ticket type with the seats its quotas have left (none when the page
        could not read them): called on every rendering, so the hints survive any error."""
        self.ticket_hints: dict[str, tuple[str, str]] = {}
        for ticket_type in self.ticket_types:
            left = _type_remaining(self.event, availability, ticket_type)
            seats = ((f"{left} seat{'' if left == 1 else 's'} left. " if left is not None
                      else "") + f"Up to {self.event.max_per_order} seats per order in all.")
            described = (self.event.ticket_descriptions.get(ticket_type) or "").strip()
            # The organizer's sentence, then the seats: apart on the page (``ticket_hints``,
            # ``_ticket_field.html``) and read as two sentences (the help text).
            self.ticket_hints[ticket_type] = (described and _sentence(described), seats)
            hint = f"{_sentence(described)} {seats}" if described else seats
            # The field's, and its bound field's (a copy taken once the form was validated).
            self.fields[f"qty_{ticket_type}"].help_text = hint
            self[f"qty_{ticket_type}"].help_text = hint

    def clean(self):
        """The tickets (as the service checks them) and the answers, checked by the
        questions' own rules (``booking/questions/rules.py``, as the API and the service
        check them) against the tickets chosen: every error at once, whatever else is
        wrong (a quantity that is not a number counts as none)."""
        cleaned = super().clean()
        if self.ticket_types and not any(f"qty_{t}" in self.errors for t in self.ticket_types):
            try:
                validation.clean_tickets(self.tickets(), ticket_types=self.event.ticket_types,
                                         quotas=self.event.quotas,
                                         max_per_order=self.event.max_per_order)
            except InvalidBooking as error:
                self.add_error(None, error.message)
        if self.questions:
            try:
                # No quantity usable yet: the answers as for one seat (pass 1 is shown).
                nominal = {self.ticket_types[0]: 1} if self.ticket_types else {"admission": 1}
                rules.clean_answers(self.questions, self.answers(), self.pass_answers(),
                                    tickets=self.tickets() or nominal,
                                    ticket_types=self.event.ticket_types)
            except rules.InvalidAnswers as refused:
                self.apply_answer_errors(refused)
        return cleaned

    def answers(self) -> dict:
        return {q.id: self.cleaned_data.get(f"q_{q.id}") for q in self.order_questions
                if not _blank_answer(self.cleaned_data.get(f"q_{q.id}"))}

    def pass_answers(self) -> list[dict]:
        """One mapping per seat of the order chosen (its seats by type, as the service
        counts them), from the first pass blocks."""
        if not self.passes:
            return []
        seats = rules.seat_types(self.tickets() or {"admission": 1}, self.event.ticket_types)
        return [{q.id: self.cleaned_data.get(f"p{n}_{q.id}") for q in self.pass_questions
                 if q.asked_of(kind) and not _blank_answer(self.cleaned_data.get(f"p{n}_{q.id}"))}
                for n, kind in enumerate(seats[:self.passes])]

    def question_fields(self):
        return [self[f"q_{q.id}"] for q in self.order_questions]

    def pass_blocks(self):
        """(title, fields) per pass the form asks about."""
        many = self.passes > 1
        return [(f"Pass {n + 1}" if many else "Your pass",
                 [self[f"p{n}_{q.id}"] for q in self.pass_questions])
                for n in range(self.passes)]

    @property
    def shown_passes(self) -> int:
        """The pass blocks shown: a posted form's, those of the seats it chose (at least
        one); a new form's, all of them (its script hides those beyond the seats chosen:
        ``signup.js``; without it they stay, to be left empty)."""
        if self.is_bound and self.passes > 1 and self.ticket_types:
            chosen = sum(_quantity(self.data.get(f"qty_{t}")) for t in self.ticket_types)
            return max(1, min(chosen, self.passes))
        return self.passes

    def seat_labels(self) -> str:
        """The type label of each seat an order may hold, as the script names the passes
        (one per line; the quantities in the form's order)."""
        return "\n".join(f"{t}={self.event.label(t)}" for t in self.ticket_types)

    def apply_answer_errors(self, refused) -> None:
        apply_answer_errors(self, refused)

    def tickets(self) -> dict[str, int] | None:
        """The order's tickets (type -> quantity), or None for an event without types."""
        if not self.ticket_types:
            return None
        chosen = {t: self.cleaned_data.get(f"qty_{t}") or 0 for t in self.ticket_types}
        return {t: n for t, n in chosen.items() if n}

    def ticket_fields(self):
        return [self[f"qty_{t}"] for t in self.ticket_types]

    def ticket_rows(self):
        """(field, the organizer's description or "", the seats left) per ticket type."""
        hints = getattr(self, "ticket_hints", {})
        return [(self[f"qty_{t}"], *hints.get(t, ("", self[f"qty_{t}"].help_text)))
                for t in self.ticket_types]

    def code(self) -> str | None:
        """The access code as typed, or None."""
        return (self.cleaned_data.get("access_code") or "").strip() or None

    def clean_name(self):
        return self._check(validation.clean_person_name, self.cleaned_data["name"])

    def clean_email(self):
        """The address as typed (trimmed): mailed as is; the service stores its key."""
        return self._check(validation.clean_typed_email, self.cleaned_data["email"])

    @staticmethod
    def _check(rule, value):
        try:
            return rule(value)
        except InvalidBooking as error:
            raise forms.ValidationError(error.message) from None

    def apply_error(self, error) -> None:
        """Show a service error next to its field (or above the form)."""
        if isinstance(error, rules.InvalidAnswers):
            self.apply_answer_errors(error)
            return
        field = error.field if error.field in ("name", "email", "access_code") else None
        self.add_error(field, error.message)


def _sentence(text: str) -> str:
    """``text`` ending as a sentence does (a description typed without a full stop)."""
    return text if text[-1:] in ".!?…。！？" else f"{text}."


def _quantity(value) -> int:
    """A posted quantity as a number of seats (anything else: none)."""
    try:
        return max(0, int(str(value).strip()))
    except (TypeError, ValueError):
        return 0


def _blank_answer(value) -> bool:
    """Left blank on the form (an unticked box says nothing, as an answer left out)."""
    return value is None or value == "" or value == [] or value is False


class AnswerChoices(forms.Field):
    """Several choices as ticked (a list), checked by the questions' rules, not here."""

    def to_python(self, value):
        return list(value) if value else []


def question_field(question) -> forms.Field:
    """A form field for one question: the widget its kind needs; the value is checked by
    ``booking/questions/rules.py`` in ``SignupForm.clean`` (so the form refuses exactly
    what the API and the service refuse)."""
    kind, options = question.kind, [(c, c) for c in question.choices]
    attrs = {}
    if question.required:
        attrs["aria-required"] = "true"
    common = dict(label=question.label + ("" if question.required else " (optional)"),
                  required=False, help_text=question.help_text)
    if kind == "boolean":
        return forms.BooleanField(label=question.label, required=False,
                                  help_text=question.help_text,
                                  widget=forms.CheckboxInput(attrs=attrs))
    if kind == "choice":
        widget: forms.Widget = forms.RadioSelect(choices=options, attrs=attrs)
    elif kind == "multiple_choice":
        return AnswerChoices(**common, widget=forms.CheckboxSelectMultiple(choices=options))
    elif kind == "long_text":
        widget = forms.Textarea(attrs={**attrs, "rows": 4})
    elif kind == "number":
        widget = forms.TextInput(attrs={**attrs, "inputmode": "decimal"})
    elif kind == "date":
        widget = forms.DateInput(attrs={**attrs, "type": "date"})
    elif kind == "email":
        widget = forms.EmailInput(attrs={**attrs, "autocomplete": "off"})
    elif kind == "phone":
        widget = forms.TextInput(attrs={**attrs, "type": "tel", "autocomplete": "tel"})
    else:
        widget = forms.TextInput(attrs=attrs)
    return forms.CharField(**common, strip=False, widget=widget)


def _type_remaining(event, availability, ticket_type) -> int | None:
    """Seats one more order of ``ticket_type`` could take: the least any of its quotas has."""
    if availability is None:
        return None
    quotas = availability.quotas
    return min(quotas[q].remaining for q in ("capacity", *event.ticket_types[ticket_type])
               if q in quotas)


class CancelTicketsForm(forms.Form):
    """Which seats of an order to give up: a quantity (0 to the number held) per ticket type
    the order holds, none to begin with, so one click never gives up seats unasked. The
    service checks them against the order as stored when it writes."""

    def __init__(self, *args, registration, labels=None, **kwargs):
        """``labels``: the event's typed labels (``Event.ticket_labels``)."""
        super().__init__(*args, **kwargs)
        labels = labels or {}
        self.held = dict(sorted(registration.tickets.items()))
        for ticket_type, quantity in self.held.items():
            self.fields[f"cancel_{ticket_type}"] = forms.IntegerField(
                label=labels.get(ticket_type) or ticket_label(ticket_type), min_value=0,
                max_value=quantity,
                initial=0,
                error_messages={"required": "Enter a number of seats (0 to keep them all).",
                                "invalid": "Enter a whole number of seats.",
                                "max_value": f"Your order holds {quantity} of these.",
                                "min_value": "Enter 0 or more."},
                help_text=f"You hold {quantity}.",
                widget=forms.NumberInput(attrs={"inputmode": "numeric"}))

    def clean(self):
        if not self.errors and not self.tickets():
            raise forms.ValidationError("Choose at least one seat to cancel.")
        return self.cleaned_data

    def tickets(self) -> dict[str, int]:
        """The seats to cancel (type -> quantity), leaving out those kept whole."""
        chosen = {t: self.cleaned_data.get(f"cancel_{t}") or 0 for t in self.held}
        return {t: n for t, n in chosen.items() if n}

    @property
    def is_whole(self) -> bool:
        return self.tickets() == self.held


class CancelPassesForm(forms.Form):
    """Which passes of an order to give up, by name: a box per pass still valid and not
    used at the door (its type, its number and the first answer given for it, such as
    the name on it), none ticked to begin with. The service checks them as it writes."""

    choose = forms.CharField(widget=forms.HiddenInput, initial="passes")
    passes = forms.MultipleChoiceField(
        label="Passes to cancel", widget=forms.CheckboxSelectMultiple,
        error_messages={"required": "Choose at least one pass to cancel.",
                        "invalid_choice": "That pass is not one of this order's passes "
                                          "left to cancel."})

    def __init__(self, *args, passes, names=(), **kwargs):
        """``passes``: the order's (``service.passes``); ``names``: per seat (seat 1 first)
        what to call its pass (the first answer given for it), or empty."""
        super().__init__(*args, **kwargs)
        total = len(passes)
        self.choosable = [p for p in passes if p.is_valid and p.admitted_at is None]
        self.used = [p for p in passes if p.is_valid and p.admitted_at is not None]
        cast(forms.ChoiceField, self.fields["passes"]).choices = [
            (p.pass_id, pass_title(p, passes.index(p), total, names))
            for p in self.choosable]

    @property
    def is_whole(self) -> bool:
        return not self.used and set(self.cleaned_data["passes"]) == {
            p.pass_id for p in self.choosable}

    def pass_ids(self) -> list[str]:
        return list(self.cleaned_data["passes"])


def pass_title(a_pass, index: int, total: int, names) -> str:
    """"Conference, pass 2 of 3: Pavel" (the name: the pass's first answer, if any)."""
    name = names[index] if index < len(names) else ""
    return (f"{a_pass.ticket_label}, pass {index + 1} of {total}"
            + (f": {name}" if name else ""))


def seat_choice(registration, event, passes=None, names=()) -> forms.Form | None:
    """The form asking which seats to cancel, for an order of several confirmed seats: a
    box per pass when its ``passes`` are given, else a quantity per ticket type; None for
    one seat or a request still waiting for its decision (nothing to choose)."""
    if registration.seats > 1 and registration.status != PENDING:
        if passes:
            return CancelPassesForm(passes=passes, names=names)
        return CancelTicketsForm(registration=registration, labels=event.ticket_labels)
    return None


class AnswersForm(forms.Form):
    """A person's answers to the event's questions, for their order as it stands (its
    seats are its passes), with the version they read: the edit is written only if the
    answers are still at that version."""

    version = forms.IntegerField(widget=forms.HiddenInput, min_value=0)

    def __init__(self, *args, event, registration, **kwargs):
        super().__init__(*args, **kwargs)
        self.event = event
        plan = rules.asked(event.questions, registration.tickets, event.ticket_types)
        self.order_questions = list(plan.order)
        self.seats = plan.passes
        for question in self.order_questions:
            self.fields[f"q_{question.id}"] = question_field(question)
        many = len(self.seats) > 1
        for n, (ticket_type, questions) in enumerate(self.seats):
            for question in questions:
                field = question_field(question)
                if many:
                    field.label = f"{field.label}, pass {n + 1}"
                self.fields[f"p{n}_{question.id}"] = field

    @staticmethod
    def initial_from(stored) -> dict:
        """The form's initial values from stored answers (``StoredAnswers`` or None)."""
        if stored is None:
            return {"version": 0}
        initial = {"version": stored.version}
        initial.update({f"q_{k}": _form_value(v) for k, v in stored.answers.items()})
        for n, answers in enumerate(stored.pass_answers):
            initial.update({f"p{n}_{k}": _form_value(v) for k, v in answers.items()})
        return initial

    def question_fields(self):
        return [self[f"q_{q.id}"] for q in self.order_questions]

    def pass_blocks(self):
        many = len(self.seats) > 1
        return [(f"Pass {n + 1} ({ticket_label(t)})" if many else "Your pass",
                 [self[f"p{n}_{q.id}"] for q in questions])
                for n, (t, questions) in enumerate(self.seats) if questions]

    def answers(self) -> dict:
        return {q.id: self.cleaned_data.get(f"q_{q.id}") for q in self.order_questions
                if not _blank_answer(self.cleaned_data.get(f"q_{q.id}"))}

    def pass_answers(self) -> list[dict]:
        return [{q.id: self.cleaned_data.get(f"p{n}_{q.id}") for q in questions
                 if not _blank_answer(self.cleaned_data.get(f"p{n}_{q.id}"))}
                for n, (_, questions) in enumerate(self.seats)]

    def apply_answer_errors(self, refused) -> None:
        apply_answer_errors(self, refused)


def apply_answer_errors(form: forms.Form, refused) -> None:
    """Each of ``InvalidAnswers``' messages next to its question's field (``q_<id>``,
    ``p<n>_<id>``), or above the form when it has no such field."""
    for where, message in refused.errors.items():
        parts = where.split(".")
        name = (f"q_{parts[1]}" if parts[0] == "answers" and len(parts) == 2
                else f"p{parts[1]}_{parts[2]}" if len(parts) == 3 else None)
        form.add_error(name if name in form.fields else None, message)


def _form_value(value):
    """A stored answer as a form field shows it."""
    return rules.value_text(value) if not isinstance(value, (bool, list)) else value
