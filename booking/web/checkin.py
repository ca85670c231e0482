"""The scanner page for door staff (``/checkin/``): pick a check-in list, scan passes with
the phone's camera, type a code or find a name, and see a full-screen green or red answer.

Staff sign in as for the admin (Django session; JSON posts carry the CSRF token) and
need the ``checkin`` right (``rights.SCAN``) on the list's event: an event or list the user
may not scan answers 404, exactly as a missing one, for every method. The views are thin
over the service (``checkin_lists``, ``checkin_list``, ``scan``, ``scan_batch``,
``passes``, ``pass_public_key``); the page's script (``static/booking/checkin.js``) checks
each code's signature itself with the event's public key, so it keeps answering without a
connection and uploads the scans it queued when the connection is back
(docs/checkin.md).
"""
import json
from functools import wraps

from django.contrib.auth.views import redirect_to_login
from django.http import Http404, HttpResponseNotAllowed, JsonResponse
from django.shortcuts import render
from django.urls import reverse
from django.utils import timezone
from django.views.decorators.cache import never_cache
from django.views.decorators.http import require_safe

from booking.checkin.records import ENTRY, MESSAGES
from booking.service.checkin import ENTRANCE_NAME, MAX_BATCH
from booking.errors import BookingError, CheckinListNotFound, EventNotFound, InvalidBooking
from booking.models import ticket_label
from booking.organizers import rights as organizer_rights
from booking.entry.error_pages import render_error, renders_booking_errors, status_for
from booking.wiring import get_booking_service, web_settings

LISTED_EVENTS = 50  # events on the list picker (soonest first)
FOUND_NAMES = 10  # people a name search shows
NOT_FOUND = "There is no such check-in list, or you may not scan for it."

# What the page says besides the service's answers (the texts live here, not in the script).
PAGE_TEXTS = {
    **MESSAGES,
    "admitted_offline": "Admitted (offline): the scan is saved on this phone and sent "
                        "when the connection is back.",
    "exited_offline": "Exit recorded (offline): sent when the connection is back.",
    "already_admitted_here": "This pass was already admitted on this phone.",
    "not_inside_here": "This pass has not entered on this phone.",
    "forged": "Not a valid pass: its signature does not match this event.",
    "other_event": "This pass is for another event.",
    "cannot_check": "This phone cannot check codes offline. Connect to the internet.",
    "failed": "Something went wrong checking this code. Try again, or type the code.",
    "short_unknown": "No pass with this code on this phone's list (it was last read "
                     "online). Check the code, or connect to the internet.",
}
# The big word of each full-screen answer.
TITLES = {"admitted": "Admitted", "exited": "Exit recorded", "already_admitted": "Already in",
          "not_inside": "Not inside", "room_full": "Room full", "not_on_list": "Wrong list",
          "cancelled": "Cancelled", "unknown_code": "Not valid", "not_open": "Not open",
          "choose_pass": "Choose a pass",
          "error": "Not checked"}


def allows_camera(view):
    """This page may use the camera (the site's Permissions-Policy forbids it elsewhere):
    the site's own policy with ``camera=(self)``."""
    @wraps(view)
    def wrapper(request, *args, **kwargs):
        response = view(request, *args, **kwargs)
        policy = web_settings().permissions_policy
        if policy:
            directives = [d.strip() for d in policy.split(",") if d.strip()]
            kept = [d for d in directives if not d.startswith("camera=")]
            response["Permissions-Policy"] = ", ".join(["camera=(self)", *kept])
        return response
    return wrapper


def signed_in_staff(request) -> bool:
    return organizer_rights.may_use(request.user)


def scannable(request, list_id, *, counts=False):
    """(service, list, event) for a list the user may scan; ``Http404`` for anything else,
    exactly as for a missing list (another organizer's, or without the checkin right).
    ``counts``: the list with its live counts (more reads), else the list alone."""
    service = get_booking_service()
    try:
        checkin_list = service.find_checkin_list(list_id)
        event = service.get_event(checkin_list.event_id)
    except (CheckinListNotFound, EventNotFound):
        raise Http404(NOT_FOUND) from None
    if not organizer_rights.for_user(request.user).may_event(organizer_rights.SCAN, event):
        raise Http404(NOT_FOUND)
    if counts:
        checkin_list = service.checkin_list(checkin_list.id)
    return service, checkin_list, event


