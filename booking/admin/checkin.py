"""Admin pages for check-in at the door: an event's lists with live counts (and a form to
add one), a list's scan log with its conflicts, and the log as CSV. Thin over the
service, like ``booking/admin/views.py``, whose helpers it shares."""
import csv

from django.contrib import messages
from django.http import Http404, StreamingHttpResponse
from django.shortcuts import redirect, render

from booking import times
from booking.admin import log as admin_log
from booking.entry.exports import Echo, csv_cell
from booking.admin.views import TEMPLATES, domain_errors, event_page, page
from booking.errors import CheckinListNotFound, InvalidBooking
from booking.service.checkin import ENTRANCE_NAME


@domain_errors
def checkin(model_admin, request, event_id):
    service, event, can_change = event_page(model_admin, request, event_id)
    if request.method == "POST":
        add_list(service, request, event)
        return redirect(request.path)
    chosen = request.GET.get("list")
    if chosen:
        found = _list_of(service, event, chosen)
        return render(request, TEMPLATES + "checkin_list.html", page(
            model_admin, request, f"Check-in: {found.name}", event=event,
            checkin_list=service.checkin_list(found.id),
            scans=list(reversed(service.scan_log(found.id, limit=500))),
            conflicts=service.checkin_conflicts(found.id)))
    lists = [service.checkin_list(lst.id) for lst in service.checkin_lists(event.id)]
    return render(request, TEMPLATES + "checkin.html", page(
        model_admin, request, f"Check-in: {event.name}", event=event, lists=lists,
        can_change=can_change, ticket_types=sorted(event.ticket_types),
        entrance_name=ENTRANCE_NAME))


@domain_errors
def export(model_admin, request, event_id):
    service, event, _ = event_page(model_admin, request, event_id, post_action="view")
    found = _list_of(service, event, request.GET.get("list", ""))
    admin_log.record(request, event, admin_log.CHANGE,
                     f"Exported the scan log of {found.name!r} as CSV (nothing changed).")
    return scans_csv(service.scan_log(found.id), event, found)


def _list_of(service, event, list_id):
    """The event's list ``list_id``; another event's answers exactly as a missing one."""
    try:
        found = service.find_checkin_list(list_id)
    except CheckinListNotFound:
        found = None
    if found is None or found.event_id != event.id:
        raise Http404("This check-in list does not exist.")
    return found


def add_list(service, request, event) -> None:
    limit = request.POST.get("occupancy_limit", "").strip()
    types = request.POST.getlist("ticket_types") or None
    try:
        made = service.create_checkin_list(
            event.id, name=request.POST.get("name", ""), ticket_types=types,
            allow_reentry=request.POST.get("allow_reentry") == "on",
            # ASCII digits only: "²" is a digit to str.isdigit but not to int().
            occupancy_limit=int(limit) if limit.isascii() and limit.isdigit()
            else (limit or None))
    except InvalidBooking as refused:
        messages.error(request, refused.message)
        return
    admin_log.record(request, event, admin_log.CHANGE, f"Added the check-in list {made.name!r}.")
    messages.success(request, f"Added the check-in list {made.name!r}.")


def scans_csv(scans, event, checkin_list) -> StreamingHttpResponse:
    """The list's scans, oldest first (an offline double admission: ``conflict`` yes)."""
    writer = csv.writer(Echo(), quoting=csv.QUOTE_ALL)

    def when(moment):
        return times.iso_local(moment, event.time_zone) if moment else ""

    def lines():
        yield writer.writerow(["scanned_at", "direction", "status", "gate", "name",
                               "ticket_type", "pass_id", "first_admitted_at", "first_gate",
                               "offline", "conflict", "nonce"])
        for scan in scans:
            yield writer.writerow([
                when(scan.scanned_at), scan.direction, scan.status, csv_cell(scan.gate or ""),
                csv_cell(scan.attendee_name or ""), scan.ticket_type or "", scan.pass_id or "",
                when(scan.first_admitted_at), csv_cell(scan.first_gate or ""),
                "yes" if scan.offline else "", "yes" if scan.conflict else "", scan.nonce])

    response = StreamingHttpResponse(lines(), content_type="text/csv; charset=utf-8")
    response["Content-Disposition"] = (f'attachment; filename="checkin-{checkin_list.id}.csv"')
    return response
