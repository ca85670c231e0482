"""The public JSON API (``/api/v1/``): events, registrations. Thin over ``BookingService``
like the pages; every refusal is a problem (``booking/api/problems.py``); every POST needs
an Idempotency-Key (``booking/api/idempotency.py``)."""
import re
from typing import cast

from django.urls import reverse
from drf_spectacular.utils import OpenApiParameter, extend_schema
from rest_framework import serializers
from rest_framework.response import Response

from booking import links
from booking.api import idempotency
from booking.api.base import ApiView
from booking.api.organizer import expected_version, merged_edit, with_etag
from booking.api.problems import BAD_LINK, Refused, pending_retry_after
from booking.api.schema import PENDING, problems
from booking.api.serializers import (BookingInput, CancellationInput, CancellationOutput,
                                     EventCreate, EventEdit, EventPage, EventWithSeats,
                                     RegistrationPage,
                                     RegistrationOutput, decode_cursor, encode_cursor,
                                     event_body)
from booking.entry.exports import registrations_csv
from booking.errors import EventFull, NotRegistered
from booking.models import PENDING as WAITING, REJECTED
from booking.organizers import rights
from booking.entry import limits as rate_limits
from booking.entry.limits import CODES_LIMITED, EMAIL_LIMITED, SIGNUPS_LIMITED
from booking.webhooks.fanout import answers_data
from booking.wiring import get_booking_service

PROBLEMS = {**PENDING, **problems(400, 404, 409, 415, 422, 429, 503)}
KEY_PARAMETER = OpenApiParameter(
    idempotency.HEADER, idempotency.KEY_SCHEMA, OpenApiParameter.HEADER, required=True,
    description=idempotency.POLICY)
IF_MATCH = OpenApiParameter("If-Match", str, OpenApiParameter.HEADER, required=True,
                            description='The ETag of the event as read: "<version>".')
RETRY_AFTER = OpenApiParameter(
    "Retry-After", int, OpenApiParameter.HEADER, response=[202, 429, 503],
    description="Seconds to wait before asking again with the same Idempotency-Key.")
LOCATION = OpenApiParameter(
    "Location", str, OpenApiParameter.HEADER, response=[202],
    description="A booking waiting for its decision: its registration "
                "(registrations/{secret}/). A key whose earlier request is still in "
                "flight has no registration yet: ask again with the key.")
BAD_SECRET = "This secret names no registration. Use the secret the booking answered."
SECRET_PROBLEMS = problems(404, 429, 503)


CURSOR = OpenApiParameter("cursor", str, description="next_cursor of the page before")


class EventList(ApiView):
    public_methods = ("GET",)
    actions = {"POST": rights.CREATE}

    @extend_schema(
        operation_id="events_list", responses={200: EventPage, **problems(400, 503)},
        parameters=[OpenApiParameter("cursor", str, description="next_cursor of the page "
                                                                "before"),
                    OpenApiParameter("limit", int, description="1 to 100 (default 25)")])
    def get(self, request):
        """Events, one DynamoDB page at a time (no order across pages), with their seats."""
        limit = _limit(request.query_params.get("limit", "25"))
        cursor = request.query_params.get("cursor")
        service = get_booking_service()
        events, last = service.events_page(
            start_key=decode_cursor(cursor) if cursor else None, limit=limit)
        seats = service.availabilities(events)
        return Response({"results": [event_body(e, seats[e.id]) for e in events
                                     if e.id in seats],
                         "next_cursor": encode_cursor(last)})


    @extend_schema(operation_id="events_create", request=EventCreate, parameters=[KEY_PARAMETER],
                   responses={201: EventWithSeats, **PENDING,
                              **problems(400, 401, 403, 415, 422, 503)})
    def post(self, request):
        """Create an event (organizers, write scope). The Idempotency-Key rides in the
        event's own provisioning write: a retry answers 201 with the same event."""
        request_id = idempotency.keyed_request_id(request)
        payload = EventCreate(data=request.data)
        payload.is_valid(raise_exception=True)
        service = get_booking_service()
        event = service.create_event(**payload.validated_data, request_id=request_id,
                                     organizer=self.organizer)
        response = with_etag(event, service.availability(event.id))
        response.status_code = 201
        return response


