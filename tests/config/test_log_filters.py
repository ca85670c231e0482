"""Refusals are answers, not server warnings: Django's request logger writes no line for
a 409 (config/log_filters.py, wired in config/settings.py LOGGING); other 4xx still."""
import logging

from django.http import HttpResponse
from django.test import RequestFactory
from django.utils.log import log_response


def _logged(caplog, status: int, reason: str) -> list[logging.LogRecord]:
    request = RequestFactory().post("/api/v1/events/e1/registrations/")
    with caplog.at_level(logging.WARNING):
        log_response("%s: %s", reason, request.path, response=HttpResponse(status=status),
                     request=request)
    return [r for r in caplog.records if r.name == "django.request"]


def test_request_log__a_refusal_writes_no_warning(caplog):
    assert _logged(caplog, 409, "Conflict") == []


def test_request_log__a_bad_request_is_still_logged(caplog):
    (record,) = _logged(caplog, 400, "Bad Request")

    assert record.getMessage() == "Bad Request: /api/v1/events/e1/registrations/"
