"""Django's error views (``handler400``/``403``/``404``/``500`` in ``config/urls.py``),
aware of the API: under ``/api/`` a problem+json body (no route, a suspicious request, an
unexpected exception: never a detail of it), elsewhere Django's own page."""
from django.views import defaults

from booking.api.problems import BAD_REQUEST, NOT_FOUND, PERMISSION_DENIED, SERVER_ERROR
from booking.entry.problem_json import is_api, plain_problem

NO_ROUTE = "No API resource at this address (see /api/v1/docs/)."
BAD = "The request could not be read."
DENIED = "This request is not allowed."
FAILED = "The server could not complete this request. Nothing more is known here."


def bad_request(request, exception, template_name=defaults.ERROR_400_TEMPLATE_NAME):
    if is_api(request):
        return plain_problem(BAD_REQUEST, BAD)
    return defaults.bad_request(request, exception, template_name)


def permission_denied(request, exception, template_name=defaults.ERROR_403_TEMPLATE_NAME):
    if is_api(request):
        return plain_problem(PERMISSION_DENIED, DENIED)
    return defaults.permission_denied(request, exception, template_name)


def page_not_found(request, exception, template_name=defaults.ERROR_404_TEMPLATE_NAME):
    if is_api(request):
        return plain_problem(NOT_FOUND, NO_ROUTE)
    return defaults.page_not_found(request, exception, template_name)


def server_error(request, template_name=defaults.ERROR_500_TEMPLATE_NAME):
    if is_api(request):
        return plain_problem(SERVER_ERROR, FAILED)
    return defaults.server_error(request, template_name)
