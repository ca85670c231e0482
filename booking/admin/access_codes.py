"""Admin page for an event's access codes: the codes with their uses, a form creating one
given code or many generated ones, revoking selected codes, and a CSV of the codes. Thin,
like ``booking/admin/views.py``, whose helpers it shares (the organizer's scope included)."""
import csv

from django import forms
from django.contrib import messages
from django.http import HttpResponse
from django.shortcuts import redirect, render
from django.utils import timezone

from booking.admin import log as admin_log
from booking.admin.views import TEMPLATES, domain_errors, event_page, page
from booking.errors import InvalidAccessCode, InvalidBooking
from booking.service.access_codes import MAX_CODES_PER_CALL, weak_code_warning


class AccessCodeForm(forms.Form):
    code = forms.CharField(required=False, max_length=32, label="Code",
                           help_text="Leave empty to generate codes.")
    count = forms.IntegerField(required=False, min_value=1, max_value=MAX_CODES_PER_CALL,
                               initial=1, label="How many to generate")
    max_uses = forms.IntegerField(min_value=1, initial=1, label="Orders per code")
    reserved_seats = forms.IntegerField(required=False, min_value=0, initial=0,
                                        label="Seats reserved per code",
                                        help_text="Held for the code's holders until it "
                                                  "ends (or is used up or revoked).")
    valid_until = forms.DateTimeField(required=False, label="Valid until",
                                      help_text="Empty: no end. In the site's time zone.",
                                      widget=forms.DateTimeInput(attrs={"type": "datetime-local"}))

    def __init__(self, *args, event, **kwargs):
        super().__init__(*args, **kwargs)
        if event.offers_orders:
            self.fields["ticket_types"] = forms.MultipleChoiceField(
                required=False, choices=[(t, t) for t in sorted(event.ticket_types)],
                widget=forms.CheckboxSelectMultiple, label="Ticket types it unlocks",
                help_text="None ticked: every type.")


@domain_errors
def access_codes(model_admin, request, event_id):
    service, event, can_change = event_page(model_admin, request, event_id)
    form = AccessCodeForm(event=event)
    if request.method == "POST" and request.POST.get("action") == "revoke_selected":
        revoke_selected(service, request, event)
        return redirect(request.get_full_path())
    if request.method == "POST":
        form = AccessCodeForm(request.POST, event=event)
        if form.is_valid() and create(service, request, event, form):
            return redirect(request.get_full_path())
    codes, now = service.access_codes(event.id), timezone.now()
    return render(request, TEMPLATES + "access_codes.html", page(
        model_admin, request, f"Access codes: {event.name}", event=event, form=form,
        can_change=can_change, rows=[(code, code.status(now)) for code in codes]))


def create(service, request, event, form) -> bool:
    data = form.cleaned_data
    given = (data.get("code") or "").strip()
    try:
        made = service.create_access_codes(
            event.id, codes=[given] if given else None, count=data.get("count") or 1,
            max_uses=data["max_uses"], valid_until=data.get("valid_until"),
            ticket_types=data.get("ticket_types") or None,
            reserved_seats=data.get("reserved_seats") or 0)
    except InvalidBooking as error:
        form.add_error(error.field if error.field in form.fields else None, error.message)
        return False
    names = ", ".join(code.code for code in made)
    admin_log.record(request, event, admin_log.CHANGE, f"Created access codes: {names}.")
    messages.success(request, f"Created {len(made)} access code{'s' if len(made) != 1 else ''}.")
    for code in made if given else ():
        warning = weak_code_warning(code.code, event_name=event.name)
        if warning:
            messages.warning(request, warning)
    return True


def revoke_selected(service, request, event):
    revoked = []
    for code in request.POST.getlist("selected"):
        try:
            revoked.append(service.revoke_access_code(event.id, code).code)
        except InvalidAccessCode:
            continue
    if not revoked:
        messages.warning(request, "Select codes and the action to revoke them.")
        return
    admin_log.record(request, event, admin_log.CHANGE, f"Revoked access codes: {', '.join(revoked)}.")
    messages.success(request, f"Revoked {len(revoked)}: orders holding them keep their seats.")


@domain_errors
def export(model_admin, request, event_id):
    """The event's codes as CSV (code, uses, limit, valid until, types, status)."""
    service, event, _ = event_page(model_admin, request, event_id)
    response = HttpResponse(content_type="text/csv; charset=utf-8")
    response["Content-Disposition"] = f'attachment; filename="access-codes-{event.id}.csv"'
    writer, now = csv.writer(response), timezone.now()
    writer.writerow(["code", "uses", "max_uses", "valid_until", "ticket_types", "status"])
    for code in service.access_codes(event.id):
        writer.writerow([code.code, code.uses, code.max_uses,
                         code.valid_until.isoformat() if code.valid_until else "",
                         " ".join(code.ticket_types), code.status(now)])
    return response
