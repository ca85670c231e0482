"""Admin pages for an event's registrations: search and page through them, cancel selected
ones (each person is e-mailed), export them as CSV. Thin, like ``booking/admin/views.py``,
whose helpers they share."""
import csv

from django.contrib import messages
from django.http import StreamingHttpResponse
from django.shortcuts import redirect, render

from booking import times
from booking.admin import log as admin_log
from booking.admin.views import (TEMPLATES, domain_errors, event_page, link, page,
                                 seats_or_none, sign, unsign, url)
from booking.errors import InvalidBooking, NotRegistered
from booking.organizers.rights import VIEW
from booking.models import tickets_label_text
from booking.questions.rules import value_text
from booking.questions.service import answer_rows
from booking.wiring import get_booking_service

FORMULA_PREFIXES = ("=", "+", "-", "@", "\t", "\r")

ORDERS = {"email": "E-mail", "time": "Registered at (oldest first)",
          "-time": "Registered at (newest first)"}


@domain_errors
def registrations(model_admin, request, event_id):
    service, event, can_change = event_page(model_admin, request, event_id)
    if request.method == "POST":
        if confirming(request):
            return confirm_cancel(model_admin, request, service, event)
        cancel_selected(service, request, event)
        return redirect(request.get_full_path())
    search = request.GET.get("q", "").strip()
    order = request.GET.get("o", "email")
    order = order if order in ORDERS else "email"
    after = unsign(request, request.GET.get("after"))
    found, next_after = service.registrations_page(
        event.id, after=after, limit=model_admin.list_per_page, search=search, order=order)
    return render(request, TEMPLATES + "registrations.html", page(
        model_admin, request, f"Registrations: {event.name}", event=event,
        registrations=found, search=search, can_change=can_change, order=order,
        order_label=ORDERS[order],
        time_sort_url=link(q=search, o="-time" if order == "time" else "time"),
        email_sort_url=link(q=search),
        seats=seats_or_none(service, event.id), tally=service.tally_registrations(event.id),
        answer_summaries=answer_summaries(service, event, found),
        questions_url=url("questions", event.id),
        decider=service.decider_lag() if event.strategy == "streams" else None,
        export_url=url("export", event.id) + link(q=search),
        next_url=link(q=search, o=order if order != "email" else "",
                      after=sign(next_after)) if next_after is not None else "",
        first_url=link(q=search, o=order if order != "email" else "") if after else ""))


def answer_summaries(service, event, found) -> dict[str, str]:
    """Registration id -> its answers in one line ("Label: answer; ..."), for the page's
    Answers column (one query of the event's answers; none for an event without
    questions)."""
    if not event.questions_version:
        return {}
    answers = service.answers_for_event(event.id)
    summaries = {}
    for registration in found:
        order, passes = answer_rows(event.questions, answers.get(registration.registration_id))
        parts = [f"{r.label}{' (removed)' if r.removed else ''}: {r.text}" for r in order]
        parts += [f"Pass {n + 1}, {r.label}: {r.text}" for n, rows in enumerate(passes)
                  for r in rows]
        summaries[registration.registration_id] = "; ".join(parts)
    return summaries


def confirming(request) -> bool:
    """A cancel action with a selection, not yet confirmed: ask first."""
    return (request.POST.get("action") == "cancel_selected" and "confirm" not in request.POST
            and bool(request.POST.getlist("selected")))


def confirm_cancel(model_admin, request, service, event):
    selected = []
    for email in request.POST.getlist("selected"):
        try:
            registration = service.find_registration(event.id, email=email)
        except InvalidBooking:
            registration = None
        if registration is not None:
            selected.append(registration)
    return render(request, TEMPLATES + "cancel_confirmation.html", page(
        model_admin, request, "Cancel registrations?", event=event, selected=selected,
        back_url=request.get_full_path()))


