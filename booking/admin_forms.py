"""Admin forms for events. They check shapes; the service decides what is valid."""
from django import forms
from django.conf import settings

from . import validation
from .errors import BookingError, InvalidBooking
from .strategies import GUARDED, STRATEGIES
from .validation import EVENT_NAME_MAX_LENGTH

DATETIME_LOCAL = "%Y-%m-%dT%H:%M"


class EventForm(forms.Form):
    name = forms.CharField(max_length=EVENT_NAME_MAX_LENGTH)
    starts_at = forms.DateTimeField(
        label="Start", required=False,
        widget=forms.DateTimeInput(attrs={"type": "datetime-local"}, format=DATETIME_LOCAL),
        help_text="Optional. In the site's time zone.")
    capacity = forms.IntegerField(min_value=0, help_text="Seats. Never below the confirmed count.")

    def clean_starts_at(self):
        """The service's range check, here so a far-off date is never shown back in UTC."""
        try:
            return validation.clean_starts_at(self.cleaned_data["starts_at"])
        except InvalidBooking as error:
            raise forms.ValidationError(error.message) from None

    def show_error(self, error: BookingError) -> None:
        """Put a domain error next to its field, or above the form."""
        field = error.field if error.field in self.fields and error.field != "version" else None
        self.add_error(field, error.message)

    def disable(self) -> None:
        for field in self.fields.values():
            field.disabled = True


class EventAddForm(EventForm):
    strategy = forms.ChoiceField(help_text="How seats are guarded. Cannot be changed later.")

    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        self.fields["strategy"].choices = [
            (name, f"{name}: {STRATEGIES[name].description}") for name in GUARDED]
        default = settings.BOOKING_DEFAULT_STRATEGY
        self.fields["strategy"].initial = default if default in GUARDED else GUARDED[0]


class EventChangeForm(EventForm):
    # The version the organizer read: the save is refused if the event moved on since.
    version = forms.IntegerField(widget=forms.HiddenInput, min_value=1)

    @classmethod
    def for_event(cls, event):
        return cls(initial={"name": event.name, "starts_at": event.starts_at,
                            "capacity": event.capacity, "version": event.version})
