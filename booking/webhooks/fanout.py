"""From a change's outbox row to the webhook deliveries it owes (docs/webhooks.md).

Every change a webhook reports already writes an outbox row inside its own transaction
(``booking/exactly_once/outbox.py``): a booking or an accepted offer its confirmation, a
cancellation its notice, an offer its offer e-mail, a streams decision its confirmation or
rejection. The row lives until its e-mail went out, and every sender of that e-mail
(right after the request, the booking worker, ``replay_failed``) first calls this fan-out.
So a delivery is owed exactly when the change committed, with no extra write in the
change's transaction, and the row is never released before its deliveries exist.

An endpoint hears only of the events of its own organizer (``Event.organizer``).

Each delivery is one item keyed by a ``webhook-id`` derived from (endpoint, event type,
outbox row): a repeated fan-out finds it there and adds nothing. The body is fixed when
the delivery is written; every attempt sends the same bytes.

``event.full`` and ``waitinglist.accepted`` are read, not written: a confirmation whose
fan-out finds the event full (``availability``) reports it, once per capacity the event
fills at (every fan-out that finds it full names the same change), and a confirmation whose
person's waiting-list entry was booked with this registration (``waiting_entry``) was an
accepted offer. Those reads happen only when some endpoint asked for those types.
"""
import hashlib
import json
import time
from datetime import datetime
from datetime import timezone as dt_timezone

from booking.dynamo.webhooks import WebhookDeliveries, WebhookEndpoints
from booking.errors import EventNotFound
from booking.questions.rules import json_value
from booking.models import BOOKED, CANCELLATION, CONFIRMATION, OFFER, REJECTION
from booking.webhooks.registry import (ALL_EVENTS, CHECKIN_ADMITTED, CHECKIN_CONFLICT,
                                       EVENT_FULL, REGISTRATION_CANCELLED,
                                       REGISTRATION_CREATED, STREAMS_DECIDED,
                                       WAITINGLIST_ACCEPTED, WAITINGLIST_OFFERED,
                                       endpoint_from_item)

STREAMS = "streams"


def webhook_id(endpoint_id: str, change_key: str) -> str:
    """The delivery's id, the same for every fan-out of one change to one endpoint."""
    return "msg_" + hashlib.sha256(f"{endpoint_id}|{change_key}".encode()).hexdigest()[:32]


def body(event_type: str, at: float, data: dict) -> str:
    """The Standard Webhooks payload shape: type, timestamp, data."""
    stamp = datetime.fromtimestamp(at, dt_timezone.utc).isoformat().replace("+00:00", "Z")
    return json.dumps({"type": event_type, "timestamp": stamp, "data": data},
                      sort_keys=True, separators=(",", ":"))


