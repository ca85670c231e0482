"""Check-in over the API: an event's lists, a list with live counts, scans one by one and
an offline scanner's queue. Thin over ``BookingService``.

A ``checkin`` member's token may list lists and read their counts (``rights.SEE_DOOR``,
read or write scope) and, with write scope, scan (``rights.SCAN``: a scan is a write),
nothing else; creating a list needs ``CHANGE`` (admin, editor, write scope). Every scan is answered 200 with the door's decision: a refusal at the door
(``already_admitted``, ``room_full``...) is a normal answer, not an error. The scan's
``nonce`` is its idempotency key: a scan sent again answers the first answer; an
``Idempotency-Key`` header, if sent, must equal it.
"""
from drf_spectacular.utils import OpenApiParameter, extend_schema
from rest_framework import serializers
from rest_framework.response import Response

from booking.api import idempotency
from booking.api.base import ApiView
from booking.api.problems import Refused
from booking.api.schema import problems
from booking.api.serializers import StrictIntegerField, TextField
from booking.checkin.records import DIRECTIONS, ENTRY, STATUSES
from booking.organizers import rights
from booking.service.checkin import MAX_BATCH
from booking.wiring import get_booking_service

KEY_MISMATCH = (400, "idempotency-key-mismatch", "Idempotency-Key is not the nonce")
OPTIONAL_KEY = OpenApiParameter(
    idempotency.HEADER, str, OpenApiParameter.HEADER, required=False,
    description="Optional; if sent, it must equal the scan's nonce (the scan's own key).")


class StrictBooleanField(serializers.BooleanField):
    """A JSON boolean, never ``"yes"``, ``"on"``, ``1`` or ``"true"`` turned into one."""

    default_error_messages = {"invalid": "true or false (a JSON boolean) is required."}

    def to_internal_value(self, data):
        if not isinstance(data, bool):
            self.fail("invalid")
        return data


class Strict(serializers.Serializer):
    """Refuses fields it does not declare, also as one item of a list (400, nothing
    stored)."""

    def to_internal_value(self, data):
        if isinstance(data, dict):
            unknown = sorted(set(data) - set(self.fields))
            if unknown:
                raise serializers.ValidationError(
                    {name: "Unknown field." for name in unknown})
        return super().to_internal_value(data)


class CheckinListInput(Strict):
    name = TextField(max_length=100)
    ticket_types = serializers.ListField(child=TextField(max_length=40),
                                         required=False, allow_null=True, max_length=20)
    allow_reentry = StrictBooleanField(required=False, default=False)
    occupancy_limit = StrictIntegerField(required=False, allow_null=True, min_value=1,
                                         max_value=1_000_000)
    opens_at = serializers.DateTimeField(required=False, allow_null=True)
    closes_at = serializers.DateTimeField(required=False, allow_null=True)


class CheckinListOutput(serializers.Serializer):
    id = serializers.CharField()
    event_id = serializers.CharField()
    name = serializers.CharField()
    ticket_types = serializers.ListField(child=serializers.CharField(), allow_null=True,
                                         help_text="null: every ticket type of the event")
    allow_reentry = serializers.BooleanField()
    occupancy_limit = serializers.IntegerField(allow_null=True)
    opens_at = serializers.DateTimeField(allow_null=True)
    closes_at = serializers.DateTimeField(allow_null=True)
    public_key = serializers.SerializerMethodField(
        help_text="The event's Ed25519 public key (raw, base64url): check codes offline.")

    public_keys = serializers.SerializerMethodField(
        help_text="Every key a code may verify with: the signing one first, then those of "
        "secrets being rotated out (SECRET_KEY_FALLBACKS). Offline, accept a code any verifies.")

    def get_public_key(self, checkin_list) -> str:
        return get_booking_service().pass_public_key(checkin_list.event_id)

    def get_public_keys(self, checkin_list) -> list[str]:
        return get_booking_service().pass_public_keys(checkin_list.event_id)


class CheckinListCounts(CheckinListOutput):
    expected = serializers.IntegerField()
    admitted = serializers.IntegerField()
    inside = serializers.IntegerField()
    conflicts = serializers.IntegerField()


class ScanInput(Strict):
    code = TextField(max_length=1000, trim_whitespace=True,
                     help_text="The pass's code (its QR code's text), its short code "
                     "(\"917B-981D-1\") or its order's booking reference (\"917B-981D\").")
    direction = serializers.ChoiceField(choices=DIRECTIONS, required=False, default=ENTRY)
    nonce = serializers.RegexField(r"^[A-Za-z0-9_-]{8,64}$", help_text="The scan's own key: "
                                   "8-64 letters, digits, '-' or '_', fresh per scan.")
    gate = TextField(max_length=60, required=False, allow_null=True)


class OfflineScanInput(ScanInput):
    scanned_at = serializers.DateTimeField(help_text="When the phone made the scan.")


class BatchInput(Strict):
    scans: serializers.ListSerializer = serializers.ListSerializer(
        child=OfflineScanInput(), allow_empty=False, max_length=MAX_BATCH)


class ChoiceOutput(serializers.Serializer):
    short_code = serializers.CharField(help_text="Scan this to admit this pass.")
    ticket_label = serializers.CharField()
    code = serializers.CharField()
    status = serializers.CharField(help_text="valid or cancelled")

    def to_representation(self, instance):
        short, label, code, status = instance
        return {"short_code": short, "ticket_label": label, "code": code, "status": status}


