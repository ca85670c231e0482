"""The waiting list over the API: ask to join a full event's line (Idempotency-Key; the
address's owner confirms by e-mail, as on the web), and with an offer's secret (the offer link's token) accept the seat or pass it on. Thin, like
``booking/web/waitlist.py``."""
from drf_spectacular.utils import extend_schema
from rest_framework import serializers
from rest_framework.response import Response

from booking import links
from booking.api import idempotency
from booking.api.base import ApiView
from booking.api.problems import BAD_LINK, Refused
from booking.api.schema import PENDING, problems
from booking.api.serializers import RegistrationOutput, WaitlistEntryOutput, WaitlistJoinInput
from booking.api.views import KEY_PARAMETER, PROBLEMS, keyed_input
from booking.errors import NotWaiting
from booking.organizers import rights
from booking.entry import limits as rate_limits
from booking.entry.limits import OFFER_LIMITED
from booking.wiring import get_booking_service

JOIN_REQUESTED = ("We e-mailed this address. Its owner joins the waiting list by confirming "
                  "with the link in that e-mail.")


class JoinRequested(serializers.Serializer):
    detail = serializers.CharField(help_text=JOIN_REQUESTED)


BAD_OFFER = "This secret names no offer. Use the secret from the offer e-mail's link."


class WaitingList(ApiView):
    public_methods = ("POST",)
    actions = {"GET": rights.VIEW}

    @extend_schema(operation_id="waitinglist_list",
                   responses={200: WaitlistEntryOutput(many=True),
                              **problems(401, 403, 404, 503)})
    def get(self, request, event_id):
        """The event's waiting list in join order (organizers)."""
        service = get_booking_service()
        return Response(WaitlistEntryOutput(service.waiting_list(self.event.id),
                                            many=True).data)

    @extend_schema(operation_id="waitinglist_join", request=WaitlistJoinInput,
                   parameters=[KEY_PARAMETER],
                   responses={202: JoinRequested, **PROBLEMS})
    def post(self, request, event_id):
        """Ask to join a full event's waiting list (409 seats-available while seats are
        left: on an event with ticket types, while the order in ``tickets`` fits). The
        answer is the same whoever's address it is: its owner gets an e-mail whose link
        joins the line for those tickets (or says they are already in line or booked)."""
        request_id, data = keyed_input(request, WaitlistJoinInput, event_id)
        get_booking_service().request_to_join_waiting_list(  # its e-mail owed in the outbox
            event_id, name=data["name"], email=data["email"], request_id=request_id,
            tickets=data.get("tickets"))
        return Response({"detail": JOIN_REQUESTED}, status=202)


def _offer(secret: str):
    """The offer's waiting-list entry; ``Refused`` for a bad secret, ``NotWaiting`` for an
    offer that is no longer the person's."""
    try:
        ref = links.read_offer_token(secret)
    except links.BadLink:
        raise Refused(BAD_LINK, BAD_OFFER) from None
    entry = get_booking_service().waiting_entry(ref.event_id, email=ref.email)
    if entry is None or entry.offer_id != ref.registration_id:
        raise NotWaiting()
    return entry


class OfferAccept(ApiView):
    public_methods = ("POST",)  # the person's own offer link
    @extend_schema(operation_id="offers_accept", request=None, parameters=[KEY_PARAMETER],
                   responses={201: RegistrationOutput, **PENDING,
                              **problems(400, 404, 409, 410, 422, 429, 503)})
    def post(self, request, secret):
        """Take the offered seat: a booking (its answer replays like registrations')."""
        key = idempotency.read_key(request)
        rate_limits.check(rate_limits.CANCEL, rate_limits.client_address(request),
                          message=OFFER_LIMITED)
        entry = _offer(secret)
        request_id = idempotency.caller_request_id(request, key, event_id=entry.event_id,
                                                   email=entry.email)
        registration = get_booking_service().accept_offer(  # the confirmation owed in the outbox
            entry.event_id, email=entry.email, request_id=request_id)
        return Response(RegistrationOutput(registration).data, status=201)


class Offer(ApiView):
    public_methods = ("DELETE",)  # the person's own offer link
    @extend_schema(operation_id="offers_decline",
                   responses={204: None, **problems(404, 429, 503)})
    def delete(self, request, secret):
        """Pass the offered seat on (leave the waiting list)."""
        rate_limits.check(rate_limits.CANCEL, rate_limits.client_address(request),
                          message=OFFER_LIMITED)
        entry = _offer(secret)
        get_booking_service().leave_waiting_list(entry.event_id, email=entry.email)
        return Response(status=204)
