"""Each pass carries its own holder's name (the answer to "Name on the pass"), in the
confirmation e-mail, on the booking's pages and on the printable passes, which also say
the event, its date, time and venue."""
import datetime as dt

import pytest
from django.core import mail
from django.urls import reverse

from booking import links
from tests.mail.helpers import deliver_owed
from tests.organizers.helpers import DEFAULT

pytestmark = pytest.mark.django_db

NAMES = ("Olga", "Pavel", "Wanda")
WHEN = dt.datetime(2031, 3, 14, 18, 30, tzinfo=dt.timezone.utc)


@pytest.fixture
def order(service):
    event = service.create_event(name="Pass party", capacity=9, strategy="lock_table",
                                 starts_at=WHEN, organizer=DEFAULT, venue="Hall 3, Pier 9",
                                 ticket_types={"day": [], "night": []}, max_per_order=4)
    event = service.set_questions(event.id, [
        {"id": "diet", "label": "Dietary needs", "kind": "text", "per_pass": True},
        {"id": "name_on_pass", "label": "Name on the pass", "kind": "text", "per_pass": True},
    ], expected_version=0)
    registration = service.book(
        event.id, name="Olga Order", email="olga@example.com", tickets={"day": 2, "night": 1},
        pass_answers=[{"name_on_pass": n, "diet": "none"} for n in NAMES])
    return event, registration


def test_email__each_pass_names_its_holder(order):
    deliver_owed()
    (sent,) = mail.outbox
    html = sent.alternatives[0][0]
    for n, name in enumerate(NAMES):
        assert f", {name}: " in sent.body  # "- Day, Olga: <code>"
        assert f'<p style="margin:0 0 8px 0;">{name}</p>' in html
    assert "Hello Olga Order" in sent.body


def printable(client, event, registration):
    token = links.registration_token(registration, salt=links.CONFIRMATION_SALT)
    return client.get(reverse("booking:passes", args=[event.id, token])).content.decode()


def test_printable_passes__holder_event_date_time_and_venue_on_each(client, order):
    event, registration = order
    page = printable(client, event, registration)
    names = [chunk.split("</p>")[0] for chunk in page.split('<p class="pass-name">')[1:]]
    assert names == list(NAMES)
    assert page.count('<p class="pass-when">') == 3 and "14 Mar 2031, 18:30" in page
    assert page.count('<p class="pass-venue">Hall 3, Pier 9</p>') == 3
    assert page.count('<p class="pass-event">Pass party</p>') == 3


def test_booking_pages__each_pass_names_its_holder(client, order):
    event, registration = order
    booked = links.registration_token(registration, salt=links.CONFIRMATION_SALT)
    own = links.registration_token(registration, salt=links.CANCEL_SALT)
    for path in (reverse("booking:booked", args=[event.id, booked]),
                 reverse("booking:booking", args=[own])):
        page = client.get(path).content.decode()
        names = [chunk.split("</p>")[0] for chunk in page.split('<p class="pass-name">')[1:]]
        assert names == list(NAMES), path


def test_no_name_question__each_pass_the_orders_name(client, service):
    event = service.create_event(name="Plain", capacity=5, max_per_order=2,
                                 ticket_types={"day": []})
    registration = service.book(event.id, name="Ada", email="ada@example.com",
                                tickets={"day": 2})
    deliver_owed()
    (sent,) = mail.outbox
    assert sent.body.count("- Day, Ada: ") == 2
    page = printable(client, event, registration)
    assert page.count('<p class="pass-name">Ada</p>') == 2
    assert 'class="pass-when"' not in page and 'class="pass-venue"' not in page


def test_blank_name_answer__that_pass_the_orders_name(client, service, order):
    event, _ = order
    registration = service.book(
        event.id, name="Bo Order", email="bo@example.com", tickets={"day": 2},
        pass_answers=[{"name_on_pass": "Bea"}, {}])
    page = printable(client, event, registration)
    names = [chunk.split("</p>")[0] for chunk in page.split('<p class="pass-name">')[1:]]
    assert names == ["Bea", "Bo Order"]
