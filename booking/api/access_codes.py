"""``/api/v1/events/{id}/access-codes/``: an event's access codes (docs/api.md).

POST (a write token) creates a given ``code`` or ``count`` generated ones, all or none;
GET (a read token) lists them with their uses. Thin over ``BookingService``."""
from drf_spectacular.utils import OpenApiParameter, extend_schema
from rest_framework import serializers
from rest_framework.response import Response

from booking.api import idempotency
from booking.api.base import ApiView
from booking.api.schema import problems
from booking.api.serializers import StrictIntegerField, StrictSerializer, TextField
from booking.organizers import rights
from booking.service.access_codes import weak_code_warning
from booking.wiring import get_booking_service


class AccessCodeCreate(StrictSerializer):
    code = TextField(required=False, max_length=32,
                     help_text="The code to create (any case); leave it out to generate.")
    count = StrictIntegerField(required=False, min_value=1, max_value=100,
                               help_text="How many codes to generate (default 1).")
    max_uses = StrictIntegerField(required=False, min_value=1,
                                  help_text="Orders each code may be used for (default 1).")
    valid_until = TextField(required=False, allow_null=True,
                            help_text="ISO 8601 date and time; no end when left out.")
    ticket_types = serializers.ListField(child=TextField(), required=False, max_length=20,
                                         help_text="The types it unlocks (default: every "
                                                   "type).")
    reserved_seats = StrictIntegerField(required=False, min_value=0)

    def validate(self, attrs):
        attrs = super().validate(attrs)
        if "code" in attrs and "count" in attrs:
            raise serializers.ValidationError({"count": "Give a code or a count, not both."})
        return attrs


class AccessCodeOutput(serializers.Serializer):
    code = serializers.CharField()
    max_uses = serializers.IntegerField()
    uses = serializers.IntegerField()
    remaining = serializers.IntegerField()
    valid_until = serializers.DateTimeField(allow_null=True)
    ticket_types = serializers.ListField(child=serializers.CharField(),
                                         help_text="Empty: every type.")
    reserved_seats = serializers.IntegerField()
    revoked_at = serializers.DateTimeField(allow_null=True)


class AccessCodesCreated(serializers.Serializer):
    results = AccessCodeOutput(many=True)
    warnings = serializers.ListField(child=serializers.CharField(), help_text=(
        "Why a given code is easy to guess (short, common words, a simple number): "
        "it was created all the same. Empty for generated codes."))


class AccessCodes(ApiView):
    actions = {"GET": rights.VIEW, "POST": rights.CHANGE}

    @extend_schema(operation_id="access_codes_list",
                   responses={200: AccessCodeOutput(many=True),
                              **problems(401, 403, 404, 503)})
    def get(self, request, event_id):
        """The event's access codes with their uses (organizers, read scope)."""
        codes = get_booking_service().access_codes(self.event.id)
        return Response({"results": AccessCodeOutput(codes, many=True).data})

    @extend_schema(operation_id="access_codes_create", request=AccessCodeCreate,
                   parameters=[OpenApiParameter(
                       idempotency.HEADER, idempotency.KEY_SCHEMA, OpenApiParameter.HEADER,
                       required=True, description=idempotency.POLICY)],
                   responses={201: AccessCodesCreated,
                              **problems(400, 401, 403, 404, 415, 422, 503)})
    def post(self, request, event_id):
        """Create access codes (organizers, write scope): ``code``, or ``count`` generated
        ones; all or none (a code the event already has: 400, nothing stored). The
        Idempotency-Key (required) rides in the codes' own write: a retry answers 201 with
        the same codes and creates nothing. ``warnings``: a given code that is easy to
        guess (created all the same)."""
        request_id = idempotency.keyed_request_id(request)
        payload = AccessCodeCreate(data=request.data)
        payload.is_valid(raise_exception=True)
        data = dict(payload.validated_data)
        code = data.pop("code", None)
        made = get_booking_service().create_access_codes(
            self.event.id, codes=[code] if code is not None else None, request_id=request_id,
            **data)
        warnings = [text for text in ([weak_code_warning(c.code, event_name=self.event.name)
                                       for c in made] if code is not None else []) if text]
        return Response({"results": AccessCodeOutput(made, many=True).data,
                         "warnings": warnings}, status=201)
