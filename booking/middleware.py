"""Request filters that run before anything reads a request body."""
import codecs

from django.shortcuts import render
from django.utils.http import parse_header_parameters

MULTIPART_REFUSED = "This site accepts only plain forms: file uploads are not accepted."
CHARSET_REFUSED = "Please send forms encoded as UTF-8."


def refusal(request, message: str, status: int):
    context = {"message": message, "status": status, "title": "Request not accepted"}
    return render(request, "booking/error.html", context, status=status)


def is_utf8(charset: str) -> bool:
    try:
        return codecs.lookup(charset).name == "utf-8"
    except LookupError:
        return False


def plain_forms_only(view):
    """Mark a public view whose forms have no file field: a multipart body answers 415."""
    view.plain_forms_only = True
    return view


class FormBodyMiddleware:
    """Refuse bodies a page does not accept, before the CSRF check or a form parses them.

    A body in any charset but UTF-8 answers 400 instead of being decoded wrongly. Views
    marked ``plain_forms_only`` (signup, cancellation) answer a multipart body with 415:
    file parts would escape DATA_UPLOAD_MAX_MEMORY_SIZE.
    """

    def __init__(self, get_response):
        self.get_response = get_response

    def __call__(self, request):
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