class ScanOutput(serializers.Serializer):
    status = serializers.ChoiceField(choices=STATUSES)
    accepted = serializers.BooleanField(help_text="true: let the person through")
    message = serializers.CharField()
    nonce = serializers.CharField()
    direction = serializers.CharField()
    scanned_at = serializers.DateTimeField()
    gate = serializers.CharField(allow_null=True)
    pass_id = serializers.CharField(allow_null=True)
    ticket_type = serializers.CharField(allow_null=True)
    ticket_label = serializers.CharField(allow_null=True)
    attendee_name = serializers.CharField(allow_null=True)
    first_admitted_at = serializers.DateTimeField(allow_null=True)
    first_gate = serializers.CharField(allow_null=True)
    offline = serializers.BooleanField()
    conflict = serializers.BooleanField()
    choices = ChoiceOutput(many=True, help_text="choose_pass: the booking's passes on this "
                           "list; scan one by its short code")


class ConflictOutput(serializers.Serializer):
    pass_id = serializers.CharField()
    ticket_type = serializers.CharField()
    first_at = serializers.DateTimeField(allow_null=True)
    first_gate = serializers.CharField(allow_null=True)
    second_at = serializers.DateTimeField()
    second_gate = serializers.CharField(allow_null=True)
    nonce = serializers.CharField()
    reported_at = serializers.DateTimeField()


class EventCheckinLists(ApiView):
    actions = {"GET": rights.SEE_DOOR, "POST": rights.CHANGE}

    @extend_schema(operation_id="checkin_lists_list",
                   responses={200: CheckinListOutput(many=True),
                              **problems(401, 403, 404, 503)})
    def get(self, request, event_id):
        """The event's check-in lists (anyone who may scan at its door)."""
        found = get_booking_service().checkin_lists(self.event.id)
        return Response({"results": CheckinListOutput(found, many=True).data})

    @extend_schema(operation_id="checkin_lists_create", request=CheckinListInput,
                   parameters=[OpenApiParameter(idempotency.HEADER, str,
                                                OpenApiParameter.HEADER, required=True)],
                   responses={201: CheckinListOutput, **problems(400, 401, 403, 404, 422, 503)})
    def post(self, request, event_id):
        """Create a check-in list (admin or editor, write scope). The Idempotency-Key
        names the list: a retry answers 201 with the same list."""
        request_id = idempotency.keyed_request_id(request)
        payload = CheckinListInput(data=request.data)
        payload.is_valid(raise_exception=True)
        created = get_booking_service().create_checkin_list(
            self.event.id, request_id=request_id, **payload.validated_data)
        return Response(CheckinListOutput(created).data, status=201)


class CheckinListDetail(ApiView):
    actions = {"GET": rights.SEE_DOOR}

    @extend_schema(operation_id="checkin_lists_retrieve",
                   responses={200: CheckinListCounts, **problems(401, 403, 404, 503)})
    def get(self, request, list_id):
        """The list with live counts: expected, admitted, inside now, conflicts."""
        found = get_booking_service().checkin_list(self.checkin_list.id)
        body = dict(CheckinListCounts(found).data)
        if self.rights.may_event(rights.VIEW, self.event):
            body["conflict_log"] = ConflictOutput(
                get_booking_service().checkin_conflicts(found.id), many=True).data
        return Response(body)


# A method a view does not define (OPTIONS too) needs CHANGE, then answers 405.
class Scans(ApiView):
    actions = {"POST": rights.SCAN, "GET": rights.CHANGE}
    http_method_names = ["post"]

    @extend_schema(operation_id="checkin_scans_create", request=ScanInput,
                   parameters=[OPTIONAL_KEY],
                   responses={200: ScanOutput, **problems(400, 401, 403, 404, 503)})
    def post(self, request, list_id):
        """Scan a pass: 200 with the door's decision, whatever it is. The scan is stamped
        with the server's time (a ``scanned_at`` is refused: queued scans go to the batch)."""
        payload = ScanInput(data=request.data)
        payload.is_valid(raise_exception=True)
        data = payload.validated_data
        key = request.headers.get(idempotency.HEADER)
        if key is not None and key.strip().strip('"') != data["nonce"]:
            raise Refused(KEY_MISMATCH, "The Idempotency-Key, if sent, must equal the nonce.")
        result = get_booking_service().scan(
            self.checkin_list.id, data["code"], direction=data["direction"],
            nonce=data["nonce"], gate=data.get("gate"))
        return Response(ScanOutput(result).data)


class ScanBatch(ApiView):
    actions = {"POST": rights.SCAN, "GET": rights.CHANGE}
    http_method_names = ["post"]

    @extend_schema(operation_id="checkin_scans_batch", request=BatchInput,
                   responses={200: ScanOutput(many=True), **problems(400, 401, 403, 404, 503)})
    def post(self, request, list_id):
        """An offline scanner's queue: each scan with its nonce and the time it was made,
        decided in that order; the answers in the order sent. Sending it again changes
        nothing (each nonce answers its first answer)."""
        payload = BatchInput(data=request.data)
        payload.is_valid(raise_exception=True)
        results = get_booking_service().scan_batch(
            self.checkin_list.id, [dict(scan) for scan in payload.validated_data["scans"]])
        return Response({"results": ScanOutput(results, many=True).data})

