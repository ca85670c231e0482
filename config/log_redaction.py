"""Secrets out of log lines: a registration's link token (``/cancel/<token>/``,
``/bookings/<token>/``, ``/api/v1/registrations/<secret>/...``, an offer's, a waiting-list
place's) and an access code (``?code=...``) are replaced by ``[redacted]`` wherever a
path or URL appears in a line: Django's request logger ("Bad Request: <path>", through
``RedactSecrets``, config/settings.py LOGGING) and gunicorn's access log (its request line
and Referer, config/gunicorn_logging.py). nginx's access log does the same with a map
(config/nginx.conf). The links themselves are unchanged and keep working. docs/security.md.
"""
import logging
import re

REDACTED = "[redacted]"
# A path's start (the line's start, a space, a quote, or after a URL's host), the route's
# fixed part, then the secret segment.
SECRET_SEGMENT = re.compile(
    r"(^|[\s\"'(]|//[^/\s\"']+)"
    r"((?:/api/v1)?/(?:registrations|offers)/"
    r"|/events/[^/?#\s\"']+/(?:booked|answers)/"
    r"|/(?:cancel|bookings|waiting-list/confirm|waiting-list)/)"
    r"([^/?#\s\"']+)")
SECRET_QUERY = re.compile(r"([?&](?:code|token)=)[^&#\s\"']*")


def redact(text: str) -> str:
    """``text`` with every secret of a link in it replaced by ``[redacted]``."""
    if "/" not in text and "=" not in text:
        return text
    text = SECRET_SEGMENT.sub(lambda m: f"{m[1]}{m[2]}{REDACTED}", text)
    return SECRET_QUERY.sub(lambda m: f"{m[1]}{REDACTED}", text)


class RedactSecrets(logging.Filter):
    """A logging filter: the record's message rendered and redacted (its arguments
    dropped), so no handler or formatter sees a secret."""

    def filter(self, record: logging.LogRecord) -> bool:
        try:
            message = record.getMessage()
        except Exception:  # a broken record stays as it is; logging reports it
            return True
        redacted = redact(message)
        if redacted != message:
            record.msg, record.args = redacted, ()
        return True
