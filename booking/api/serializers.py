"""What the API reads and writes: request bodies (no unknown fields) and answers built
from domain records alone, so one registration always has one body."""
import base64
import binascii
import json

from drf_spectacular.utils import extend_schema_field
from rest_framework import serializers

from booking import links


class StrictSerializer(serializers.Serializer):
    """Refuses fields it does not declare (400, nothing stored)."""

    def validate(self, attrs):
        unknown = sorted(set(self.initial_data) - set(self.fields))
        if unknown:
            raise serializers.ValidationError({name: "Unknown field." for name in unknown})
        return attrs


class TextField(serializers.CharField):
    """A JSON string, never a number or a boolean turned into one."""

    def to_internal_value(self, data):
        if not isinstance(data, str):
            self.fail("invalid")
        return super().to_internal_value(data)


class StrictIntegerField(serializers.IntegerField):
    """A JSON integer, never a string ("5"), a float (1.0) or a boolean turned into one."""

    default_error_messages = {"invalid": "A whole number (a JSON integer) is required."}

    def to_internal_value(self, data):
        if isinstance(data, bool) or not isinstance(data, int):
            self.fail("invalid")
        return super().to_internal_value(data)


class StrictChoiceField(serializers.ChoiceField):
    """One of the choices as a JSON string (DRF's ChoiceField compares ``str(value)``)."""

    def to_internal_value(self, data):
        if not isinstance(data, str):
            self.fail("invalid_choice", input=str(data)[:40])
        return super().to_internal_value(data)


@extend_schema_field({"type": "string", "format": "email", "maxLength": 254})
class EmailText(TextField):
    """An e-mail address as typed (the service checks and normalizes it)."""


@extend_schema_field({"type": "object", "additionalProperties": {"type": "integer"},
                      "maxProperties": 20})
class CountsField(serializers.Field):
    """A JSON object of names to whole numbers (``{"conference": 2}``): the shape only; the
    service checks names and sizes (docs/orders.md)."""

    default_error_messages = {"invalid": "An object of names to whole numbers."}

    def to_internal_value(self, data):
        if not isinstance(data, dict) or not all(
                isinstance(k, str) and isinstance(v, int) and not isinstance(v, bool)
                for k, v in data.items()):
            self.fail("invalid")
        return dict(data)

    def to_representation(self, value):
        return dict(value)


@extend_schema_field({"type": "object", "maxProperties": 20, "additionalProperties": {
    "type": "array", "items": {"type": "string"}, "maxItems": 10}})
class TicketTypesField(serializers.Field):
    """Ticket type -> the further quotas it counts against (``{"workshop-a": ["workshop-a"]}``)."""

    default_error_messages = {"invalid": "An object of ticket types to lists of quota names."}

    def to_internal_value(self, data):
        if not isinstance(data, dict) or not all(
                isinstance(k, str) and isinstance(v, list) and all(isinstance(q, str) for q in v)
                for k, v in data.items()):
            self.fail("invalid")
        return {name: list(quotas) for name, quotas in data.items()}

    def to_representation(self, value):
        return {name: list(quotas) for name, quotas in value.items()}


@extend_schema_field({"type": "object", "maxProperties": 30,
                      "additionalProperties": {"type": "string", "maxLength": 300}})
class TextsField(serializers.Field):
    """A JSON object of names to text (``{"vip": "VIP"}``): the shape only; the service
    checks names and lengths."""

    default_error_messages = {"invalid": "An object of names to text."}

    def to_internal_value(self, data):
        if not isinstance(data, dict) or not all(
                isinstance(k, str) and isinstance(v, str) for k, v in data.items()):
            self.fail("invalid")
        return dict(data)

    def to_representation(self, value):
        return dict(value)


class RegistrationInput(StrictSerializer):
    name = TextField(min_length=1, max_length=200, trim_whitespace=False)
    email = EmailText(min_length=3, max_length=320, trim_whitespace=False)


TICKETS_HELP = ("Ticket type -> quantity (an order, docs/orders.md). Required on an event with "
                "several ticket types; leave it out for one seat of an event's only type.")


ANSWERS_HELP = ("Question id -> answer, for the event's questions asked once per order "
                "(GET events/{id}/questions/; docs/orders.md#questions).")
PASS_ANSWERS_HELP = ("One object of question id -> answer per seat of the order (seats by "
                     "ticket type name), for the questions asked per pass.")


