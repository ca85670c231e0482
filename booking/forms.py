"""The public signup form: presence and length only; the service owns the real rules.

Its one-time token travels in a hidden input that the view signs and checks (booking.links).
"""
from django import forms

from .validation import EMAIL_MAX_LENGTH, NAME_MAX_LENGTH


class SignupForm(forms.Form):
    name = forms.CharField(
        label="Your name", max_length=NAME_MAX_LENGTH,
        widget=forms.TextInput(attrs={"autocomplete": "name"}),
    )
    email = forms.CharField(
        label="E-mail", max_length=EMAIL_MAX_LENGTH,
        widget=forms.EmailInput(attrs={"autocomplete": "email"}),
        help_text="We send your confirmation and cancellation link here.",
    )

    def apply_error(self, error) -> None:
        """Show a service error next to its field (or above the form)."""
        field = error.field if error.field in ("name", "email") else None
        self.add_error(field, error.message)
