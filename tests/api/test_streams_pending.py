"""On ``streams`` a booking waits in line for the decider: the API answers 202 with
Retry-After and Location while it waits, and the same request asked again answers the
decision once made (201 confirmed, 409 full), never the stored first answer. Against
DynamoDB Local (its stream is real)."""
import pytest
from rest_framework.response import Response
from rest_framework.test import APIRequestFactory

from booking.api.serializers import BookingInput, RegistrationOutput
from booking.api.views import EventRegistrations, keyed_input
from booking.strategies.streams.decider import StreamDecider
from booking.wiring import get_booking_service

pytestmark = pytest.mark.usefixtures("server_store")


class ReplayingRegistrations(EventRegistrations):
    """The control: answers what ``book`` returned, as the API did before: 201 for a request
    that only waits, and the stored first answer replayed after the decision."""

    def post(self, request, event_id):
        request_id, data = keyed_input(request, BookingInput, event_id)
        registration = get_booking_service().book(
            event_id, name=data["name"], email=data["email"], request_id=request_id)
        return Response(RegistrationOutput(registration).data, status=201)


@pytest.fixture(autouse=True)
def no_limits(settings):
    settings.BOOKING_SIGNUP_RATE = settings.BOOKING_SIGNUP_EMAIL_RATE = "off"


def ask(view_class, event_id, key, email):
    request = APIRequestFactory().post(
        f"/api/v1/events/{event_id}/registrations/", {"name": "Someone", "email": email},
        format="json", HTTP_IDEMPOTENCY_KEY=key)
    response = view_class.as_view()(request, event_id=event_id)
    response.render()
    return response


def two_people_one_seat(view_class):
    """Ann and Bo ask for the one seat, the decider decides, both ask again with their
    keys: each answer's (status, body status, Retry-After, Location)."""
    service = get_booking_service()
    event = service.create_event(name="One seat", capacity=1, strategy="streams")
    people = [("key-ann", "ann@example.com"), ("key-bo", "bo@example.com")]
    first = [ask(view_class, event.id, key, email) for key, email in people]
    outcomes, caught_up = StreamDecider(service.strategy("streams")).run_pass()
    assert caught_up and outcomes["confirmed"] == 1 and outcomes["rejected"] == 1
    again = [ask(view_class, event.id, key, email) for key, email in people]
    return first, again


def test_two_people_one_seat__202_pending_then_the_decision_with_the_same_key():
    first, again = two_people_one_seat(EventRegistrations)

    for response in first:
        assert response.status_code == 202, response.data
        assert response.data["status"] == "pending" and "same Idempotency-Key" in (
            response.data["detail"])
        assert 1 <= int(response["Retry-After"]) <= 3
        assert response["Location"] == f"/api/v1/registrations/{response.data['secret']}/"
    assert sorted(r.status_code for r in again) == [201, 409]
    confirmed = next(r for r in again if r.status_code == 201)
    full = next(r for r in again if r.status_code == 409)
    assert confirmed.data["status"] == "confirmed"
    assert full.data["type"].endswith("/event-full")
    # The one told 201 holds the seat, and the other's Location says "rejected".
    service = get_booking_service()
    [holder] = [r for r in service.registrations(confirmed.data["event_id"])
                if r.is_confirmed]
    assert holder.registration_id == confirmed.data["id"]


def test_control__replaying_the_first_answer__told_201_for_what_only_waited():
    first, again = two_people_one_seat(ReplayingRegistrations)

    # What the test above refuses: 201 "pending" for both, and again after the decision.
    assert [r.status_code for r in first + again] == [201] * 4
    assert [r.data["status"] for r in again] == ["pending", "pending"]
