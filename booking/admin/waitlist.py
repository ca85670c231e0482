"""Admin page for an event's waiting list: who is in line, in what order, with what offer;
remove selected people (an offered seat passes to the next in line; each is told by
e-mail). Thin, like
``booking/admin/views.py``, whose helpers it shares."""
from django.contrib import messages
from django.shortcuts import redirect, render
from django.utils import timezone

from booking.admin import log as admin_log
from booking.admin.views import TEMPLATES, domain_errors, event_page, page, seats_or_none
from booking.errors import InvalidBooking, NotWaiting
from booking.models import OFFERED, WAITING


@domain_errors
def waiting_list(model_admin, request, event_id):
    service, event, can_change = event_page(model_admin, request, event_id)
    if request.method == "POST":
        remove_selected(service, request, event)
        return redirect(request.get_full_path())
    entries, place, now = service.waiting_list(event.id), 0, timezone.now()
    rows = []
    for entry in entries:
        place += entry.status == WAITING
        lapsed = entry.status == OFFERED and entry.offer_expires_at <= now
        rows.append((entry, place if entry.status == WAITING else None, lapsed))
    return render(request, TEMPLATES + "waiting_list.html", page(
        model_admin, request, f"Waiting list: {event.name}", event=event, rows=rows,
        can_change=can_change, seats=seats_or_none(service, event.id),
        waiting=sum(1 for e in entries if e.status == WAITING),
        offered=sum(1 for e in entries if e.status == OFFERED)))


def remove_selected(service, request, event):
    emails = request.POST.getlist("selected")
    if request.POST.get("action") != "remove_selected" or not emails:
        messages.warning(request, "Select people and the action to remove them.")
        return
    removed = []
    for email in emails:
        try:
            entry, _ = service.remove_from_waiting_list(event.id, email=email)
        except (NotWaiting, InvalidBooking):
            continue  # left, booked or expired meanwhile
        removed.append(entry.email)  # its e-mail owed in the outbox: the worker sends it
    if removed:
        admin_log.record(request, event, admin_log.CHANGE,
                         f"Removed {len(removed)} from the waiting list: {', '.join(removed)}.")
    if not removed:
        messages.warning(request, "Nobody was removed: they had left the list, booked or "
                                  "their offer had ended meanwhile.")
        return
    messages.success(request, f"Removed {len(removed)} from the waiting list and told them by "
                              "e-mail; any seat held for them was offered to the next in line.")