def _limit(text: str) -> int:
    # ASCII digits only: "²".isdigit() is True and int("²") fails; "٣" would read as 3.
    if not _LIMIT.fullmatch(text) or not 1 <= int(text) <= 100:
        raise serializers.ValidationError({"limit": "A whole number from 1 to 100."})
    return int(text)


_LIMIT = re.compile(r"[0-9]{1,3}")


class EventDetail(ApiView):
    public_methods = ("GET",)
    actions = {"PATCH": rights.CHANGE, "DELETE": rights.DELETE}

    @extend_schema(operation_id="events_retrieve",
                   responses={200: EventWithSeats, **problems(404, 503)})
    def get(self, request, event_id):
        """One event with its seats; its ETag is its version (for If-Match)."""
        service = get_booking_service()
        event = service.get_event(event_id)
        return with_etag(event, service.availability(event.id))

    @extend_schema(operation_id="events_partial_update", request=EventEdit,
                   parameters=[IF_MATCH],
                   responses={200: EventWithSeats, **problems(400, 401, 403, 404, 412, 428,
                                                              503)})
    def patch(self, request, event_id):
        """Edit the event as read at the If-Match version (412 if it changed since); the
        ticket types, labels and descriptions sent are added to the event's."""
        version = expected_version(request)
        edit = EventEdit(data=request.data)
        edit.is_valid(raise_exception=True)
        service = get_booking_service()
        event = service.update_event(self.event.id, expected_version=version,
                                     **merged_edit(self.event, edit.validated_data, version))
        return with_etag(event, service.availability(event.id))

    @extend_schema(operation_id="events_destroy",
                   responses={204: None, **problems(401, 403, 404, 503)})
    def delete(self, request, event_id):
        """Delete the event and everything booked for it."""
        get_booking_service().delete_event(self.event.id)
        return Response(status=204)


class EventRegistrations(ApiView):
    public_methods = ("POST",)
    actions = {"GET": rights.VIEW}

    @extend_schema(operation_id="registrations_list",
                   parameters=[CURSOR, OpenApiParameter("limit", int,
                                                        description="1 to 100 (default 50)")],
                   responses={200: RegistrationPage, **problems(400, 401, 403, 404, 503)})
    def get(self, request, event_id):
        """The event's registrations in e-mail order, one page at a time (organizers)."""
        limit = _limit(request.query_params.get("limit", "50"))
        cursor = request.query_params.get("cursor")
        service, event = get_booking_service(), self.event
        after = decode_cursor(cursor, "email")["email"] if cursor else None
        page, last = service.registrations_page(event.id, after=after, limit=limit)
        secrets = self.rights.may_event(rights.SECRETS, event)  # read tokens: none
        passes = service.passes_of(page)
        bodies = cast(list[dict], RegistrationOutput(
            page, many=True, context={"secrets": secrets, "passes": passes}).data)
        if event.questions_version:  # one query of the event's answers for the page
            found = service.answers_for_event(event.id)
            bodies = [{**body, **answers_data(found.get(body["id"]))} for body in bodies]
        return Response({"results": bodies,
                         "next_cursor": encode_cursor({"email": last} if last else None)})

    @extend_schema(operation_id="registrations_create", request=BookingInput,
                   parameters=[KEY_PARAMETER, RETRY_AFTER, LOCATION],
                   responses={201: RegistrationOutput, **PROBLEMS})
    def post(self, request, event_id):
        """Book a seat, or an order's ``tickets`` (all or nothing; 409 ``event-full`` names
        the ``quota`` without room). The Idempotency-Key is the booking's request id: a
        retry answers the first 201 and books nothing (the same key with other tickets: 422).
        A request waiting for its decision (``streams``) answers 202 with ``Retry-After``
        and ``Location`` (the registration); asked again with the same key it answers the
        decision once made: 201 confirmed, 409 ``event-full``."""
        service = get_booking_service()
        service.turn_away_if_busy(event_id)  # before the limits spend a write on it
        request_id, data, admission = keyed_input(request, BookingInput, event_id,
                                                  admitted=True)
        code = data.get("access_code") or None
        with rate_limits.code_attempt(rate_limits.client_address(request), code,
                                      message=CODES_LIMITED):
            outcome = service.register(
                event_id, name=data["name"], email=data["email"], request_id=request_id,
                tickets=data.get("tickets"), access_code=code, answers=data.get("answers"),
                pass_answers=data.get("pass_answers"), admission=admission)
        registration = outcome.registration
        if registration.status == WAITING and outcome.replayed:  # the first answer: look now
            registration = _as_decided(service, registration)
        if registration.status == REJECTED:
            raise EventFull()
        if registration.status == WAITING:
            return _waiting(registration)
        # The confirmation is owed in the outbox row the booking wrote: the worker sends it.
        return Response(with_answers(service, RegistrationOutput(registration).data,
                                     registration), status=201)


