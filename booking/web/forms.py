"""The public signup form: presence and length here; the rules themselves are the service's
(booking.validation), checked here too so that every field's error shows at once.

Its one-time token travels in a hidden input that the view signs and checks (booking/web/tokens.py).
"""
from django import forms

from booking import validation
from booking.errors import InvalidBooking
from booking.models import ticket_label
from booking.validation import EMAIL_MAX_LENGTH, NAME_MAX_LENGTH


class SignupForm(forms.Form):
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

    def __init__(self, *args, event=None, availability=None, **kwargs):
        """With an ``event`` that sells orders (docs/orders.md), a quantity per ticket type,
        each labelled with the seats its quotas have left (``availability``)."""
        super().__init__(*args, **kwargs)
        self.ticket_types = sorted(event.ticket_types) if event and event.offers_orders else []
        single = len(self.ticket_types) == 1
        for ticket_type in self.ticket_types:
            left = _type_remaining(event, availability, ticket_type)
            self.fields[f"qty_{ticket_type}"] = forms.IntegerField(
                label=event.label(ticket_type),
                min_value=0, max_value=event.max_per_order, initial=1 if single else 0,
                error_messages={"required": "Enter a number of tickets (0 for none).",
                                "invalid": "Enter a whole number of tickets."},
                help_text=(f"{left} left. " if left is not None else "")
                + f"Up to {event.max_per_order} seats per order in all.",
                widget=forms.NumberInput(attrs={"inputmode": "numeric"}))
        for ticket_type, text in (event.ticket_descriptions.items() if self.ticket_types else ()):
            field = self.fields[f"qty_{ticket_type}"]  # the organizer's sentence first
            field.help_text = f"{text} {field.help_text}"

    def tickets(self) -> dict[str, int] | None:
        """The order's tickets (type -> quantity), or None for an event without types."""
        if not self.ticket_types:
            return None
        chosen = {t: self.cleaned_data.get(f"qty_{t}") or 0 for t in self.ticket_types}
        return {t: n for t, n in chosen.items() if n}

    def ticket_fields(self):
        return [self[f"qty_{t}"] for t in self.ticket_types]

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
        field = error.field if error.field in ("name", "email") else None
        self.add_error(field, error.message)


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
