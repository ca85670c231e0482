"""Map domain records to DynamoDB items and back."""
import logging
from collections.abc import Iterable
from typing import Any
from datetime import datetime
from datetime import timezone as dt_timezone

from booking.dynamo.expressions import projection
from booking.models import CONFIRMED, Event, Question, Registration, WaitlistEntry


def _iso(value: datetime | None) -> str | None:
    return value.isoformat() if value is not None else None


def _parse(value: str | None) -> datetime | None:
    return datetime.fromisoformat(value) if value else None


def _stored_time(value: str) -> datetime:
    """A time every stored record carries (its creation, its registration)."""
    parsed = _parse(value)
    assert parsed is not None, "a record stored without its time"
    return parsed


def _parse_start(value: str | None, event_id: str) -> datetime | None:
    """A stored start in UTC; one that cannot be read or shown in UTC (stored before starts
    were range-checked) counts as "to be announced" rather than breaking every page."""
    try:
        return datetime.fromisoformat(value).astimezone(dt_timezone.utc) if value else None
    except (TypeError, ValueError, OverflowError):
        logging.getLogger(__name__).warning(
            "Event %s has an unusable start %r; showing it without one.", event_id, value)
        return None


def event_item(event: Event) -> dict:
    return {
        "event_id": event.id,
        "name": event.name,
        "name_folded": event.name.casefold(),  # for case-insensitive search
        "ends_at": _iso(event.ends_at),
        "time_zone": event.time_zone,
        "description": event.description,
        "venue": event.venue,
        "capacity": event.capacity,
        "strategy": event.strategy,
        "starts_at": _iso(event.starts_at),
        "created_at": _iso(event.created_at),
        "version": event.version,
        **order_attributes(event),
        **({"expected_rate": event.expected_rate} if event.expected_rate else {}),
        "request_fingerprint": event.request_fingerprint or None,
        **({"organizer": event.organizer} if event.organizer else {}),
        **({"code_only_types": list(event.code_only_types)} if event.code_only_types else {}),
        **({"ticket_descriptions": dict(event.ticket_descriptions)}
           if event.ticket_descriptions else {}),
        **({"ticket_labels": dict(event.ticket_labels)} if event.ticket_labels else {}),
    }


def order_attributes(event: Event) -> dict:
    """An event's quotas, ticket types and seats per order; nothing for a plain event, so
    it is stored exactly as events were before orders existed."""
    if event.is_plain:
        return {}
    return {"quota_capacities": dict(event.quotas),
            "ticket_types": {name: list(quotas) for name, quotas in event.ticket_types.items()},
            "max_per_order": event.max_per_order}


def _order_fields(item: dict) -> dict:
    if "ticket_types" not in item:
        return {}
    return {"quotas": {name: int(n) for name, n in item.get("quota_capacities", {}).items()},
            "ticket_types": {name: tuple(q) for name, q in item["ticket_types"].items()},
            "max_per_order": int(item.get("max_per_order", 1))}


def tickets_value(registration: Registration) -> dict:
    """The ``tickets`` attribute of an order (and ``part_request_id`` of a cancelled part);
    nothing for a plain registration."""
    if registration.ticket_counts is None:
        return {}
    part = {"part_request_id": registration.part_request_id} if registration.part_request_id else {}
    return {"tickets": dict(registration.ticket_counts), **part}


def _tickets(item: dict) -> dict | None:
    stored = item.get("tickets")
    return {name: int(n) for name, n in stored.items()} if stored else None


# Everything but the aggregate strategy's attendees map, which can be large.
EVENT_PROJECTION = projection(
    "event_id", "name", "capacity", "strategy", "starts_at", "created_at", "version", "ends_at",
    "time_zone", "description", "venue", "quota_capacities", "ticket_types", "max_per_order",
    "request_fingerprint", "organizer", "expected_rate", "code_only_types", "questions",
    "questions_version", "ticket_descriptions", "ticket_labels")


