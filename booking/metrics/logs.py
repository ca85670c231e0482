"""Structured logs: one JSON object per line (``LOG_JSON=true``).

Each line carries the HTTP request's id (``http_request_id``: set by
``booking.web.metrics.RequestIdMiddleware``) and, inside a booking or a cancellation, the
booking's own request id (``request_id``: the signup form's one-time token, the id that
makes a repeat answer the same registration), so one booking's lines can be found across
the web tier's hosts. Extra fields come from ``logger.info(..., extra={"fields": {...}})``.
"""
import contextvars
import json
import logging
from contextlib import contextmanager
from datetime import datetime, timezone

http_request_id: contextvars.ContextVar = contextvars.ContextVar("http_request_id",
                                                                 default=None)
booking_request_id: contextvars.ContextVar = contextvars.ContextVar("booking_request_id",
                                                                    default=None)


@contextmanager
def bound(variable: contextvars.ContextVar, value):
    """``variable`` is ``value`` inside the block."""
    token = variable.set(value)
    try:
        yield
    finally:
        variable.reset(token)


class JsonFormatter(logging.Formatter):
    def format(self, record: logging.LogRecord) -> str:
        entry = {
            "time": datetime.fromtimestamp(record.created, timezone.utc).isoformat(
                timespec="milliseconds"),
            "level": record.levelname,
            "logger": record.name,
            "message": record.getMessage(),
        }
        for key, variable in (("http_request_id", http_request_id),
                              ("request_id", booking_request_id)):
            value = variable.get()
            if value:
                entry[key] = value
        fields = getattr(record, "fields", None)
        if isinstance(fields, dict):
            entry.update(fields)
        if record.exc_info:
            entry["exception"] = self.formatException(record.exc_info)
        return json.dumps(entry, default=str)
