"""Which of Django's request log lines are written (config/settings.py ``LOGGING``).

Django's request logger writes every 4xx answer as a server warning ("Conflict: <path>").
A 409 is the product's refusal ("full", "already registered", a key reused with another
payload, ...): a definite answer it gives by design, thousands a second in a drop, not a
fault of the server. ``SkipRefusals`` drops those records before any handler formats or
writes them; every answer still has its access-log line (gunicorn's, nginx's) and its
metrics (booking/metrics/). Other 4xx answers (a bad request, a tampered link) are logged
as before.
"""
import logging

REFUSAL_STATUS = 409


class SkipRefusals(logging.Filter):
    """A logging filter for ``django.request``: False (not logged) for a refusal's record."""

    def filter(self, record: logging.LogRecord) -> bool:
        return getattr(record, "status_code", None) != REFUSAL_STATUS
