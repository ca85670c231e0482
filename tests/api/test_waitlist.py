"""The waiting list over the JSON API (moto, in process): ask to join with a key (the
address's owner confirms by e-mail), then with the offer's secret accept the seat or pass
it on."""
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


def test_join__full__202_same_answer_whoever_asks_nobody_in_line(client, service, full_event):
    service.join_waiting_list(full_event.id, name="Cy", email="cy@example.com")

    first = join(client, full_event)
    again = join(client, full_event)
    known = join(client, full_event, key="join-0002", email="cy@example.com")
    booked = join(client, full_event, key="join-0003", email="ada@example.com")

    assert {r.status_code for r in (first, again, known, booked)} == {202}
    assert first.json() == again.json() == known.json() == booked.json()
    assert "Cy" not in known.content.decode()
    assert [e.email for e in service.waiting_list(full_event.id)] == ["cy@example.com"]


def test_join__seats_left__409_nothing_stored(client, service):
    event = service.create_event(name="Room", capacity=2, strategy="lock_table")

    assert_problem(join(client, event), 409, "seats-available")
    assert service.waiting_list(event.id) == []


def test_offer__accepted_with_key__201_registration_replayed(client, service, full_event):
    service.join_waiting_list(full_event.id, name="Bo", email="bo@example.com")
    secret = offered_secret(service, full_event)

    first = post(client, f"/api/v1/offers/{secret}/accept/", {}, key="accept-0001")
    again = post(client, f"/api/v1/offers/{secret}/accept/", {}, key="accept-0001")

    assert first.status_code == again.status_code == 201 and first.json() == again.json()
    assert [r.email for r in service.registrations(full_event.id)] == ["bo@example.com"]


def test_offer__declined__204_seat_passes_on(client, service, full_event):
    service.join_waiting_list(full_event.id, name="Bo", email="bo@example.com")
    secret = offered_secret(service, full_event)

    assert client.delete(f"/api/v1/offers/{secret}/").status_code == 204
    assert_problem(client.delete(f"/api/v1/offers/{secret}/"), 404, "not-waiting")
    assert_problem(client.delete("/api/v1/offers/forged/"), 404, "bad-secret")


def test_join__order_event__tickets_asked_offered_and_accepted(client, service):
    from booking.api.serializers import WaitlistEntryOutput

    event = service.create_event(
        name="DevConf", capacity=2, strategy="aggregate", quotas={"workshop-a": 1},
        ticket_types={"conference": [], "workshop-a": ["workshop-a"]}, max_per_order=2)
    service.book(event.id, name="Ada", email="ada@example.com", tickets={"workshop-a": 1,
                                                                         "conference": 1})
    url = f"/api/v1/events/{event.id}/waiting-list/"
    for key, tickets in (("bad-00001", {"vip": 1}), ("bad-00002", {"conference": 0}),
                         ("bad-00003", {"conference": 3}), ("bad-00004", {}),
                         ("bad-00005", "two"), ("bad-00006", None)):
        body = {"name": "Bo", "email": "bo@example.com", "tickets": tickets}
        assert post(client, url, body, key=key).status_code == 400, tickets
    owed = [m for m in service.requests.outbox.pending() if m["kind"] == "waitlist-join"]
    assert owed == []

    asked = post(client, url, {"name": "Bo", "email": "bo@example.com",
                               "tickets": {"workshop-a": 1}}, key="join-0001")
    assert asked.status_code == 202
    [row] = [m for m in service.requests.outbox.pending() if m["kind"] == "waitlist-join"]
    assert row["tickets"] == {"workshop-a": 1}
    service.join_waiting_list(event.id, name="Bo", email="bo@example.com",
                              tickets={"workshop-a": 1})
    secret = offered_secret(service, event)
    entry = service.waiting_entry(event.id, email="bo@example.com")
    assert WaitlistEntryOutput(entry).data["tickets"] == {"workshop-a": 1}

    accepted = post(client, f"/api/v1/offers/{secret}/accept/", {}, key="accept-0001")

    assert accepted.status_code == 201 and accepted.json()["tickets"] == {"workshop-a": 1}


def test_join__more_of_a_quota_than_it_has__400_nothing_owed(client, service):
    from booking.wiring import mail_sender
    from tests.orders.test_orders import devconf

    event = devconf(service, "lock_table")  # workshop-b: 3 seats, all free
    response = post(client, f"/api/v1/events/{event.id}/waiting-list/",
                    {"name": "Bo", "email": "bo@example.com", "tickets": {"workshop-b": 4}},
                    key="join-quota")
    body = assert_problem(response, 400, "invalid")
    assert "Workshop B has 3 seats in all" in body["detail"]
    assert service.waiting_list(event.id) == [] and list(mail_sender().outbox.pending()) == []
