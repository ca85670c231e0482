"""Request filters that run before anything reads a request body."""
import codecs
import secrets

from django.utils.http import parse_header_parameters

from booking.api import problems
from booking.web.errors import error_page
from booking.wiring import web_settings

MULTIPART_REFUSED = "This site accepts only plain forms: file uploads are not accepted."
CHARSET_REFUSED = "Please send forms encoded as UTF-8."
TOO_LARGE = "This request is larger than this site accepts."


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