def list_view(*methods: str, page: bool = False, counts: bool = False):
    """A view of one list: ``view(request, service, checkin_list, event)``.

    In this order, for every method: someone not signed in as staff is sent to sign in (a
    page) or answered 404 (JSON); a list the user may not scan answers 404 exactly as a
    missing one; only then is a method the view does not take refused (405), so no method
    tells another organizer's list from a missing one. JSON views answer a domain error
    as ``{"error": ...}`` with its status.
    """
    allowed = [*methods, "HEAD"] if "GET" in methods else list(methods)

    def decorate(view):
        @wraps(view)
        def wrapper(request, list_id):
            if not signed_in_staff(request) and page and request.method in ("GET", "HEAD"):
                return redirect_to_login(request.get_full_path(), reverse("admin:login"))
            try:
                if not signed_in_staff(request):
                    raise Http404(NOT_FOUND)
                found = scannable(request, list_id, counts=counts)
                if request.method not in allowed:
                    return HttpResponseNotAllowed(allowed)
                return view(request, *found)
            except Http404:
                if page:
                    raise
                return JsonResponse({"error": NOT_FOUND}, status=404)
            except BookingError as error:
                if page:
                    return render_error(request, error)
                return JsonResponse({"error": error.message}, status=status_for(error))
        return wrapper
    return decorate


@never_cache
@require_safe
@renders_booking_errors
def pick(request):
    """The events the user may scan for, each with its check-in lists."""
    if not signed_in_staff(request):
        return redirect_to_login(request.get_full_path(), reverse("admin:login"))
    scope = organizer_rights.for_user(request.user).scope(organizer_rights.SCAN)
    service = get_booking_service()
    events = [] if scope.is_empty else service.events_page(
        limit=LISTED_EVENTS, organizers=None if scope.is_everything else scope.organizers,
        event_ids=scope.event_ids)[0]
    rights = organizer_rights.for_user(request.user)
    rows = [(event, service.checkin_lists(event.id),
             rights.may_event(organizer_rights.CHANGE, event))
            for event in door_order(events, timezone.now())]
    return render(request, "booking/checkin/pick.html",
                  {"rows": rows, "entrance_name": ENTRANCE_NAME})


def door_order(events, now):
    """The events the door most likely scans for first: those not over yet (under way,
    upcoming or without a date), soonest first, then past ones, most recent first."""
    def over(event):
        end = event.ends_at or event.starts_at
        return end is not None and end < now
    coming = sorted((e for e in events if not over(e)),
                    key=lambda e: (e.starts_at is None, e.starts_at or now))
    past = sorted((e for e in events if over(e)), key=lambda e: e.starts_at, reverse=True)
    return coming + past


@never_cache
@allows_camera
@list_view("GET", page=True)
def scanner(request, service, checkin_list, event):
    """The scanner for one list. Everything the script needs to work offline is in the
    page: the event's public key, the list's ticket types and re-entry rule, the texts."""
    config = {
        "listId": checkin_list.id, "eventId": event.id,
        "timeZone": event.time_zone,  # times shown in the event's zone, the zone named
        "publicKeys": service.pass_public_keys(event.id),  # the signing key first
        "ticketTypes": None if checkin_list.ticket_types is None
        else list(checkin_list.ticket_types),
        "ticketLabels": _ticket_labels(event),
        "allowReentry": checkin_list.allow_reentry,
        "scanUrl": reverse("booking:checkin_scan", args=[checkin_list.id]),
        "batchUrl": reverse("booking:checkin_batch", args=[checkin_list.id]),
        "searchUrl": reverse("booking:checkin_search", args=[checkin_list.id]),
        "countsUrl": reverse("booking:checkin_counts", args=[checkin_list.id]),
        "rosterUrl": reverse("booking:checkin_roster", args=[checkin_list.id]),
        "workerUrl": reverse("booking:checkin_worker"),
        "texts": PAGE_TEXTS, "titles": TITLES,
        # An offline queue is sent in parts of at most this many scans and bytes (a part
        # answered 413 anyway is halved).
        "maxBatch": MAX_BATCH, "maxBatchBytes": web_settings().max_json_bytes - 1024,
    }
    return render(request, "booking/checkin/scanner.html",
                  {"event": event, "checkin_list": checkin_list, "config": config})


@require_safe
def worker(request):
    """The scanner page's service worker (its scope is ``/checkin/``, so it is served from
    there): the page opens again without a connection. It names no list and no event."""
    response = render(request, "booking/checkin/worker.js",
                      content_type="text/javascript; charset=utf-8")
    response["Cache-Control"] = "no-cache"  # a new version of the site takes over at once
    return response


def _ticket_labels(event) -> dict:
    return {name: ticket_label(name) for name in event.ticket_types}


