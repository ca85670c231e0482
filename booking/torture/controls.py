"""Controls: collaborators built by the torture run and the tests, never by settings.

``ForgetfulRequestLog`` writes no request row and reads none, so bookings and
cancellations carry no record of their request: repeats run again and reused ids run
with their new content. ``CarelessMailSender`` sends e-mails without the atomic counter,
so senders that see the same outbox row at once both send it. The checkers must catch
both.
"""
from booking.mail import SENT, MailSender
from booking.requests import RequestLog


class ForgetfulRequestLog(RequestLog):
    def ops(self, request, registration):
        kind = "confirmation" if request.operation == "book" else "cancellation"
        return self.outbox.ops(kind, registration, at=int(request.at))

    def answer(self, request, row):
        return None

    def answer_refusal(self, request, cancelled, index):
        return None

    def recall(self, request):
        return None

    def reads(self, request):
        return []


class CarelessMailSender(MailSender):
    """Sends every owed e-mail it sees, without claiming it with the atomic counter."""

    def send(self, message, *, event=None, retry_failed=False):
        self._deliver(message, event or self.events(message["event_id"]))
        self.outbox.done(message["message_id"])
        return SENT
