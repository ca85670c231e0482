"""Organizers' webhook endpoints over the API: an admin's token of the organizer, read
scope to list, write scope to register or remove (``ApiView.scope`` checks it and finds
the endpoint among the organizer's own). Thin over ``WebhookRegistry``;
docs/webhooks.md."""
from datetime import datetime
from datetime import timezone as dt_timezone

from drf_spectacular.utils import extend_schema
from rest_framework import serializers
from rest_framework.response import Response

from booking.api import idempotency
from booking.api.views import KEY_PARAMETER
from booking.api.base import ApiView
from booking.api.schema import PENDING, problems
from booking.api.serializers import StrictChoiceField, StrictSerializer, TextField
from booking.organizers import rights
from booking.webhooks.registry import ALL_EVENTS, EVENT_TYPES
from booking.wiring import webhook_registry

ENDPOINT_PROBLEMS = problems(401, 403, 404, 503)


class WebhookInput(StrictSerializer):
    url = TextField(max_length=2000,
                    help_text="https:// to a public address; port 443 or 1024-65535.")
    events = serializers.ListField(child=StrictChoiceField(EVENT_TYPES), min_length=1)
    event_id = TextField(required=False, allow_null=True, max_length=100,
                         help_text="One event's id; absent or null: every event.")
    description = TextField(required=False, allow_blank=True, max_length=200)


class WebhookOutput(serializers.Serializer):
    id = serializers.CharField()
    url = serializers.CharField()
    events = serializers.ListField(child=serializers.CharField())
    event_id = serializers.CharField(allow_null=True)
    description = serializers.CharField(allow_blank=True)
    created_at = serializers.DateTimeField()
    active = serializers.BooleanField()
    failing_since = serializers.DateTimeField(allow_null=True)
    disabled_reason = serializers.CharField(allow_blank=True)


class WebhookCreated(WebhookOutput):
    secret = serializers.CharField(help_text="whsec_...: verify signatures with it. Shown "
                                             "only in this answer (and its replays).")


class DeliveryOutput(serializers.Serializer):
    id = serializers.CharField()
    type = serializers.CharField()
    event_id = serializers.CharField()
    status = serializers.CharField(help_text="pending, delivered or abandoned")
    attempts = serializers.IntegerField()
    created_at = serializers.DateTimeField()
    log = serializers.ListField(child=serializers.DictField())


def _moment(epoch) -> datetime | None:
    return None if epoch is None else _at(epoch)


def _at(epoch) -> datetime:
    return datetime.fromtimestamp(float(epoch), dt_timezone.utc)


def endpoint_body(endpoint, *, with_secret=False) -> dict:
    body = {"id": endpoint.id, "url": endpoint.url, "events": list(endpoint.events),
            "event_id": None if endpoint.scope == ALL_EVENTS else endpoint.scope,
            "description": endpoint.description, "created_at": _moment(endpoint.created_at),
            "active": endpoint.active, "failing_since": _moment(endpoint.failing_since),
            "disabled_reason": endpoint.disabled_reason}
    if with_secret:
        return WebhookCreated({**body, "secret": endpoint.secret}).data
    return WebhookOutput(body).data


def delivery_body(row: dict) -> dict:
    log = [{"attempt": int(e["attempt"]), "at": _at(e["at"]).isoformat(),
            "status_code": int(e["status_code"]), "error": e["error"], "ms": int(e["ms"])}
           for e in row.get("log", [])]
    return DeliveryOutput({"id": row["delivery_id"], "type": row["event_type"],
                           "event_id": row["event_id"], "status": row["status"],
                           "attempts": int(row["attempts"]),
                           "created_at": _moment(row["created_at"]), "log": log}).data


WEBHOOK_ACTIONS = {"GET": rights.SEE_WEBHOOKS, "POST": rights.MANAGE, "DELETE": rights.MANAGE}


class WebhookList(ApiView):
    actions = WEBHOOK_ACTIONS

    @extend_schema(operation_id="webhooks_list",
                   responses={200: WebhookOutput(many=True), **ENDPOINT_PROBLEMS})
    def get(self, request):
        """Your organizer's webhook endpoints."""
        endpoints = webhook_registry().listing(organizers={self.organizer})
        return Response([endpoint_body(e) for e in endpoints])

    @extend_schema(operation_id="webhooks_create", request=WebhookInput,
                   parameters=[KEY_PARAMETER],
                   responses={201: WebhookCreated, **PENDING, **problems(400, 401, 403, 404, 415, 422,
                                                            503)})
    def post(self, request):
        """Register an https endpoint for some event types, of one event or all; the
        answer carries its signing secret. The Idempotency-Key names the endpoint."""
        request_id = idempotency.keyed_request_id(request)
        payload = WebhookInput(data=request.data)
        payload.is_valid(raise_exception=True)
        data = payload.validated_data
        endpoint = webhook_registry().register(
            url=data["url"], events=data["events"], scope=data.get("event_id") or ALL_EVENTS,
            owner=str(request.user.pk), description=data.get("description", ""),
            request_id=request_id, organizer=self.organizer)
        return Response(endpoint_body(endpoint, with_secret=True), status=201)


class WebhookDetail(ApiView):
    actions = WEBHOOK_ACTIONS

    @extend_schema(operation_id="webhooks_retrieve",
                   responses={200: WebhookOutput, **ENDPOINT_PROBLEMS})
    def get(self, request, endpoint_id):
        """One endpoint (its secret is not shown again)."""
        return Response(endpoint_body(self.endpoint))

    @extend_schema(operation_id="webhooks_destroy", responses={204: None, **ENDPOINT_PROBLEMS})
    def delete(self, request, endpoint_id):
        """Remove it: nothing more is sent to it, what is still owed is abandoned."""
        webhook_registry().remove(self.endpoint.id, organizers={self.organizer})
        return Response(status=204)


class WebhookDeliveries(ApiView):
    actions = WEBHOOK_ACTIONS

    @extend_schema(operation_id="webhooks_deliveries",
                   responses={200: DeliveryOutput(many=True), **ENDPOINT_PROBLEMS})
    def get(self, request, endpoint_id):
        """The endpoint's 50 newest deliveries, each with its attempts."""
        rows = webhook_registry().deliveries(self.endpoint.id, organizers={self.organizer})
        return Response([delivery_body(r) for r in rows])
