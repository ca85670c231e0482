"""Organizers' webhook endpoints: registered per event or for all, listed, removed, enabled.

Only ``https://`` URLs whose host is a public address are taken (``PublicUrls`` in
``addresses``: the name is resolved at registration, and again at every delivery). The
``WEBHOOK_ALLOWED_HOSTS`` setting lists hosts allowed anyway, for development.
Each endpoint gets its own secret (``whsec_...``), shown to its organizer.
"""
import hashlib
import json
import time
import uuid
from dataclasses import dataclass, field

from booking.dynamo.access import ConditionFailed
from booking.dynamo.webhooks import WebhookDeliveries, WebhookEndpoints
from booking.errors import EventNotFound, InvalidBooking, WebhookNotFound
from booking.webhooks import signing
from booking.webhooks.addresses import PublicUrls

REGISTRATION_CREATED, REGISTRATION_CANCELLED = "registration.created", "registration.cancelled"
WAITINGLIST_OFFERED, WAITINGLIST_ACCEPTED = "waitinglist.offered", "waitinglist.accepted"
EVENT_FULL, STREAMS_DECIDED = "event.full", "streams.decided"
CHECKIN_ADMITTED, CHECKIN_CONFLICT = "checkin.admitted", "checkin.conflict"
EVENT_TYPES = (REGISTRATION_CREATED, REGISTRATION_CANCELLED, WAITINGLIST_OFFERED,
               WAITINGLIST_ACCEPTED, EVENT_FULL, STREAMS_DECIDED, CHECKIN_ADMITTED,
               CHECKIN_CONFLICT)
ALL_EVENTS = "*"  # an endpoint's scope: every event, or one event's id
MAX_URL = 2000
KEY_REUSED = "This key was already used to register a different endpoint."


@dataclass(frozen=True)
class Endpoint:
    id: str
    url: str
    secret: str
    events: tuple[str, ...]
    scope: str  # ALL_EVENTS or an event id
    owner: str  # the id of the user who registered it ("" if outside the admin and API)
    description: str = ""
    created_at: float = 0.0
    failing_since: float | None = None
    disabled_at: float | None = None
    disabled_reason: str = field(default="", compare=False)
    deleted_at: float | None = None
    # The organizer it belongs to: it gets only that organizer's events' changes.
    organizer: str = ""

    @property
    def active(self) -> bool:
        return self.disabled_at is None and self.deleted_at is None

    def wants(self, event_type: str, event_id: str) -> bool:
        return self.active and event_type in self.events and self.scope in (ALL_EVENTS, event_id)


def endpoint_from_item(item: dict) -> Endpoint:
    number = (lambda v: None if v is None else float(v))
    return Endpoint(id=item["endpoint_id"], url=item["url"], secret=item["secret"],
                    events=tuple(item["events"]), scope=item["scope"], owner=item.get("owner", ""),
                    description=item.get("description", ""),
                    created_at=float(item.get("created_at", 0)),
                    failing_since=number(item.get("failing_since")),
                    disabled_at=number(item.get("disabled_at")),
                    disabled_reason=item.get("disabled_reason", ""),
                    deleted_at=number(item.get("deleted_at")),
                    organizer=item.get("organizer", ""))


