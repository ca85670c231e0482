"""Admin page for an event's questions: one row per question (a Django formset: add,
remove, reorder), saved in one version-checked write (``svc.set_questions``): an edit
made from a page read before someone else's change is refused and says so, never written
over it. Answers to a removed question are kept and shown as removed. Thin, like
``booking/admin/views.py``, whose helpers it shares."""
from typing import cast

from django import forms
from django.contrib import messages
from django.shortcuts import redirect, render

from booking.admin import log as admin_log
from booking.admin.views import TEMPLATES, domain_errors, event_page, page
from booking.errors import InvalidBooking, StaleEdit
from booking.models import ticket_label
from booking.questions.rules import KINDS

KIND_LABELS = {"text": "Text (one line)", "long_text": "Text (several lines)",
               "choice": "One of several choices", "multiple_choice": "Several choices",
               "boolean": "Yes / no (a tick box)", "number": "Number", "date": "Date",
               "email": "E-mail address", "phone": "Phone number"}


class QuestionForm(forms.Form):
    id = forms.SlugField(max_length=40, label="Id", help_text="Lowercase letters, digits, "
                         "'-' or '_': the CSV column and the API's key. Keep it when editing.")
    label = forms.CharField(max_length=200)
    # Initially "text", what a blank row posts: a row left blank is no change (left out).
    kind = forms.ChoiceField(choices=[(k, KIND_LABELS[k]) for k in KINDS], initial="text")
    required = forms.BooleanField(required=False)
    per_pass = forms.BooleanField(required=False, label="Per pass",
                                  help_text="Asked of each seat's attendee (name on the pass).")
    choices = forms.CharField(required=False, widget=forms.Textarea(attrs={"rows": 3}),
                              help_text="Choice questions: one choice per line.")
    help_text = forms.CharField(required=False, max_length=500)
    ticket_types = forms.MultipleChoiceField(
        required=False, widget=forms.CheckboxSelectMultiple,
        help_text="Asked only of these ticket types (none ticked: every type).")

    def __init__(self, *args, ticket_types=(), label=ticket_label, **kwargs):
        """``label``: a type's label as people read it (the event's ``label``)."""
        super().__init__(*args, **kwargs)
        cast(forms.ChoiceField, self.fields["ticket_types"]).choices = [(t, label(t)) for t in ticket_types]
        if len(ticket_types) < 2:
            del self.fields["ticket_types"]

    def question(self) -> dict:
        data = self.cleaned_data
        return {"id": data["id"], "label": data["label"], "kind": data["kind"],
                "required": data["required"], "per_pass": data["per_pass"],
                "choices": [c.strip() for c in data["choices"].splitlines() if c.strip()],
                "help_text": data["help_text"], "ticket_types": data.get("ticket_types") or []}


BLANK_ROWS = 3  # new questions offered at once; "More blank rows" adds as many again
QuestionFormSet = forms.formset_factory(QuestionForm, extra=BLANK_ROWS, can_delete=True,
                                        can_order=True, max_num=60, validate_max=True)


class VersionForm(forms.Form):
    version = forms.IntegerField(widget=forms.HiddenInput, min_value=0)


def initial_rows(event) -> list[dict]:
    return [{**q.as_dict(), "choices": "\n".join(q.choices), "ORDER": n + 1}
            for n, q in enumerate(event.questions)]


@domain_errors
def questions(model_admin, request, event_id):
    service, event, can_change = event_page(model_admin, request, event_id)
    types = sorted(event.ticket_types)
    status = 200
    if request.method == "POST" and "more_rows" in request.POST:
        return _more_rows(model_admin, request, event, types, can_change)
    if request.method == "POST":
        formset = QuestionFormSet(request.POST, form_kwargs={"ticket_types": types, "label": event.label})
        version = VersionForm(request.POST)
        if formset.is_valid() and version.is_valid():
            # In the Order field's order, without the rows ticked for deletion and the
            # blank new rows.
            kept = [form.question() for form in formset.ordered_forms]
            try:
                service.set_questions(event.id, kept,
                                      expected_version=version.cleaned_data["version"])
            except StaleEdit as stale:
                messages.error(request, stale.message + " Nothing was saved: here they are "
                                                        "as they stand now.")
                return redirect(request.get_full_path())
            except InvalidBooking as error:
                # The formset's own errors (Django keeps them there; no public setter).
                formset._non_form_errors = formset.error_class(  # type: ignore[attr-defined]
                    [_where(error, kept) + error.message])
                status = 400
            else:
                admin_log.record(request, event, admin_log.CHANGE,
                                 f"Set {len(kept)} question(s): "
                                 f"{', '.join(q['id'] for q in kept) or 'none'}.")
                messages.success(request, f"Saved {len(kept)} question"
                                          f"{'s' if len(kept) != 1 else ''}.")
                return redirect(request.get_full_path())
        else:
            status = 400
    else:
        formset = QuestionFormSet(initial=initial_rows(event),
                                  form_kwargs={"ticket_types": types, "label": event.label})
        version = VersionForm(initial={"version": event.questions_version})
    return render(request, TEMPLATES + "questions.html", page(
        model_admin, request, f"Questions: {event.name}", event=event, formset=formset,
        version=version, can_change=can_change), status=status)


def _more_rows(model_admin, request, event, types, can_change):
    """The page again as typed, with ``BLANK_ROWS`` more blank rows and nothing saved (no
    script needed): the formset's total grows, the rows typed so far keep their values."""
    data = request.POST.copy()
    key = f"{QuestionFormSet().prefix}-TOTAL_FORMS"
    try:
        total = int(data.get(key, ""))
    except ValueError:
        total = len(event.questions) + BLANK_ROWS
    data[key] = str(min(max(total, 0) + BLANK_ROWS, QuestionFormSet.max_num))
    formset = QuestionFormSet(data, form_kwargs={"ticket_types": types, "label": event.label})
    version = VersionForm(data)
    return render(request, TEMPLATES + "questions.html", page(
        model_admin, request, f"Questions: {event.name}", event=event, formset=formset,
        version=version, can_change=can_change, adding_rows=True))


def _where(error, kept) -> str:
    """"Question 2 (diet): " for an error the service names by ``questions.<n>.<field>``."""
    parts = (error.field or "").split(".")
    if len(parts) >= 2 and parts[0] == "questions" and parts[1].isdigit() \
            and int(parts[1]) < len(kept):
        return f"Question {int(parts[1]) + 1} ({kept[int(parts[1])]['id']}): "
    return ""
