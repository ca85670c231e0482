"""The waiting list's double opt-in and its answers (moto, in process): asking to join
tells nobody anything about the address (its owner is told by e-mail), and only the
e-mailed confirmation link puts a person in line: once, for a while, in the order people
confirm. Asked-for but unconfirmed addresses never hold a seat."""
import re
import time

import pytest
from django.urls import reverse

from booking import links
from booking.dynamo.metrics import RequestMeter
from booking.waitlist import engine as waitlist_engine
from tests.web import test_waitlist
from tests.web.test_waitlist import ask, join, join_message, link_in

full_event = test_waitlist.full_event  # a one-seat event, Ada booked


def owed_join_messages(service) -> list:
    return [m for m in service.requests.outbox.pending() if m["kind"] == "waitlist-join"]


def test_ask__address_in_line_booked_or_new__same_page_no_name_owner_told_by_email(
        client, service, full_event):
    service.join_waiting_list(full_event.id, name="Secret Cy", email="cy@example.com")
    addresses = ["bo@example.com", "cy@example.com", "ada@example.com"]

    answers = [ask(client, full_event.id, name="Mallory", email=a) for a in addresses]

    bodies = [r.content.decode().replace(a, "ADDRESS") for r, a in zip(answers, addresses)]
    assert [r.status_code for r in answers] == [200, 200, 200]
    assert bodies[0] == bodies[1] == bodies[2]
    assert "Secret Cy" not in bodies[1] and "number" not in bodies[1]
    assert [e.email for e in service.waiting_list(full_event.id)] == ["cy@example.com"]
    new, waiting, booked = (join_message(a) for a in addresses)
    assert "/waiting-list/confirm/" in new.body and "Confirm your place" in new.subject
    assert "already on the waiting list" in waiting.body and "/confirm/" not in waiting.body
    assert "already has a booking" in booked.body and "/confirm/" not in booked.body


@pytest.mark.parametrize("strategy", ["aggregate", "lock_table", "slots"])
def test_ask__new_waiting_offered_or_booked__the_same_store_requests(service, strategy):
    full_event = service.create_event(name="Two seats", capacity=2, strategy=strategy)
    for name in ("Ada", "Ed"):
        service.book(full_event.id, name=name, email=f"{name.lower()}@example.com")
    service.join_waiting_list(full_event.id, name="Cy", email="cy@example.com")
    service.join_waiting_list(full_event.id, name="Di", email="di@example.com")
    service.cancel(full_event.id, email="ed@example.com")
    waitlist_engine.flush()  # Cy is offered the seat; Di waits; Ada stays booked
    meter = RequestMeter().install(service.store)
    seen = {}
    try:
        for email in ("bo@example.com", "bo@example.com", "cy@example.com", "di@example.com",
                      "ada@example.com"):
            with meter.track() as asked:
                service.request_to_join_waiting_list(full_event.id, name="Mallory", email=email)
            seen[email] = asked.operations
    finally:
        meter.uninstall()

    assert service.waiting_entry(full_event.id, email="cy@example.com").status == "offered"
    assert service.find_registration(full_event.id, email="ada@example.com") is not None
    assert (seen["bo@example.com"] == seen["cy@example.com"] == seen["di@example.com"]
            == seen["ada@example.com"]), seen
    assert seen["bo@example.com"][-1] == "PutItem"  # the e-mail's outbox row, nothing else


def test_ask__bad_input__400_no_email_owed(client, service, full_event):
    response = ask(client, full_event.id, name="\u3164", email="bo@example.com")

    assert response.status_code == 400
    assert owed_join_messages(service) == [] and service.waiting_list(full_event.id) == []


def test_confirm_link__get_asks_post_joins__order_is_the_order_of_confirmation(
        client, service, full_event):
    ask(client, full_event.id, name="Bo", email="bo@example.com")
    ask(client, full_event.id, name="Cy", email="cy@example.com")
    bo, cy = (link_in(join_message(a), "confirm/") for a in ("bo@example.com", "cy@example.com"))

    page = client.get(bo)
    listed_after_get = service.waiting_list(full_event.id)
    client.post(cy)
    place = client.get(client.post(bo)["Location"])

    assert page.status_code == 200 and "Confirm my place" in page.content.decode()
    assert listed_after_get == []
    assert [(e.email, e.position) for e in service.waiting_list(full_event.id)] == [
        ("cy@example.com", 1), ("bo@example.com", 2)]
    assert "number 2" in place.content.decode()


