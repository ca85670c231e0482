"""Controls: collaborators built by the torture run and the tests, never by settings.

``ForgetfulRequestLog`` writes no request row and reads none, so bookings and
cancellations carry no record of their request: repeats run again and reused ids run
with their new content. The checkers must catch it.
"""
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