def _read_json(request) -> dict:
    try:
        body = json.loads(request.body or b"{}")
    except (UnicodeDecodeError, ValueError, RecursionError):  # RecursionError: too deep
        raise InvalidBooking("The request is not JSON.") from None
    if not isinstance(body, dict):
        raise InvalidBooking("The request must be a JSON object.")
    return body


def _scan_fields(body: dict) -> dict:
    """One scan's fields as the service takes them (the service checks each and refuses
    bad input with ``InvalidBooking``, storing nothing)."""
    gate = body.get("gate")
    return {"code": body.get("code"), "direction": body.get("direction", ENTRY),
            "nonce": body.get("nonce"), "scanned_at": body.get("scanned_at"),
            "gate": (gate.strip() or None) if isinstance(gate, str) else gate}


def result_json(result) -> dict:
    """A scan's answer for the page."""
    return {"status": result.status, "nonce": result.nonce, "accepted": result.accepted,
            "message": MESSAGES.get(result.status, result.status),
            "pass_id": result.pass_id, "ticket_type": result.ticket_type,
            "ticket_label": result.ticket_label, "name": result.attendee_name,
            "first_admitted_at": _iso(result.first_admitted_at),
            "first_gate": result.first_gate, "conflict": result.conflict,
            "offline": result.offline,
            "choices": [{"short_code": short, "ticket_label": label, "code": code,
                         "status": status} for short, label, code, status in result.choices]}


def _iso(moment) -> str | None:
    return None if moment is None else moment.isoformat()


@list_view("POST")
def scan(request, service, checkin_list, event):
    """One scan, decided now: ``{"code", "direction", "nonce", "gate"}`` -> the answer
    (200 for every decision at the door; the same nonce answers the first answer again)."""
    fields = _scan_fields(_read_json(request))
    fields.pop("scanned_at")  # decided now: the server's clock
    return JsonResponse(result_json(service.scan(checkin_list.id, **fields)))


@list_view("POST")
def batch(request, service, checkin_list, event):
    """An offline queue: ``{"scans": [{"code", "direction", "nonce", "scanned_at",
    "gate"}, ...]}`` -> ``{"results": [...]}`` (uploading it again changes nothing)."""
    scans = _read_json(request).get("scans")
    if isinstance(scans, list):
        scans = [_scan_fields(entry) if isinstance(entry, dict) else entry for entry in scans]
    results = service.scan_batch(checkin_list.id, scans)
    return JsonResponse({"results": [result_json(r) for r in results]})


@list_view("GET")
def search(request, service, checkin_list, event):
    """People whose name contains ``q``, with their passes (for a guest without their
    code): name, ticket type, code and state of each pass, never an e-mail address."""
    query = request.GET.get("q", "").strip()
    if len(query) < 2:
        return JsonResponse({"people": []})
    found, _ = service.registrations_page(event.id, limit=FOUND_NAMES * 3, search=query,
                                          order="time")
    people: list[dict] = []
    needle = query.casefold()
    for registration in found:
        # The service also matches e-mail addresses: door staff find people by name only.
        if not registration.is_confirmed or needle not in registration.name.casefold():
            continue
        passes = [{"pass_id": p.pass_id, "ticket_label": p.ticket_label, "code": p.code,
                   "status": p.status, "admitted_at": _iso(p.admitted_at), "gate": p.gate}
                  for p in service.passes(registration)
                  if checkin_list.admits_type(p.ticket_type)]
        if passes and len(people) < FOUND_NAMES:
            people.append({"name": registration.name, "passes": passes})
    return JsonResponse({"people": people})


@never_cache
@list_view("GET", counts=True)
def counts(request, service, checkin_list, event):
    """The list's live counts (expected, admitted, inside now, conflicts)."""
    return JsonResponse({"expected": checkin_list.expected, "admitted": checkin_list.admitted,
                         "inside": checkin_list.inside, "conflicts": checkin_list.conflicts,
                         "occupancy_limit": checkin_list.occupancy_limit})



@never_cache
@list_view("GET")
def roster(request, service, checkin_list, event):
    """Every pass the list admits by its short code (with its code, name and ticket type):
    the page keeps it so that a short code or booking reference typed in works offline.
    Read when the page opens and every few minutes, never per scan."""
    return JsonResponse({"passes": [
        {"short_code": p.short_code, "code": p.code, "name": name,
         "ticket_label": p.ticket_label, "status": p.status}
        for name, p in service.checkin_roster(checkin_list.id)]})
