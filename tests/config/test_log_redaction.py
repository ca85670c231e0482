"""Secrets of links out of log lines (the fourth round, F10): ``config.log_redaction``
for Django's request logger and gunicorn's access log (served: tests/concurrency/
test_served_edges.py)."""
import logging

import pytest

from config.log_redaction import RedactSecrets, redact


@pytest.mark.parametrize("line, expected", [
    ("Bad Request: /cancel/abc.DEF-1:xyz/", "Bad Request: /cancel/[redacted]/"),
    ('"GET /api/v1/registrations/s3cr3t/answers/ HTTP/1.1" 404',
     '"GET /api/v1/registrations/[redacted]/answers/ HTTP/1.1" 404'),
    ("GET /api/v1/offers/s3cr3t/accept/", "GET /api/v1/offers/[redacted]/accept/"),
    ("/events/e1/booked/tok/passes/", "/events/e1/booked/[redacted]/passes/"),
    ("/events/e1/answers/tok/", "/events/e1/answers/[redacted]/"),
    ("/waiting-list/confirm/tok/", "/waiting-list/confirm/[redacted]/"),
    ("/waiting-list/tok/", "/waiting-list/[redacted]/"),
    ("https://example.com/bookings/tok/", "https://example.com/bookings/[redacted]/"),
    ("/events/e1/?code=SPEAKER-7Q2K&x=1", "/events/e1/?code=[redacted]&x=1"),
    # Not secrets: left as they are.
    ("/api/v1/events/e1/registrations/export/", "/api/v1/events/e1/registrations/export/"),
    ("/events/e1/waiting-list/", "/events/e1/waiting-list/"),
])
def test_redact__secret_segments_and_codes_only(line, expected):
    assert redact(line) == expected


def test_filter__django_request_log_record_redacted():
    record = logging.LogRecord("django.request", logging.WARNING, __file__, 1, "%s: %s",
                               ("Bad Request", "/cancel/tok123/"), None)

    assert RedactSecrets().filter(record) is True
    assert record.getMessage() == "Bad Request: /cancel/[redacted]/"


def test_settings__every_console_line_goes_through_the_filter(settings):
    assert "redact_secrets" in settings.LOGGING["handlers"]["console"]["filters"]