def cancel_selected(service, request, event):
    if request.POST.get("action") != "cancel_selected":
        messages.warning(request, "Choose an action.")
        return
    emails = request.POST.getlist("selected")
    if not emails:
        messages.warning(request, "Select registrations to cancel.")
        return
    freed = []
    for email in emails:
        try:
            removed = service.cancel(event.id, email=email)
            freed.append(removed.email)  # its notice owed in the outbox: the worker sends it
        except (NotRegistered, InvalidBooking):
            pass  # cancelled meanwhile, or not an e-mail: nothing to free
    if freed:
        admin_log.record(request, event, admin_log.CHANGE,
                         f"Cancelled {len(freed)} registration(s): {', '.join(freed)}.")
    cancelled = len(freed)
    messages.success(request, f"Cancelled {cancelled} registration{'s' if cancelled != 1 else ''}; "
                              "their seats are free again and each person has been e-mailed.")


class Echo:
    """A file-like object whose write returns the line, for streaming csv.writer output."""

    def write(self, value):
        return value


def csv_cell(value: str) -> str:
    """Stop spreadsheets from running a cell as a formula (CSV injection)."""
    return "'" + value if value.startswith(FORMULA_PREFIXES) else value


@domain_errors
def export(model_admin, request, event_id):
    service, event, _ = event_page(model_admin, request, event_id, post_action=VIEW)
    search = request.GET.get("q", "")
    found = service.iter_registrations(event.id, search=search)
    admin_log.record(request, event, admin_log.CHANGE,
                     "Exported registrations as CSV (nothing changed)"
                     + (f", search {search!r}." if search else "."))
    return registrations_csv(found, event)


def answer_columns(event, answers: dict) -> list[tuple[str, str, bool]]:
    """(header, question id, per pass) per column: a column per question, in the event's
    order, then one per question since removed that some order answered."""
    columns = [(q.label, q.id, q.per_pass) for q in event.questions]
    current = {q.id for q in event.questions}
    removed: dict[tuple[str, bool], str] = {}
    for stored in answers.values():
        for qid in stored.answers:
            if qid not in current:
                removed.setdefault((qid, False), stored.labels.get(qid, qid))
        for each in stored.pass_answers:
            for qid in each:
                if qid not in current:
                    removed.setdefault((qid, True), stored.labels.get(qid, qid))
    return columns + [(f"{label} (question removed)", qid, per_pass)
                      for (qid, per_pass), label in sorted(removed.items())]


def answer_cells(columns, stored) -> list[str]:
    """One cell per column; a per-pass question's answers for each pass, "Pass 1: ...
    | Pass 2: ..."."""
    cells = []
    for _, qid, per_pass in columns:
        if stored is None:
            cells.append("")
        elif per_pass:
            cells.append(" | ".join(f"Pass {n + 1}: {value_text(each[qid])}"
                                    for n, each in enumerate(stored.pass_answers)
                                    if qid in each))
        else:
            cells.append(value_text(stored.answers[qid]) if qid in stored.answers else "")
    return [csv_cell(cell) for cell in cells]


def registrations_csv(found, event) -> StreamingHttpResponse:
    """The registrations as a streamed CSV file (the admin's and the API's export); an
    event with questions adds a column per question (``answer_columns``)."""
    # Every cell quoted, so a ';'-separated locale cannot split a name or an address.
    writer = csv.writer(Echo(), quoting=csv.QUOTE_ALL)
    answers = get_booking_service().answers_for_event(event.id) \
        if event.questions_version else {}
    columns = answer_columns(event, answers) if event.questions_version else []

    # An event with orders: a row per order, its tickets as people read them (the types'
    # labels), its seats and a column per ticket type headed by its label (docs/admin.md);
    # a plain event keeps its three columns.
    types = sorted(event.ticket_types) if event.offers_orders else []

    def lines():
        yield writer.writerow(["name", "email", "registered_at"]
                              + (["tickets", "seats", *(csv_cell(event.label(t)) for t in types)]
                                 if types else [])
                              + [csv_cell(header) for header, _, _ in columns])
        for registration in found:
            row = [csv_cell(registration.name), csv_cell(registration.email),
                   times.iso_local(registration.registered_at, event.time_zone)]
            if types:
                tickets = registration.tickets
                row += [csv_cell(tickets_label_text(tickets, event.ticket_labels)),
                        registration.seats,
                        *(tickets.get(name, 0) for name in types)]
            if columns:
                row += answer_cells(columns, answers.get(registration.registration_id))
            yield writer.writerow(row)

    response = StreamingHttpResponse(lines(), content_type="text/csv; charset=utf-8")
    response["Content-Disposition"] = f'attachment; filename="registrations-{event.id}.csv"'
    return response
