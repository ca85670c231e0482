"""The confirmation e-mail. Sending is best effort: a booking never depends on it."""
import logging

from django.core.mail import send_mail
from django.template.loader import render_to_string

logger = logging.getLogger(__name__)


def send_confirmation(*, event, registration, cancel_url: str, to: str | None = None) -> bool:
    """E-mail the booking and its cancellation link to ``to`` (the address as typed; default
    the stored one); return False (and log) on failure."""
    context = {"event": event, "registration": registration, "cancel_url": cancel_url}
    subject = render_to_string("booking/email/confirmation_subject.txt", context)
    body = render_to_string("booking/email/confirmation.txt", context)
    try:
        send_mail(" ".join(subject.split()), body, None, [to or registration.email])
    except Exception:  # any backend failure: SMTP errors, timeouts, refused connections
        logger.exception("Could not send the confirmation e-mail for event %s", event.id)
        return False
    return True
