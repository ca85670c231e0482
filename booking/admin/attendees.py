"""Add an attendee by hand from an event's registrations page (the desk, a phone call): a
form that books through the service, so capacity, quotas, seats per order and one person
once hold exactly as for a signup. With an e-mail address the person gets the usual
confirmation; without one they are registered under a generated address on a reserved
domain that is never mailed (``validation.placeholder_email``, docs/admin.md)."""
from django.contrib import messages
from django.shortcuts import redirect, render

from booking import links, validation
from booking.admin.views import TEMPLATES, domain_errors, event_page, page, url
from booking.errors import AlreadyRegistered, BookingError
from booking.organizers.rights import CHANGE
from booking.entry import forms as tokens
from booking.entry.forms import SignupForm


class AttendeeForm(SignupForm):
    """The signup form's fields (name, tickets per type, access code, the event's questions),
    the e-mail optional, its texts addressed to the organizer filling it in for someone."""

    def __init__(self, *args, event, **kwargs):
        # Every ticket type, those bookable only with a code too (the code is still needed).
        super().__init__(*args, event=event, unlocked=event.code_only_types, **kwargs)
        for ticket_type in event.code_only_types:
            if f"qty_{ticket_type}" in self.fields:  # the bound field copied the label
                bound = self[f"qty_{ticket_type}"]
                bound.label = bound.field.label = f"{bound.field.label} (needs an access code)"
        name = self.fields["name"]
        name.label = "Attendee's name"
        name.error_messages["required"] = "Enter the attendee's name."
        email = self.fields["email"]
        email.required = False
        email.label = "Attendee's e-mail (optional)"
        email.help_text = ("Their confirmation and cancellation link go here. Empty: the "
                           "attendee is registered without one and nothing is mailed.")
        code = self.fields["access_code"]
        code.help_text = ("A code the attendee was given, if their tickets need one "
                          "(letters and digits; any case); it is used as on the signup form.")

    def pass_blocks(self):
        return [("The attendee's pass" if title == "Your pass" else title, fields)
                for title, fields in super().pass_blocks()]

    def clean_email(self):
        typed = self.cleaned_data["email"].strip()
        return self._check(validation.clean_typed_email, typed) if typed else ""


@domain_errors
def add_attendee(model_admin, request, event_id):
    service, event, _ = event_page(model_admin, request, event_id, action=CHANGE)
    form = AttendeeForm(request.POST or None, event=event,
                        availability=service.availability(event.id))
    token = request.POST.get("token") or tokens.new_form_token(event.id)
    if request.method == "POST" and form.is_valid():
        try:  # a resubmitted form (same token) answers the same booking, never a second
            request_id = tokens.request_id_from_form_token(token, event.id)
        except links.BadLink:
            request_id, token = None, tokens.new_form_token(event.id)
            form.add_error(None, "This form has expired. Please check it and save again.")
        if request_id is not None:
            added = _book(service, event, form, request_id)
            if added is not None:
                messages.success(request, f"Added {added.name} "
                                 f"({added.seats} seat{'s' if added.seats != 1 else ''}).")
                return redirect(url("registrations", event.id))
    return render(request, TEMPLATES + "add_attendee.html", page(
        model_admin, request, f"Add an attendee: {event.name}", event=event, form=form,
        token=token, back_url=url("registrations", event.id)))


def _book(service, event, form, request_id):
    """The registration booked, or None with the refusal on the form (nothing stored)."""
    email = form.cleaned_data["email"] or validation.placeholder_email()
    try:
        registration = service.book(event.id, name=form.cleaned_data["name"], email=email,
                                    request_id=request_id, tickets=form.tickets(),
                                    access_code=form.code(), answers=form.answers(),
                                    pass_answers=form.pass_answers())
    except AlreadyRegistered:
        form.add_error("email", "This address is already registered for the event.")
        return None
    except BookingError as error:  # full, a quota full, bad tickets, the store busy
        form.apply_error(error)
        return None
    # A confirmation is owed in the outbox row the booking wrote: the booking worker sends it.
    return registration
