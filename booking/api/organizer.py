"""Organizers' side of the API (a token with its user's role on the event's organizer,
checked by ``ApiView.scope``; read scope to read, write scope to change): edit
an event under If-Match (version-checked), delete it, list and export its registrations, see its
waiting list. Thin over ``BookingService``."""
import re

from rest_framework.response import Response

from booking.api.problems import Refused
from booking.api.serializers import event_body
from booking.errors import StaleEdit

PRECONDITION_REQUIRED = (428, "precondition-required", "If-Match required")
BAD_PRECONDITION = (400, "bad-if-match", "If-Match malformed")
_ETAG = re.compile(r'^"(\d{1,18})"$')


def etag(event) -> str:
    return f'"{event.version}"'


def with_etag(event, availability) -> Response:
    response = Response(event_body(event, availability))
    response["ETag"] = etag(event)
    return response


def expected_version(request) -> int:
    """The version If-Match names; 428 without it, 400 if it is not one of our ETags."""
    header = request.headers.get("If-Match")
    if header is None:
        raise Refused(PRECONDITION_REQUIRED, 'Send If-Match: "<version>" (the ETag of the '
                                             "event as you read it).")
    match = _ETAG.match(header.strip())
    if not match:
        raise Refused(BAD_PRECONDITION, 'If-Match must be one ETag, like "3".')
    return int(match.group(1))


MERGED = ("ticket_types", "ticket_labels", "ticket_descriptions")


def merged_edit(event, edit: dict, version: int) -> dict:
    """The service's ``update_event`` keywords for a PATCH of ``event`` as read: the ticket
    types, labels and descriptions sent are added to the event's (only those sent change),
    as the admin's editor does. ``StaleEdit`` when ``event`` is not the ``version`` the
    client read, since the merge would rest on another version."""
    if not any(key in edit for key in MERGED):
        return edit
    if event.version != version:
        raise StaleEdit()
    current = {"ticket_types": {name: list(q) for name, q in event.ticket_types.items()},
               "ticket_labels": event.ticket_labels,
               "ticket_descriptions": event.ticket_descriptions}
    return {**edit, **{key: {**current[key], **edit[key]} for key in MERGED if key in edit}}
