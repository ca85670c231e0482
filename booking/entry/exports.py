"""The registrations as CSV: the admin's export and the API's (``registrations_csv``),
and the cells both write (formulas defused: ``csv_cell``)."""
import csv

from django.http import StreamingHttpResponse

from booking import times
from booking.models import tickets_label_text
from booking.questions.rules import value_text
from booking.wiring import get_booking_service

# A cell starting with one of these would run as a formula in a spreadsheet.
FORMULA_PREFIXES = ("=", "+", "-", "@", "\t", "\r")


class Echo:
    """A file-like object whose write returns the line, for streaming csv.writer output."""

    def write(self, value):
        return value


def csv_cell(value: str) -> str:
    """Stop spreadsheets from running a cell as a formula (CSV injection)."""
    return "'" + value if value.startswith(FORMULA_PREFIXES) else value


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
