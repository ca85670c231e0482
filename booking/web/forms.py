"""The public signup form: presence and length here; the rules themselves are the service's
(booking.validation), checked here too so that every field's error shows at once.

Its one-time token travels in a hidden input that the view signs and checks (booking/web/tokens.py).
"""
from django import forms

from booking import validation
from booking.errors import InvalidBooking
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
