"""The waiting list over the JSON API (moto, in process): join with a key, then with the
offer's secret accept the seat or pass it on."""
import pytest

from booking import links
from booking.waitlist import engine as waitlist_engine
from tests.api.test_registrations import assert_problem, post


@pytest.fixture
def full_event(service):
    event = service.create_event(name="Small room", capacity=1, strategy="lock_table")
    service.book(event.id, name="Ada", email="ada@example.com")
    return event


def join(client, event, key="join-0001", email="bo@example.com"):
    return post(client, f"/api/v1/events/{event.id}/waiting-list/",
                {"name": "Bo", "email": email}, key=key)


def offered_secret(service, event, email="bo@example.com"):
    """Cancel Ada's seat, wait for the offer, and return its link's secret."""
    service.cancel(event.id, email="ada@example.com")
    waitlist_engine.flush()
    entry = service.waiting_entry(event.id, email=email)
    return links.offer_token(event.id, entry.email, entry.offer_id)


def test_join__full__201_repeat_same_body_other_payload_422(client, service, full_event):
    first = join(client, full_event)
    again = join(client, full_event)

    assert first.status_code == again.status_code == 201
    assert first.json() == again.json() and first.json()["position"] == 1
    assert_problem(join(client, full_event, email="cy@example.com"), 422,
                   "idempotency-key-reused")


def test_join__seats_left__409_nothing_stored(client, service):
    event = service.create_event(name="Room", capacity=2, strategy="lock_table")

    assert_problem(join(client, event), 409, "seats-available")
    assert service.waiting_list(event.id) == []


def test_offer__accepted_with_key__201_registration_replayed(client, service, full_event):
    join(client, full_event)
    secret = offered_secret(service, full_event)

    first = post(client, f"/api/v1/offers/{secret}/accept/", {}, key="accept-0001")
    again = post(client, f"/api/v1/offers/{secret}/accept/", {}, key="accept-0001")

    assert first.status_code == again.status_code == 201 and first.json() == again.json()
    assert [r.email for r in service.registrations(full_event.id)] == ["bo@example.com"]


def test_offer__declined__204_seat_passes_on(client, service, full_event):
    join(client, full_event)
    secret = offered_secret(service, full_event)

    assert client.delete(f"/api/v1/offers/{secret}/").status_code == 204
    assert_problem(client.delete(f"/api/v1/offers/{secret}/"), 404, "not-waiting")
    assert_problem(client.delete("/api/v1/offers/forged/"), 404, "bad-secret")
