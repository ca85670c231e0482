"""The organizer's questions and a person's answers in the API (docs/api.md#questions).

- ``GET /events/{id}/questions/`` (public: the signup asks them) and ``PUT`` the same path
  with a write token: ``{"questions": [...], "expected_version": n}`` (version-checked:
  412 ``stale-edit`` if they changed since read);
- ``GET`` / ``PUT /registrations/{secret}/answers/``: the person's own answers through
  their secret, ``expected_version`` the version read (412 if changed since).

Thin over ``BookingService``; the rules are ``booking/questions/rules.py``'s."""
from drf_spectacular.utils import extend_schema
from rest_framework import serializers
from rest_framework.response import Response

from booking.api.base import ApiView
from booking.api.schema import problems
from booking.api.serializers import StrictIntegerField, StrictSerializer
from booking.api.views import _read_secret
from booking.errors import NotRegistered
from booking.organizers import rights
from booking.webhooks.fanout import answers_data
from booking.wiring import get_booking_service


class QuestionOutput(serializers.Serializer):
    # Fields named as a question's keys; three share a name with a field's own attribute
    # (``label``, ``required``, ``help_text``), which DRF's metaclass moves out of the way.
    id = serializers.CharField()
    label = serializers.CharField()  # type: ignore[assignment]
    kind = serializers.CharField(help_text="text, long_text, choice, multiple_choice, "
                                           "boolean, number, date, email or phone")
    required = serializers.BooleanField()  # type: ignore[assignment]
    choices = serializers.ListField(child=serializers.CharField())
    help_text = serializers.CharField(allow_blank=True)  # type: ignore[assignment]
    ticket_types = serializers.ListField(child=serializers.CharField(), help_text=(
        "The ticket types that ask it (empty: every type)."))
    per_pass = serializers.BooleanField(help_text="Asked of each seat's attendee, not once "
                                                  "per order.")


class QuestionsOutput(serializers.Serializer):
    questions = QuestionOutput(many=True)
    version = serializers.IntegerField(help_text="Send it back as expected_version.")


class QuestionsInput(StrictSerializer):
    questions = serializers.ListField(child=serializers.JSONField(), max_length=100)
    expected_version = StrictIntegerField(min_value=0, help_text=(
        "The version read (0: the event never had questions)."))


class AnswersOutput(serializers.Serializer):
    answers = serializers.DictField(help_text="Question id -> answer (the order's).")
    pass_answers = serializers.ListField(child=serializers.DictField(), help_text=(
        "One object per seat, in the order's seats by ticket type name."))
    version = serializers.IntegerField(help_text="Send it back as expected_version.")


class AnswersInput(StrictSerializer):
    answers = serializers.JSONField(required=False)
    pass_answers = serializers.JSONField(required=False)
    expected_version = StrictIntegerField(min_value=0)


def questions_body(event) -> dict:
    return {"questions": [q.as_dict() for q in event.questions],
            "version": event.questions_version}


def answers_body(stored) -> dict:
    return {**answers_data(stored), "version": stored.version if stored else 0}


class EventQuestions(ApiView):
    public_methods = ("GET",)
    actions = {"PUT": rights.CHANGE}

    @extend_schema(operation_id="questions_retrieve",
                   responses={200: QuestionsOutput, **problems(404, 503)})
    def get(self, request, event_id):
        """The event's questions, in order, and their version."""
        return Response(questions_body(get_booking_service().get_event(event_id)))

    @extend_schema(operation_id="questions_update", request=QuestionsInput,
                   responses={200: QuestionsOutput, **problems(400, 401, 403, 404, 412, 503)})
    def put(self, request, event_id):
        """Replace the questions as read at ``expected_version`` (412 if they changed
        since). Answers to a question removed are kept, shown as removed."""
        payload = QuestionsInput(data=request.data)
        payload.is_valid(raise_exception=True)
        event = get_booking_service().set_questions(
            self.event.id, payload.validated_data["questions"],
            expected_version=payload.validated_data["expected_version"])
        return Response(questions_body(event))


class RegistrationAnswers(ApiView):
    public_methods = ("GET", "PUT")  # the person's own secret

    @extend_schema(operation_id="answers_retrieve",
                   responses={200: AnswersOutput, **problems(404, 503)})
    def get(self, request, secret):
        """The order's answers and their version."""
        service, registration = _registration(secret)
        return Response(answers_body(service.answers(registration)))

    @extend_schema(operation_id="answers_update", request=AnswersInput,
                   responses={200: AnswersOutput, **problems(400, 404, 409, 412, 503)})
    def put(self, request, secret):
        """Replace the answers as read at ``expected_version`` (412 ``stale-edit`` if they
        changed since: nothing written), until the event starts (409)."""
        payload = AnswersInput(data=request.data)
        payload.is_valid(raise_exception=True)
        service, registration = _registration(secret)
        stored = service.edit_answers(
            registration, answers=payload.validated_data.get("answers"),
            pass_answers=payload.validated_data.get("pass_answers"),
            expected_version=payload.validated_data["expected_version"])
        return Response(answers_body(stored))


def _registration(secret):
    ref = _read_secret(secret)
    service = get_booking_service()
    registration = service.find_registration(ref.event_id, email=ref.email)
    if not ref.matches(registration):
        raise NotRegistered()
    return service, registration