def test_confirm_link__used_once__after_leaving_it_does_not_join_again(client, service,
                                                                         full_event):
    ask(client, full_event.id, name="Bo", email="bo@example.com")
    confirm = link_in(join_message("bo@example.com"), "confirm/")
    place = client.post(confirm)["Location"]
    left = client.post(place, {"action": "leave"})

    again = client.post(confirm)

    assert left.status_code == 303 and "You have left" in client.get(place).content.decode()
    assert again.status_code == 303
    assert [e.status for e in service.waiting_list(full_event.id)] == ["left"]


def test_confirm_link__too_old__410_nothing_stored(client, service, full_event):
    ask(client, full_event.id, name="Bo", email="bo@example.com")
    confirm = link_in(join_message("bo@example.com"), "confirm/")
    service.waitlist.confirm_seconds = 0.0
    time.sleep(0.01)

    page = client.get(confirm)
    response = client.post(confirm)

    assert page.status_code == 410 and "Confirm my place" not in page.content.decode()
    assert response.status_code == 410 and "expired" in response.content.decode()
    assert service.waiting_list(full_event.id) == []


def test_confirm_and_place_links__forged__400(client, full_event):
    forged = links.join_token(links.JoinRef(full_event.id, "bo@example.com", "Bo", None,
                                            "r" * 32, time.time()))[:-4] + "AAAA"

    for url in (reverse("booking:waitlist_confirm", args=[forged]),
                reverse("booking:waitlist_place", args=[forged])):
        assert client.post(url).status_code == 400


def test_asked_but_never_confirmed__no_place_and_no_seat_held(client, service, full_event):
    ask(client, full_event.id, name="Bo", email="bo@example.com")  # never confirms
    join(client, full_event.id, name="Cy", email="cy@example.com")

    service.cancel(full_event.id, email="ada@example.com")
    waitlist_engine.flush()  # the offer made right after
    service.leave_waiting_list(full_event.id, email="cy@example.com")  # passes the seat on

    assert service.waiting_entry(full_event.id, email="bo@example.com") is None
    assert [(e.email, e.status) for e in service.waiting_list(full_event.id)] == [
        ("cy@example.com", "left")]
    assert service.availability(full_event.id).remaining == 1


def test_place_page__offered_seat__leave_passes_it_on(client, service, full_event):
    place = join(client, full_event.id, name="Bo", email="bo@example.com").request["PATH_INFO"]
    join(client, full_event.id, name="Cy", email="cy@example.com")
    service.cancel(full_event.id, email="ada@example.com")
    waitlist_engine.flush()

    page = client.get(place).content.decode()
    client.post(place, {"action": "leave"})
    waitlist_engine.flush()

    assert "A seat is being held for you" in page and "pass the seat on" in page
    assert [(e.email, e.status) for e in service.waiting_list(full_event.id)] == [
        ("bo@example.com", "left"), ("cy@example.com", "offered")]


def test_join_email__says_how_long_an_offer_lasts_and_links_the_place_page(client,
                                                                          full_event):
    ask(client, full_event.id, name="Bo", email="bo@example.com")

    message = join_message("bo@example.com")

    assert "we hold it for you for 1 day" in " ".join(message.body.split())
    assert re.search(r"/waiting-list/(?!confirm/)[^/\s]+/", message.body)


def test_confirm_links__one_form_token_two_addresses__each_link_joins_its_own(client, service,
                                                                               full_event):
    from tests.web.test_signup import form_page

    token = form_page(client, full_event.id)[1]  # a form sent back with the address fixed
    for email in ("bo@exmaple.com", "bo@example.com"):
        client.post(reverse("booking:waitlist_join", args=[full_event.id]),
                    {"name": "Bo", "email": email, "token": token})
    typo, right = (link_in(join_message(a), "confirm/")
                   for a in ("bo@exmaple.com", "bo@example.com"))

    client.post(typo)
    response = client.post(right)

    assert response.status_code == 303
    assert [e.email for e in service.waiting_list(full_event.id)] == [
        "bo@exmaple.com", "bo@example.com"]
