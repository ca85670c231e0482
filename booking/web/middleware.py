"""Request filters that run before anything reads a request body."""
import codecs
import logging
import re
import secrets
import time

from django.utils.http import parse_header_parameters

from booking.entry import problem_json as problems
from booking.entry.error_pages import BUSY_RETRY_SECONDS, error_page
from booking.wiring import web_settings

MULTIPART_REFUSED = "This site accepts only plain forms: file uploads are not accepted."
CHARSET_REFUSED = "Please send forms encoded as UTF-8."
TOO_LARGE = "This request is larger than this site accepts."
WAITED_TOO_LONG = ("The booking system was too busy to take your request in time. Nothing "
                   "was booked or changed: please send it again in a few seconds.")
API_WAITED_TOO_LONG = ("This request waited too long before it could run, so it was not run: "
                       "nothing was written. Send it again (with the same Idempotency-Key) "
                       "after Retry-After seconds.")
logger = logging.getLogger(__name__)


# What the API answers instead of the page (problem+json), by the page's status.
API_REFUSALS = {413: (problems.BODY_TOO_LARGE, problems.TOO_LARGE),
                400: (problems.BAD_CHARSET, "Please send JSON bodies encoded as UTF-8.")}


def refusal(request, message: str, status: int):
    if problems.is_api(request) and status in API_REFUSALS:
        return problems.plain_problem(*API_REFUSALS[status])
    return error_page(request, message, status, title="Request not accepted")


def is_utf8(charset: str) -> bool:
    try:
        return codecs.lookup(charset).name == "utf-8"
    except LookupError:
        return False


def plain_forms_only(view):
    """Mark a public view whose forms have no file field: a multipart body answers 415."""
    view.plain_forms_only = True
    return view


def _declared_length(request) -> int:
    """The body's Content-Length (WSGI reads no more than that; 0 when absent)."""
    try:
        return int(request.META.get("CONTENT_LENGTH") or 0)
    except ValueError:
        return 0


class FormBodyMiddleware:
    """Refuse bodies a page does not accept, before the CSRF check or a form parses them.

    A body longer than ``REQUEST_BODY_MAX_BYTES`` answers 413 on every path, the admin's
    included, before anything reads it.

    A body in any charset but UTF-8 answers 400 instead of being decoded wrongly. Views
    marked ``plain_forms_only`` (signup, cancellation) answer a multipart body with 415:
    file parts would escape DATA_UPLOAD_MAX_MEMORY_SIZE.
    """

    def __init__(self, get_response):
        self.get_response = get_response

    def __call__(self, request):
        if _declared_length(request) > web_settings().max_body_bytes:
            return refusal(request, TOO_LARGE, 413)  # nothing of the body was read
        _, params = parse_header_parameters(request.META.get("CONTENT_TYPE", ""))
        charset = params.get("charset")
        if charset is not None and not is_utf8(charset):
            return refusal(request, CHARSET_REFUSED, 400)
        return self.get_response(request)

    def process_view(self, request, view_func, view_args, view_kwargs):
        content_type, _ = parse_header_parameters(request.META.get("CONTENT_TYPE", ""))
        if (getattr(view_func, "plain_forms_only", False)
                and content_type.lower() == "multipart/form-data"):
            return refusal(request, MULTIPART_REFUSED, 415)
        return None


class SecurityHeadersMiddleware:
    """Content-Security-Policy and Permissions-Policy on every response.

    Each request gets a fresh nonce (``request.csp_nonce``, ``{{ csp_nonce }}`` in
    templates): an inline script runs only if it carries it, so injected markup cannot run
    script. The policies are the wiring's (CONTENT_SECURITY_POLICY and PERMISSIONS_POLICY).
    """

    def __init__(self, get_response):
        self.get_response = get_response

    def __call__(self, request):
        request.csp_nonce = secrets.token_urlsafe(16)
        response = self.get_response(request)
        web = web_settings()
        policy = web.content_security_policy
        if policy and "Content-Security-Policy" not in response:
            response["Content-Security-Policy"] = policy.replace("{nonce}", request.csp_nonce)
        if web.permissions_policy and "Permissions-Policy" not in response:
            response["Permissions-Policy"] = web.permissions_policy
        return response


# What the proxy in front sets (config/nginx.conf: ``X-Request-Start: t=<seconds>.<ms>``,
# the time it passed the whole request on): "t=" and Unix seconds, up to microseconds.
_REQUEST_START = re.compile(r"^t=([0-9]{1,12}(?:\.[0-9]{1,6})?)$")  # ASCII digits only
UNSAFE_METHODS = frozenset({"POST", "PUT", "PATCH", "DELETE"})


def waited_seconds(header: str, now: float) -> float | None:
    """Seconds since the proxy's ``X-Request-Start`` time; None when it is absent,
    malformed or in the future (then nothing is checked)."""
    match = _REQUEST_START.match(header.strip())
    if match is None:
        return None
    waited = now - float(match.group(1))
    return waited if waited >= 0 else None


class QueueDeadlineMiddleware:
    """Refuse a changing request that waited past ``BOOKING_QUEUE_DEADLINE`` before it ran.

    A request queued behind the proxy (gunicorn's backlog, a full pool) longer than its
    client waits runs after the client gave up and asked again: that re-ask was taken for
    a first asking, and this late one could then book a seat nobody is told about
    (docs/exactly-once.md). Every POST, PUT, PATCH and DELETE whose ``X-Request-Start``
    is older than the deadline answers 503 with ``Retry-After`` (problem+json under
    /api/) before anything reads the store: no abuse limit counted, nothing booked.

    The header is the proxy's (config/nginx.conf sets it on every request, over any a
    client sent); without it (runserver, tests) nothing is checked, nor when it is
    malformed or in the future (clocks apart).
    """

    def __init__(self, get_response):
        self.get_response = get_response

    def __call__(self, request):
        if request.method in UNSAFE_METHODS:
            waited = waited_seconds(request.headers.get("X-Request-Start", ""), time.time())
            deadline = web_settings().queue_deadline
            if waited is not None and waited > deadline:
                # Not the path: a link's secret may be in it.
                logger.warning("refused a %s: it waited %.1f s before it ran (over %.1f s)",
                               request.method, waited, deadline)
                return waited_too_long(request)
        return self.get_response(request)


def waited_too_long(request):
    """503 + Retry-After: problem+json under /api/, the error page elsewhere (no
    ``Refresh``: loading the page again would drop what the form held)."""
    if problems.is_api(request):
        response = problems.plain_problem(problems.READ_LATE_KIND, API_WAITED_TOO_LONG)
        response["Retry-After"] = str(problems.pending_retry_after())
        return response
    response = error_page(request, WAITED_TOO_LONG, 503, title="Very busy")
    response["Retry-After"] = str(BUSY_RETRY_SECONDS)
    return response
