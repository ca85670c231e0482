"""Bare ``application/problem+json`` answers (RFC 9457): the shape every API error has,
and the answers given before or beside DRF (``booking/api/fallbacks.py``, the site's
request filters in ``booking/web/middleware.py``), which the API's handler
(``booking/api/problems.py``) words the same way."""
import json
import random

from django.http import HttpResponse

PROBLEM_JSON = "application/problem+json"
TYPE_BASE = "/api/v1/problems/"
API_PREFIX = "/api/"
BODY_TOO_LARGE = (413, "body-too-large", "Request body too large")
TOO_LARGE = "This request body is larger than this API accepts."  # also in config/nginx.conf
BAD_CHARSET = (400, "bad-charset", "Body not UTF-8")
READ_LATE_KIND = (503, "unavailable", "Temporarily unavailable")
UNKNOWN_RETRY_SECONDS = 2


def is_api(request) -> bool:
    """Whether ``request`` is addressed to the JSON API (its errors are problems)."""
    return request.path_info.startswith(API_PREFIX)


def problem_body(kind: tuple, detail: str, **extra) -> dict:
    status, slug, title = kind
    return {"type": TYPE_BASE + slug, "title": title, "status": status, "detail": detail,
            **extra}


def plain_problem(kind: tuple, detail: str) -> HttpResponse:
    """The same problem as a plain Django response, for answers given outside DRF."""
    return HttpResponse(json.dumps(problem_body(kind, detail)), status=kind[0],
                        content_type=PROBLEM_JSON)


def pending_retry_after() -> int:
    """Seconds to wait before asking again about a pending request: jittered around
    ``UNKNOWN_RETRY_SECONDS`` so that clients told at one instant do not all come back at
    the next."""
    return random.randint(UNKNOWN_RETRY_SECONDS - 1, UNKNOWN_RETRY_SECONDS + 1)
