"""An organizer adds an attendee by hand (the registrations page's "Add attendee"): booked
through the service, so capacity, quotas and one person once hold; with an e-mail the
usual confirmation, without one a generated address on a reserved domain that is never
mailed; another organizer's event answers as a missing one."""
import re

import pytest
from django.core import mail
from django.urls import reverse

from booking import validation
from booking.organizers.models import EDITOR, VIEWER
from tests.mail.helpers import deliver_owed
from tests.orders.test_orders import devconf
from tests.organizers.helpers import staff

pytestmark = pytest.mark.django_db


def add_url(event):
    return reverse("admin:booking_dynamoevent_add_attendee", args=[event.id])


def add(client, event, **fields):
    page = client.get(add_url(event)).content.decode()
    token = re.search(r'name="token" value="([^"]+)"', page).group(1)
    response = client.post(add_url(event), {"token": token, **fields})
    deliver_owed()
    return response


@pytest.fixture
def editor(client):
    client.force_login(staff("desk", role=EDITOR))
    return client


def test_with_email__booked_through_the_service_and_confirmed_by_mail(editor, service):
    event = devconf(service, "lock_table", organizer="acme")
    registrations = reverse("admin:booking_dynamoevent_registrations", args=[event.id])
    assert add_url(event) in editor.get(registrations).content.decode()  # the link
    response = add(editor, event, name="Ada Lovelace", email="ada@example.com",
                   qty_conference="2", **{"qty_workshop-a": "1",
                                                               "qty_workshop-b": "0"})
    assert response.status_code == 302 and response["Location"] == registrations
    found = service.find_registration(event.id, email="ada@example.com")
    assert found.tickets == {"conference": 2, "workshop-a": 1}
    [message] = mail.outbox
    assert message.to == ["ada@example.com"] and "Your 3 seats" in message.body


def test_without_email__a_never_mailed_placeholder_address_keys_it(editor, service):
    event = service.create_event(name="Walk-ins", capacity=2, organizer="acme")
    for name in ("Grace Hopper", "Alan Turing"):  # two people, no addresses: two seats
        assert add(editor, event, name=name, email="").status_code == 302
    people = service.registrations(event.id)
    assert sorted(r.name for r in people) == ["Alan Turing", "Grace Hopper"]
    assert all(validation.is_placeholder_email(r.email) for r in people)
    assert len({r.email for r in people}) == 2
    assert mail.outbox == []  # nobody's mailbox: nothing sent
    assert service.availability(event.id).remaining == 0


def test_capacity_and_one_person_once_hold__nothing_stored(editor, service):
    event = service.create_event(name="Small", capacity=1, organizer="acme")
    assert add(editor, event, name="Ada", email="ada@example.com").status_code == 302
    again = add(editor, event, name="Ada", email="ADA@example.com")
    assert again.status_code == 200 and "already registered" in again.content.decode()
    full = add(editor, event, name="Bob", email="")
    assert full.status_code == 200 and "full" in full.content.decode().lower()
    assert [r.name for r in service.registrations(event.id)] == ["Ada"]


def test_resubmitted_form__one_booking(editor, service):
    event = service.create_event(name="Desk", capacity=5, organizer="acme")
    page = editor.get(add_url(event)).content.decode()
    token = re.search(r'name="token" value="([^"]+)"', page).group(1)
    for _ in range(2):  # a double click
        editor.post(add_url(event), {"token": token, "name": "Grace", "email": ""})
    assert len(service.registrations(event.id)) == 1


def test_bad_input__clear_error_nothing_stored(editor, service):
    event = service.create_event(name="Desk", capacity=5, organizer="acme")
    response = add(editor, event, name="", email="not-an-address")
    html = response.content.decode()
    assert response.status_code == 200 and "Enter the attendee&#x27;s name." in html
    assert service.registrations(event.id) == []


def test_other_organizers_event_404_viewer_403(client, service):
    theirs = service.create_event(name="Theirs", capacity=5, organizer="globex")
    ours = service.create_event(name="Ours", capacity=5, organizer="acme")
    client.force_login(staff("desk", role=EDITOR))
    assert client.get(add_url(theirs)).status_code == 404
    assert client.post(add_url(theirs), {"name": "X", "email": ""}).status_code == 404
    client.force_login(staff("reader", role=VIEWER))
    assert client.get(add_url(ours)).status_code == 403
    assert service.registrations(ours.id) == [] and service.registrations(theirs.id) == []


def asked(service, event):
    return service.set_questions(event.id, [
        {"id": "company", "label": "Company", "kind": "text", "required": True},
        {"id": "diet", "label": "Diet", "kind": "text"},
        {"id": "name_on_pass", "label": "Name on the pass", "kind": "text", "required": True,
         "per_pass": True}], expected_version=0)


def test_required_and_optional_answers_reach_the_booking(editor, service):
    event = asked(service, devconf(service, "lock_table", organizer="acme"))
    response = add(editor, event, name="Ada", email="", qty_conference="2",
                   **{"qty_workshop-a": "0", "qty_workshop-b": "0"}, q_company="Analytical", q_diet="none",
                   p0_name_on_pass="Ada", p1_name_on_pass="Charles")
    assert response.status_code == 302, response.content.decode()
    [order] = service.registrations(event.id)
    stored = service.answers(order)
    assert stored.answers == {"company": "Analytical", "diet": "none"}
    assert stored.pass_answers == ({"name_on_pass": "Ada"}, {"name_on_pass": "Charles"})


def test_a_code_only_type_is_offered_and_booked_with_its_code(editor, service):
    event = devconf(service, "lock_table", organizer="acme", code_only_types=["workshop-a"])
    service.create_access_codes(event.id, codes=["SPEAKER-7Q2K"])
    page = editor.get(add_url(event)).content.decode()
    assert "(needs an access code)" in page and 'name="qty_workshop-a"' in page
    refused = add(editor, event, name="Ada", email="", **{"qty_workshop-a": "1", "qty_workshop-b": "0"}, qty_conference="0")
    assert refused.status_code == 200 and "need an access code" in refused.content.decode()
    booked = add(editor, event, name="Ada", email="", access_code="speaker-7q2k",
                 **{"qty_workshop-a": "1", "qty_workshop-b": "0"}, qty_conference="0")
    assert booked.status_code == 302
    [order] = service.registrations(event.id)
    assert order.tickets == {"workshop-a": 1} and order.access_code == "SPEAKER-7Q2K"


def test_the_form_speaks_to_the_organizer(editor, service):
    event = asked(service, service.create_event(name="Desk", capacity=5, organizer="acme"))
    html = editor.get(add_url(event)).content.decode()
    assert "Attendee&#x27;s name" in html and "Your name" not in html
    assert "Your pass" not in html and "We send your" not in html
    refused = add(editor, event, name="", email="")
    assert "Enter the attendee&#x27;s name." in refused.content.decode()