class BookingInput(RegistrationInput):
    """A booking: a person and, for an event with ticket types, the order's tickets; the
    answers to the event's questions (the service checks them: 400 naming each field)."""

    tickets = CountsField(required=False, help_text=TICKETS_HELP)
    access_code = TextField(required=False, allow_blank=True, max_length=64, help_text=(
        "An access code (any case): the order uses it (docs/access-codes.md)."))
    answers = serializers.JSONField(required=False, help_text=ANSWERS_HELP)
    pass_answers = serializers.JSONField(required=False, help_text=PASS_ANSWERS_HELP)


class CancellationInput(StrictSerializer):
    """Seats of an order to give up: ticket type -> quantity (every seat: the whole order)."""

    tickets = CountsField(help_text="Ticket type -> quantity to cancel (at most what the order "
                                    "holds; all of them cancel the order).")


class WaitlistJoinInput(RegistrationInput):
    """A request to join the waiting list: a person and, on an event with ticket types, the
    order they wait for (the service checks every type and quantity: 400 naming the field,
    nothing stored)."""

    tickets = CountsField(required=False, help_text=TICKETS_HELP)


class EventEdit(StrictSerializer):
    """An organizer's edit: only the fields sent change (the service validates them)."""

    name = TextField(required=False, max_length=200)
    capacity = StrictIntegerField(required=False, min_value=0)
    starts_at = TextField(required=False, allow_null=True)
    ends_at = TextField(required=False, allow_null=True)
    time_zone = TextField(required=False)
    description = TextField(required=False, allow_blank=True)
    venue = TextField(required=False, allow_blank=True)
    quotas = CountsField(
        required=False,
        help_text="New sizes of further quotas (name -> seats; docs/orders.md), each never "
                  "below what it has confirmed and held")
    ticket_types = TicketTypesField(required=False, help_text=(
        "Ticket types to add to an event that sells them: type -> the further quotas it "
        "counts against (the event's own; every type counts against the capacity too). An "
        "existing type may be sent only as it is: none is removed or moved to other quotas, "
        "since bookings may hold it."))
    ticket_labels = TextsField(required=False, help_text=(
        "Ticket type or quota -> the label people read; only those sent change, and \"\" "
        "returns to the label derived from the name (at most 60 characters)."))
    ticket_descriptions = TextsField(required=False, help_text=(
        "Ticket type -> a sentence shown beside it; only those sent change, \"\" removes it "
        "(at most 300 characters)."))
    max_per_order = StrictIntegerField(required=False, help_text=(
        "Seats one order may hold, from 2 up, on an event that already sells several per "
        "order (one created with 1 keeps 1)."))


class EventCreate(StrictSerializer):
    """An organizer's new event (the service validates and normalizes every field)."""

    name = TextField(max_length=200)
    capacity = StrictIntegerField(min_value=0)
    strategy = TextField(required=False, help_text="aggregate, lock_table, slots or streams "
                                                   "(default: the site's)")
    starts_at = TextField(required=False, allow_null=True)
    ends_at = TextField(required=False, allow_null=True)
    time_zone = TextField(required=False)
    description = TextField(required=False, allow_blank=True)
    venue = TextField(required=False, allow_blank=True)
    quotas = CountsField(required=False, help_text="Further quotas beside the capacity: "
                                                   "name -> seats (docs/orders.md).")
    ticket_types = TicketTypesField(required=False, help_text=(
        "Ticket type -> the further quotas it counts against (each counts against the "
        "capacity too). Leave it out for the one type 'admission'."))
    max_per_order = StrictIntegerField(required=False, help_text="Seats one order may hold "
                                                                 "(default 1).")
    code_only_types = serializers.ListField(
        child=TextField(), required=False, max_length=20,
        help_text="Ticket types shown and bookable only with an access code that unlocks them.")


class QuotaOutput(serializers.Serializer):
    capacity = serializers.IntegerField()
    confirmed = serializers.IntegerField()
    held = serializers.IntegerField()
    remaining = serializers.IntegerField()


class AvailabilityOutput(serializers.Serializer):
    capacity = serializers.IntegerField()
    confirmed = serializers.IntegerField()
    held = serializers.IntegerField()
    remaining = serializers.IntegerField()
    is_full = serializers.BooleanField()
    quotas = serializers.DictField(child=QuotaOutput(), help_text=(
        "Every quota, the event's own ('capacity') first, in seats."))