WAITING_DETAIL = ("Your request is in line for a decision. Send the same request with the "
                  "same Idempotency-Key after Retry-After seconds (or GET Location): it "
                  "answers 201 once confirmed, 409 if the event was full.")


def with_answers(service, body: dict, registration) -> dict:
    """A registration's body with its ``answers`` and ``pass_answers`` when its event has
    questions (one read of its answers; none on an event that never had any)."""
    event = service.catalog.remembered_event(registration.event_id) or \
        service.catalog.event_for(registration.event_id)
    if not event.questions_version:
        return body
    return {**body, **answers_data(service.answers(registration))}


def _as_decided(service, registration):
    """``registration`` as it stands now (the decider may have decided it since the
    request row recorded it pending); as recorded when the person's registration is
    another by now."""
    current = service.find_registration(registration.event_id, email=registration.email)
    if current is None or current.registration_id != registration.registration_id:
        return registration
    return current


def _waiting(registration) -> Response:
    """202 for a registration waiting for its decision: where to look, and when."""
    body = {**RegistrationOutput(registration).data, "detail": WAITING_DETAIL}
    response = Response(body, status=202)
    response["Retry-After"] = str(pending_retry_after())
    response["Location"] = reverse("api:registration", args=[body["secret"]])
    return response


def keyed_input(request, payload_class, event_id: str, *, admitted: bool = False):
    """A keyed POST for a person at ``event_id`` read by ``payload_class`` (a
    ``RegistrationInput``), within the abuse limits: (request id, its validated fields).
    The request id is the key scoped to the caller (``idempotency.caller_request_id``).

    ``admitted``: the limits are not counted here but returned as a third item, the
    ``SignupAdmission`` the booking runs (``BookingService.register``'s ``admission``):
    read first, so a key asked again is answered from reads and never counted or written
    again, and, after a sell-out, read in the booking's own first read.

    Raises ``Refused`` (missing or malformed key), a validation error (400) or
    ``RateLimited`` (429); nothing is stored on any of them.
    """
    key = idempotency.read_key(request)
    payload = payload_class(data=request.data)
    payload.is_valid(raise_exception=True)
    email = payload.validated_data["email"]
    request_id = idempotency.caller_request_id(request, key, event_id=event_id, email=email)
    # One Idempotency-Key counts once (a retried request spends nothing), and the
    # address's limit only for this network, as on the signup form: one write for both.
    client = rate_limits.client_address(request)
    if admitted:
        return request_id, dict(payload.validated_data), rate_limits.SignupAdmission(
            client, request_id, email=email, message=SIGNUPS_LIMITED,
            email_message=EMAIL_LIMITED)
    rate_limits.check_signup(client, request_id, email=email, message=SIGNUPS_LIMITED,
                             email_message=EMAIL_LIMITED)
    return request_id, dict(payload.validated_data)


