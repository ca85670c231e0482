"""Admin pages for an event's registrations: search and page through them, cancel selected
ones (each person is e-mailed), export them as CSV. Thin, like ``booking/admin/views.py``,
whose helpers they share."""
from django.contrib import messages
from django.shortcuts import redirect, render

from booking.admin import log as admin_log
from booking.admin.views import (TEMPLATES, domain_errors, event_page, link, page,
                                 seats_or_none, sign, unsign, url)
from booking.entry.exports import registrations_csv
from booking.errors import InvalidBooking, NotRegistered
from booking.organizers.rights import VIEW
from booking.questions.service import answer_rows

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


@domain_errors
def export(model_admin, request, event_id):
    service, event, _ = event_page(model_admin, request, event_id, post_action=VIEW)
    search = request.GET.get("q", "")
    found = service.iter_registrations(event.id, search=search)
    admin_log.record(request, event, admin_log.CHANGE,
                     "Exported registrations as CSV (nothing changed)"
                     + (f", search {search!r}." if search else "."))
    return registrations_csv(found, event)