class WebhookRegistry:
    """Endpoints for ``event_exists(event_id)`` (returns the event, raises
    ``EventNotFound``) under ``url_policy``. Each belongs to an organizer; ``organizers``
    (slugs; None: every one) is what the asker may see, decided by the entry point."""

    def __init__(self, *, endpoints: WebhookEndpoints, deliveries: WebhookDeliveries,
                 event_exists, url_policy=None, retention_seconds: float = 7 * 86400):
        self.retention_seconds = retention_seconds
        self.endpoints = endpoints
        self.delivery_log = deliveries
        self.event_exists = event_exists
        self.url_policy = url_policy or PublicUrls()

    def register(self, *, url, events, scope=ALL_EVENTS, owner="", description="",
                 request_id: str | None = None, organizer: str = "") -> Endpoint:
        """A new endpoint with a new secret; bad input raises ``InvalidBooking``, storing nothing.

        ``request_id`` (an API call's Idempotency-Key) names the endpoint: its item is the
        record of the request, so a repeat answers the endpoint it made (also after it was
        removed), and the same id with other content is refused (``field="request_id"``).
        A ``scope`` that is not one of ``organizer``'s events raises ``EventNotFound``,
        exactly as a missing one.
        """
        url, description = _text(url, "url", MAX_URL), _text(description, "description", 200,
                                                              empty=True)
        refused = self.url_policy.refusal(url)
        if refused:
            raise InvalidBooking(refused, field="url")
        events = _event_types(events)
        scope = _text(scope, "scope", 100)
        if scope != ALL_EVENTS and self.event_exists(scope).organizer != organizer:
            raise EventNotFound()
        content = {"url": url, "events": list(events), "scope": scope, "owner": str(owner),
                   "description": description, **({"organizer": organizer} if organizer else {})}
        fingerprint = hashlib.sha256(json.dumps(content, sort_keys=True).encode()).hexdigest()
        name = hashlib.sha256(request_id.encode()).hexdigest()[:32] if request_id else uuid.uuid4().hex
        item = {"endpoint_id": "ep_" + name, **content, "secret": signing.new_secret(),
                "fingerprint": fingerprint, "created_at": int(time.time())}
        try:
            self.endpoints.put(item)
        except ConditionFailed as taken:
            if (taken.old_item or {}).get("fingerprint") != fingerprint:
                raise InvalidBooking(KEY_REUSED, field="request_id") from None
            item = taken.old_item or {}  # (None was refused above: no fingerprint)
        return endpoint_from_item(item)

    def listing(self, *, organizers=None) -> list[Endpoint]:
        """Every endpoint (of ``organizers``), oldest first."""
        found = [endpoint_from_item(i) for i in self.endpoints.all() if "deleted_at" not in i]
        return sorted((e for e in found if organizers is None or e.organizer in organizers),
                      key=lambda e: (e.created_at, e.id))

    def get(self, endpoint_id: str, *, organizers=None) -> Endpoint:
        """The endpoint; ``WebhookNotFound`` when missing or another organizer's."""
        item = self.endpoints.get(endpoint_id) if _plausible(endpoint_id) else None
        if (item is None or "deleted_at" in item
                or (organizers is not None and item.get("organizer", "") not in organizers)):
            raise WebhookNotFound()
        return endpoint_from_item(item)

    def assign_organizer(self, organizer: str) -> list[str]:
        """Give every endpoint stored without an organizer to ``organizer`` (idempotent)."""
        assigned = []
        for item in self.endpoints.all():
            if not item.get("organizer") and self.endpoints.assign(item["endpoint_id"],
                                                                   organizer):
                assigned.append(item["endpoint_id"])
        return assigned

    def remove(self, endpoint_id: str, *, organizers=None) -> None:
        """Delete it; deliveries still owed to it are abandoned by the worker."""
        self.get(endpoint_id, organizers=organizers)
        now = time.time()
        if not self.endpoints.delete(endpoint_id, now=now,
                                     ttl=int(now + self.retention_seconds)):
            raise WebhookNotFound()

    def enable(self, endpoint_id: str, *, organizers=None) -> None:
        """Take a disabled endpoint back: it gets changes made from now on."""
        self.get(endpoint_id, organizers=organizers)
        self.endpoints.enable(endpoint_id)

    def deliveries(self, endpoint_id: str, *, organizers=None,
                   limit: int = 50) -> list[dict]:
        """The endpoint's newest deliveries with their attempts (the delivery log)."""
        self.get(endpoint_id, organizers=organizers)
        return self.delivery_log.for_endpoint(endpoint_id, limit=limit)


def _plausible(endpoint_id) -> bool:
    return isinstance(endpoint_id, str) and endpoint_id.startswith("ep_") and len(endpoint_id) < 60


def _text(value, name: str, limit: int, *, empty: bool = False) -> str:
    if not isinstance(value, str) or (not value.strip() and not empty) or len(value) > limit:
        raise InvalidBooking(f"Enter a {name} of at most {limit} characters.", field=name)
    return value.strip()


def _event_types(events) -> tuple[str, ...]:
    if (not isinstance(events, (list, tuple)) or not events
            or not all(isinstance(e, str) and e in EVENT_TYPES for e in events)):
        raise InvalidBooking("Choose one or more of: " + ", ".join(EVENT_TYPES) + ".",
                             field="events")
    return tuple(dict.fromkeys(events))