class Fanout:
    """Owe deliveries for outbox rows. ``availability(event_id)`` and
    ``waiting_entry(event_id, email=)`` are the service's reads."""

    def __init__(self, *, endpoints: WebhookEndpoints, deliveries: WebhookDeliveries,
                 availability, waiting_entry, retention_seconds: float, clock=time.time,
                 answers=None):
        """``answers(event_id, registration_id)``: an order's stored answers (a
        ``registration.created`` of an event with questions carries them), or None."""
        self.endpoints = endpoints
        self.deliveries = deliveries
        self.availability = availability
        self.waiting_entry = waiting_entry
        self.retention_seconds = retention_seconds
        self.clock = clock
        self.answers = answers

    def __call__(self, message: dict, event) -> int:
        """Owe what ``message`` (an outbox row) means to every endpoint that wants it;
        return how many deliveries are new. ``event()`` gives its event, read if needed."""
        event_id = message["event_id"]
        wanting = self.listening(event_id, event)
        if not wanting:
            return 0
        now = self.clock()
        at = float(message.get("created_at") or now)
        wanted = {t for e in wanting for t in e.events}
        added = 0
        for event_type, data, change in self.changes(message, event, wanted):
            text = body(event_type, at, data)
            for endpoint in (e for e in wanting if event_type in e.events):
                item = {"delivery_id": webhook_id(endpoint.id, change),
                        "endpoint_id": endpoint.id, "event_type": event_type,
                        "event_id": event_id, "body": text}
                added += self.deliveries.add(item, now=now,
                                             ttl=int(now + self.retention_seconds))
        return added

    def scan(self, checkin_list, result, event) -> int:
        """Owe ``checkin.admitted`` for an admission and ``checkin.conflict`` for an
        offline double admission (``booking/checkin/``), keyed by the list and the scan's
        nonce: a scan answered again (its nonce) adds nothing. Called after the scan's
        write; a crash in between loses the delivery (docs/checkin.md)."""
        if result.status == "admitted":
            event_type = CHECKIN_ADMITTED
        elif result.conflict:
            event_type = CHECKIN_CONFLICT
        else:
            return 0
        wanting = [e for e in self.listening(checkin_list.event_id, event)
                   if event_type in e.events]
        if not wanting:
            return 0
        now = self.clock()
        data = {"event_id": checkin_list.event_id, "list_id": checkin_list.id,
                "list_name": checkin_list.name, "pass_id": result.pass_id,
                "registration_id": (result.pass_id or "").rsplit("-", 1)[0],
                "ticket_type": result.ticket_type, "name": result.attendee_name or "",
                "gate": result.gate, "scanned_at": result.scanned_at.isoformat(),
                "offline": result.offline}
        if event_type == CHECKIN_CONFLICT:
            data.update(first_admitted_at=result.first_admitted_at.isoformat()
                        if result.first_admitted_at else None, first_gate=result.first_gate)
        text = body(event_type, result.scanned_at.timestamp(), data)
        change = f"{event_type}|{checkin_list.id}|{result.nonce}"
        added = 0
        for endpoint in wanting:
            item = {"delivery_id": webhook_id(endpoint.id, change),
                    "endpoint_id": endpoint.id, "event_type": event_type,
                    "event_id": checkin_list.event_id, "body": text}
            added += self.deliveries.add(item, now=now, ttl=int(now + self.retention_seconds))
        return added

    def listening(self, event_id: str, event) -> list:
        """The active endpoints for the event: only its own organizer's (the organizer is
        read from the event, never guessed; a deleted event has nobody left to tell)."""
        wanting = [e for e in map(endpoint_from_item, self.endpoints.all())
                   if e.active and e.scope in (ALL_EVENTS, event_id)]
        if not wanting:
            return []
        try:
            owner = event().organizer
        except EventNotFound:
            return []
        return [e for e in wanting if e.organizer == owner]

    def changes(self, message: dict, event, wanted: set):
        """(event type, data, change key) for each change the row reports that some
        endpoint wants; the key names the change in every fan-out of it."""
        kind, data = message["kind"], registration_data(message)
        types = {CANCELLATION: REGISTRATION_CANCELLED, OFFER: WAITINGLIST_OFFERED,
                 REJECTION: STREAMS_DECIDED, CONFIRMATION: REGISTRATION_CREATED}
        if kind not in types:
            return
        key = f"{types[kind]}|{message['message_id']}"
        if kind == OFFER:
            expires = datetime.fromtimestamp(int(message["offer_expires_at"]) / 1000, dt_timezone.utc)
            data = {**data, "offer_expires_at": expires.isoformat()}
        elif kind == REJECTION:
            data = {**data, "outcome": "rejected"}
        if kind == CONFIRMATION and self.answers is not None and event().questions_version:
            data = {**data, **answers_data(self.answers(message["event_id"],
                                                        message["registration_id"]))}
        yield types[kind], data, key
        if kind == CONFIRMATION:
            yield from self._confirmation_extras(message, event, wanted, data)

    def _confirmation_extras(self, message, event, wanted, data):
        event_id, message_id = message["event_id"], message["message_id"]
        if STREAMS_DECIDED in wanted and event().strategy == STREAMS:
            yield STREAMS_DECIDED, {**data, "outcome": "confirmed"}, f"{STREAMS_DECIDED}|{message_id}"
        if WAITINGLIST_ACCEPTED in wanted:
            entry = self.waiting_entry(event_id, email=message["email"])
            if (entry is not None and entry.status == BOOKED
                    and entry.registration_id == message["registration_id"]):
                yield WAITINGLIST_ACCEPTED, data, f"{WAITINGLIST_ACCEPTED}|{message_id}"
        if EVENT_FULL in wanted:
            seats = self.availability(event_id)
            if seats.is_full:  # once per capacity it fills at, however many fan-outs see it
                yield (EVENT_FULL, {"event_id": event_id, "capacity": seats.capacity},
                       f"{EVENT_FULL}|{event_id}|{seats.capacity}")


def answers_data(stored) -> dict:
    """An order's ``answers`` and ``pass_answers`` as the webhooks and the API carry them."""
    if stored is None:
        return {"answers": {}, "pass_answers": []}
    return {"answers": {k: json_value(v) for k, v in stored.answers.items()},
            "pass_answers": [{k: json_value(v) for k, v in p.items()}
                             for p in stored.pass_answers]}


def registration_data(message: dict) -> dict:
    data = {"event_id": message["event_id"], "registration_id": message["registration_id"],
            "name": message.get("name", ""), "email": message.get("contact") or message["email"]}
    if message.get("tickets"):  # an order (docs/orders.md): the tickets this change is about
        data["tickets"] = {name: int(n) for name, n in message["tickets"].items()}
        if message.get("part_request_id"):  # some of the order's seats, not all of it
            data["part_of_order"] = True
    return data