def event_from_item(item: dict) -> Event:
    return Event(
        id=item["event_id"],
        name=item["name"],
        capacity=int(item["capacity"]),
        strategy=item["strategy"],
        starts_at=_parse_start(item.get("starts_at"), item["event_id"]),
        created_at=_stored_time(item["created_at"]),
        version=int(item["version"]),
        ends_at=_parse_start(item.get("ends_at"), item["event_id"]),
        time_zone=item.get("time_zone") or "",
        description=item.get("description") or "",
        venue=item.get("venue") or "",
        **_order_fields(item),
        expected_rate=int(item["expected_rate"]) if item.get("expected_rate") else None,
        request_fingerprint=item.get("request_fingerprint") or "",
        organizer=item.get("organizer") or "",
        code_only_types=tuple(item.get("code_only_types") or ()),
        **_question_fields(item),
        ticket_descriptions=dict(item.get("ticket_descriptions") or {}),
        ticket_labels=dict(item.get("ticket_labels") or {}),
    )


def questions_value(questions: Iterable[Question]) -> list[dict]:
    """An event's questions as stored on its item (a list of maps, in order)."""
    return [question.as_dict() for question in questions]


def _question_fields(item: dict) -> dict:
    """An event's questions (none: stored as before questions existed)."""
    if "questions_version" not in item:
        return {}
    return {"questions": tuple(
        Question(id=q["id"], label=q["label"], kind=q["kind"], required=bool(q["required"]),
                 choices=tuple(q.get("choices") or ()), help_text=q.get("help_text") or "",
                 ticket_types=tuple(q.get("ticket_types") or ()),
                 per_pass=bool(q.get("per_pass"))) for q in item.get("questions") or []),
        "questions_version": int(item["questions_version"])}


def registration_item(registration: Registration, **extra: Any) -> dict:
    return {
        "event_id": registration.event_id,
        "email": registration.email,
        "name": registration.name,
        "registered_at": _iso(registration.registered_at),
        "registration_id": registration.registration_id,
        "request_id": registration.request_id,
        **({"contact": registration.contact} if registration.contact else {}),
        **({"status": registration.status} if registration.status != CONFIRMED else {}),
        **tickets_value(registration),
        **({"access_code": registration.access_code} if registration.access_code else {}),
        **extra,
    }


def registration_from_item(item: dict) -> Registration:
    return Registration(
        event_id=item["event_id"],
        email=item["email"],
        name=item["name"],
        registered_at=_stored_time(item["registered_at"]),
        registration_id=item["registration_id"],
        request_id=item.get("request_id"),
        contact=item.get("contact"),
        status=item.get("status", CONFIRMED),
        ticket_counts=_tickets(item),
        part_request_id=item.get("part_request_id"),
        access_code=item.get("access_code"),
    )


def attendee_value(registration: Registration) -> dict:
    """The aggregate strategy's map value for one attendee (the key is the e-mail)."""
    return {
        "name": registration.name,
        "registered_at": _iso(registration.registered_at),
        "registration_id": registration.registration_id,
        "request_id": registration.request_id,
        **({"contact": registration.contact} if registration.contact else {}),
        **tickets_value(registration),
        **({"access_code": registration.access_code} if registration.access_code else {}),
    }


def registration_from_attendee(event_id: str, email: str, value: dict) -> Registration:
    return registration_from_item({"event_id": event_id, "email": email, **value})


def registration_or_none(item: dict | None) -> Registration | None:
    return registration_from_item(item) if item else None


def _from_ms(ms: float) -> datetime:
    return datetime.fromtimestamp(ms / 1000, dt_timezone.utc)


def waitlist_entry_from_item(item: dict) -> WaitlistEntry:
    """A waiting-list entry; its times are stored as epoch milliseconds."""
    expires = item.get("offer_expires_at")
    return WaitlistEntry(
        event_id=item["event_id"], email=item["email"], name=item["name"],
        position=int(item["position"]), status=item["status"],
        joined_at=_from_ms(item["joined_at"]),
        contact=item.get("contact"), offer_id=item.get("offer_id"),
        offer_expires_at=_from_ms(expires) if expires else None,
        registration_id=item.get("registration_id"), hold=item.get("hold") or {},
        ticket_counts=_tickets(item))