class EventOutput(serializers.Serializer):
    id = serializers.CharField()
    name = serializers.CharField()
    capacity = serializers.IntegerField()
    starts_at = serializers.DateTimeField(allow_null=True)
    ends_at = serializers.DateTimeField(allow_null=True)
    time_zone = serializers.CharField(allow_blank=True)
    description = serializers.CharField(allow_blank=True)
    venue = serializers.CharField(allow_blank=True)
    version = serializers.IntegerField()
    quotas = CountsField(help_text="Further quotas beside the capacity: name -> seats.")
    ticket_types = TicketTypesField(help_text="Ticket type -> the further quotas it counts "
                                              "against.")
    max_per_order = serializers.IntegerField()
    ticket_labels = TextsField(help_text="Ticket type or quota -> the label its organizer "
                                         "typed, where one was (else derived from the name).")
    ticket_descriptions = TextsField(help_text="Ticket type -> its sentence, where it has one.")


class EventWithSeats(EventOutput):
    availability = AvailabilityOutput()


class EventPage(serializers.Serializer):
    results = EventWithSeats(many=True)
    next_cursor = serializers.CharField(allow_null=True)


class RegistrationOutput(serializers.Serializer):
    id = serializers.CharField(source="registration_id")
    event_id = serializers.CharField()
    name = serializers.CharField()
    email = serializers.CharField()
    status = serializers.CharField()
    registered_at = serializers.DateTimeField()
    tickets = CountsField(help_text="Ticket type -> quantity ({'admission': 1} for one seat "
                                    "of an event without types).")
    seats = serializers.IntegerField()
    secret = serializers.SerializerMethodField(
        help_text="The cancellation link's token: GET or DELETE registrations/{secret}/.")
    passes = serializers.SerializerMethodField(
        help_text="One pass per seat: id, ticket_type, ticket_label, code (the QR code's "
                  "text, signed), status (valid or cancelled).")

    def get_secret(self, registration) -> str:
        return links.registration_token(registration, salt=links.CANCEL_SALT)

    def get_passes(self, registration) -> list[dict]:
        """From the context's ``passes`` (registration id -> passes as they stand, read
        for a whole page at once), else as the booking issued them (a booking's answer,
        the same on every retry of its key)."""
        from booking.wiring import get_booking_service

        if registration.part_request_id or registration.cancelled_passes:
            # a cancellation's answer: the passes it cancelled
            return [{"id": pass_id, "status": "cancelled"}
                    for pass_id in registration.cancelled_passes]
        known = self.context.get("passes")
        found = (known.get(registration.registration_id, []) if known is not None
                 else get_booking_service().issued_passes(registration))
        return [{"id": p.pass_id, "ticket_type": p.ticket_type,
                 "ticket_label": p.ticket_label, "code": p.code, "status": p.status}
                for p in found]

    def to_representation(self, registration):
        """Without ``secret`` when the context says the reader may not see secrets (an
        organizer's read token)."""
        body = super().to_representation(registration)
        if self.context.get("secrets") is False:
            body.pop("secret", None)
        return body


class CancellationOutput(serializers.Serializer):
    cancelled = CountsField(help_text="The seats this request freed: ticket type -> quantity.")
    registration = RegistrationOutput(
        allow_null=True, help_text="What the order holds now (null: nothing, it is cancelled).")


class RegistrationPage(serializers.Serializer):
    results = RegistrationOutput(many=True)
    next_cursor = serializers.CharField(allow_null=True)


class WaitlistEntryOutput(serializers.Serializer):
    event_id = serializers.CharField()
    name = serializers.CharField()
    email = serializers.CharField()
    status = serializers.CharField()
    position = serializers.IntegerField()
    joined_at = serializers.DateTimeField()
    tickets = serializers.DictField(
        child=serializers.IntegerField(),
        help_text="What the entry asks for and an offer holds: ticket type -> quantity.")


def event_body(event, availability=None) -> dict:
    body = dict(EventOutput(event).data)
    if availability is not None:
        body["availability"] = AvailabilityOutput(availability).data
    return body


def encode_cursor(key: dict | None) -> str | None:
    """DynamoDB's LastEvaluatedKey as an opaque cursor."""
    if key is None:
        return None
    return base64.urlsafe_b64encode(json.dumps(key, sort_keys=True).encode()).decode()


def decode_cursor(cursor: str, field: str = "event_id") -> dict:
    """The key a cursor names (``{field: value}``); ValidationError if it is not one of ours."""
    try:
        key = json.loads(base64.urlsafe_b64decode(cursor.encode()))
    except (binascii.Error, ValueError, UnicodeError, RecursionError):
        raise serializers.ValidationError({"cursor": "Not a cursor this API gave."}) from None
    if (not isinstance(key, dict) or set(key) != {field}
            or not isinstance(key[field], str) or not key[field]):
        raise serializers.ValidationError({"cursor": "Not a cursor this API gave."})
    return key
