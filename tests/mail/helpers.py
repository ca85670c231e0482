"""The booking worker's outbox pass, run in a test: the web process only records the
e-mails a request owes (an outbox row in the request's own write); the worker sends them."""
from booking.mail import sender as booking_mail
from booking.mail.sender import send_owed
from booking.wiring import mail_sender


def deliver_owed(service=None) -> dict:
    """What the worker's next look at the outbox does: send every e-mail owed so far, each
    once (resends in flight on this process's threads finish first). Returns the outcomes."""
    booking_mail.flush()
    return send_owed(mail_sender(service))
