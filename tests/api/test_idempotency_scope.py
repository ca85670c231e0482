"""Idempotency-Keys are scoped to the caller: the API token, or without one the event and
the person (normalized e-mail). Two callers sending one key each get their own answer and
never see, block or detect the other's; the same caller's retry replays its first answer
and its reuse with another body is 422 (docs/api.md#the-idempotency-key-policy)."""
import pytest

from booking.api import idempotency
from tests.mail.helpers import deliver_owed
from tests.api.test_orders import book as book_tickets
from tests.api.test_orders import cancel_seats
from tests.api.test_organizer import issue
from tests.api.test_registrations import assert_problem, book, event, post  # noqa: F401
from tests.orders.test_orders import devconf

KEY = "1"  # as guessable as a key gets


def test_book__two_people_one_key__each_their_own_booking_never_the_others(client, service,
                                                                            event):
    ada = book(client, event, key=KEY)
    eve = book(client, event, key=KEY, name="Eve", email="eve@example.com")

    assert ada.status_code == eve.status_code == 201, eve.content
    assert eve.json()["email"] == "eve@example.com" and eve.json()["name"] == "Eve"
    assert ada.json()["secret"] not in eve.content.decode()
    assert "ada@example.com" not in eve.content.decode()
    assert sorted(r.email for r in service.registrations(event.id)) == [
        "ada@example.com", "eve@example.com"]


def test_book__key_pre_claimed_by_another__the_person_still_books(client, service, event):
    """Eve spends the key first (for herself); Ada's own request with it still books."""
    assert book(client, event, key=KEY, name="Eve", email="eve@example.com").status_code == 201

    ada = book(client, event, key=KEY)

    assert ada.status_code == 201 and ada.json()["email"] == "ada@example.com"
    assert service.find_registration(event.id, email="ada@example.com") is not None


def test_book__another_persons_key_answers_as_a_fresh_key_would(client, service):
    """The answer to a key someone else used is the answer to a key nobody used: the same
    status and the same body but for the registration's own id, time and secret."""
    first = service.create_event(name="One", capacity=5, strategy="lock_table")
    second = service.create_event(name="One", capacity=5, strategy="lock_table")
    book(client, first, key=KEY)  # Ada used the key at the first event only

    reused = book(client, first, key=KEY, name="Eve", email="eve@example.com").json()
    fresh = book(client, second, key="never-used", name="Eve", email="eve@example.com").json()

    own = ("id", "event_id", "registered_at", "secret", "passes")  # passes name the id
    assert {k: v for k, v in reused.items() if k not in own} == {
        k: v for k, v in fresh.items() if k not in own}


def test_book__same_person_retry__replays_even_with_the_address_spelled_otherwise(
        client, service, event):
    first = book(client, event, key=KEY)
    again = book(client, event, key=KEY, email="  ADA@Example.COM ")

    assert first.status_code == again.status_code == 201 and again.json() == first.json()
    assert len(service.registrations(event.id)) == 1


def test_book__same_person_other_name__422_nothing_stored(client, service, event):
    book(client, event, key=KEY)

    assert_problem(book(client, event, key=KEY, name="Ada King"), 422, "idempotency-key-reused")
    assert [r.name for r in service.registrations(event.id)] == ["Ada Lovelace"]


def test_book__same_person_same_key_other_event__its_own_booking(client, service, event):
    other = service.create_event(name="Other night", capacity=2, strategy="lock_table")
    book(client, event, key=KEY)

    again = book(client, other, key=KEY)

    assert again.status_code == 201 and again.json()["event_id"] == other.id
    assert len(service.registrations(other.id)) == 1


@pytest.mark.django_db
def test_book__two_tokens_one_key__each_their_own_the_same_token_replays(client, service,
                                                                          event):
    _, first_token = issue("write", username="org-a")
    _, second_token = issue("write", username="org-b")
    path = f"/api/v1/events/{event.id}/registrations/"

    ada = post(client, path, {"name": "Ada", "email": "ada@example.com"}, key=KEY,
               **first_token)
    bo = post(client, path, {"name": "Bo", "email": "bo@example.com"}, key=KEY,
              **second_token)
    replay = post(client, path, {"name": "Ada", "email": "ada@example.com"}, key=KEY,
                  **first_token)
    reuse = post(client, path, {"name": "Cy", "email": "cy@example.com"}, key=KEY,
                 **first_token)

    assert ada.status_code == bo.status_code == replay.status_code == 201, bo.content
    assert bo.json()["email"] == "bo@example.com" and replay.json() == ada.json()
    assert_problem(reuse, 422, "idempotency-key-reused")  # one token is one caller
    assert sorted(r.email for r in service.registrations(event.id)) == [
        "ada@example.com", "bo@example.com"]


def test_cancel_seats__two_people_one_key__each_frees_their_own(client, service):
    event = devconf(service, "lock_table")
    ada = book_tickets(client, event.id, {"conference": 2}, key="b-1").json()["secret"]
    eve = book_tickets(client, event.id, {"conference": 2}, key="b-2",
                       email="eve@example.com").json()["secret"]

    first = cancel_seats(client, ada, {"conference": 1}, key=KEY)
    second = cancel_seats(client, eve, {"conference": 2}, key=KEY)

    assert first.status_code == second.status_code == 200, second.content
    assert second.json() == {"cancelled": {"conference": 2}, "registration": None}
    assert service.find_registration(event.id, email="ada@example.com").ticket_counts == {
        "conference": 1}
    assert service.find_registration(event.id, email="eve@example.com") is None


def test_waitlist_join__two_people_one_key__each_gets_their_own_email(client, service,
                                                                      mailoutbox):
    event = service.create_event(name="Small room", capacity=1, strategy="lock_table")
    service.book(event.id, name="Ada", email="ada@example.com")
    deliver_owed()
    mailoutbox.clear()  # Ada's confirmation
    path = f"/api/v1/events/{event.id}/waiting-list/"

    answers = [post(client, path, {"name": name, "email": email}, key=KEY).status_code
               for name, email in (("Bo", "bo@example.com"), ("Cy", "cy@example.com"),
                                   ("Bo", "bo@example.com"))]

    deliver_owed()
    assert answers == [202, 202, 202]
    assert sorted(to for message in mailoutbox for to in message.to) == [
        "bo@example.com", "cy@example.com"]  # Bo's retry owes nothing more


def test_request_id__scoped_by_token_or_event_and_person():
    class Request:
        auth = None

    public = Request()
    token = Request()
    token.auth = type("Token", (), {"pk": 7})()

    ada = idempotency.caller_request_id(public, KEY, event_id="e1", email="ada@example.com")
    assert ada == idempotency.caller_request_id(public, KEY, event_id="e1",
                                                email="ADA@example.com")
    others = {idempotency.caller_request_id(public, KEY, event_id="e1", email="eve@example.com"),
              idempotency.caller_request_id(public, KEY, event_id="e2", email="ada@example.com"),
              idempotency.caller_request_id(public, "2", event_id="e1", email="ada@example.com"),
              idempotency.caller_request_id(token, KEY, event_id="e1", email="ada@example.com")}
    assert ada not in others and len(others) == 4
    assert idempotency.request_id(KEY, "token-7") in others  # a token's keys: the token alone
