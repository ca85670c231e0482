"""The signup form's one-time token, under its earlier name (the harness's benchmarks
import it here): ``booking/entry/forms.py``."""
from booking.entry.forms import (CANCEL_FORM_SALT, FORM_SALT, new_form_token,
                                 request_id_from_form_token)

__all__ = ["CANCEL_FORM_SALT", "FORM_SALT", "new_form_token", "request_id_from_form_token"]