class RegistrationsExport(ApiView):
    actions = {"GET": rights.VIEW}

    @extend_schema(operation_id="registrations_export",
                   responses={(200, "text/csv"): str, **problems(401, 403, 404, 503)})
    def get(self, request, event_id):
        """The registrations as CSV, as the admin exports them (organizers)."""
        service = get_booking_service()
        return registrations_csv(service.iter_registrations(self.event.id), self.event)


class RegistrationBySecret(ApiView):
    public_methods = ("GET", "DELETE")  # the person's own link
    @extend_schema(operation_id="registrations_retrieve",
                   responses={200: RegistrationOutput, **SECRET_PROBLEMS})
    def get(self, request, secret):
        """The registration the secret (the cancellation link's token) names, if it holds."""
        ref = _read_secret(secret)
        registration = get_booking_service().find_registration(ref.event_id, email=ref.email)
        if registration is None or not ref.matches(registration):
            raise NotRegistered()
        service = get_booking_service()
        passes = service.passes_of([registration])
        return Response(with_answers(
            service, RegistrationOutput(registration, context={"passes": passes}).data,
            registration))

    @extend_schema(operation_id="registrations_destroy",
                   responses={204: None, **SECRET_PROBLEMS})
    def delete(self, request, secret):
        """Cancel: one conditional write removes exactly that registration; a repeat (it is
        gone already) answers 204 too."""
        ref, _ = _cancelling(request, secret)  # one secret counts once: a retry spends nothing
        try:
            get_booking_service().cancel(
                ref.event_id, email=ref.email, registration_id=ref.registration_id,
                registration=ref.registration)
        except NotRegistered:
            pass  # cancelled meanwhile: the outcome asked for
        # The notice is owed in the outbox row the cancellation wrote: the worker sends it.
        return Response(status=204)


class RegistrationCancellations(ApiView):
    public_methods = ("POST",)  # the person's own link
    @extend_schema(operation_id="registrations_cancel_seats", request=CancellationInput,
                   parameters=[KEY_PARAMETER],
                   responses={200: CancellationOutput, **SECRET_PROBLEMS, **PROBLEMS})
    def post(self, request, secret):
        """Cancel some seats of the order (all of them: the whole order). The
        Idempotency-Key is the cancellation's request id: a retry answers what the first
        freed and frees nothing more (the same key with other tickets: 422)."""
        key = idempotency.read_key(request)
        payload = CancellationInput(data=request.data)
        payload.is_valid(raise_exception=True)
        ref, request_id = _cancelling(request, secret, key)  # one key counts once
        service = get_booking_service()
        removed = service.cancel(ref.event_id, email=ref.email,
                                 registration_id=ref.registration_id, request_id=request_id,
                                 tickets=payload.validated_data["tickets"])
        # Its notice is owed once in the outbox row just written: the worker sends it once.
        left = service.find_registration(ref.event_id, email=ref.email)
        return Response(CancellationOutput({
            "cancelled": removed.tickets,
            "registration": left if ref.matches(left) else None}).data)


def _cancelling(request, secret: str, key: str | None = None):
    """The registration a cancellation's secret names, and the request id of ``key``
    scoped to that person (None without a key), within the cancellation limit: a bad
    secret counts every time, a good one once per request id (without one: per
    registration)."""
    client = rate_limits.client_address(request)
    try:
        ref = _read_secret(secret)
    except Refused:
        rate_limits.check(rate_limits.CANCEL, client)
        raise
    request_id = None if key is None else idempotency.caller_request_id(
        request, key, event_id=ref.event_id, email=ref.email)
    rate_limits.check_once(rate_limits.CANCEL, client, request_id or ref.registration_id)
    return ref, request_id


def _read_secret(secret: str):
    try:
        return links.read_registration_token(secret, salt=links.CANCEL_SALT)
    except links.BadLink:
        raise Refused(BAD_LINK, BAD_SECRET) from None
