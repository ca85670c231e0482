"""Access codes on the signup page: ``?code=...`` links, the code field, ticket types
bookable only with a code, refusals next to the field with nothing booked."""
import re

import pytest
from django.urls import reverse

from tests.mail.helpers import deliver_owed


@pytest.fixture
def event(service):
    event = service.create_event(name="Summit", capacity=10, strategy="lock_table",
                                 ticket_types={"day": [], "speaker": []},
                                 code_only_types=["speaker"], max_per_order=2)
    service.create_access_codes(event.id, codes=["SPEAKER-7Q2K"], max_uses=1,
                                ticket_types=["speaker"])
    return event


def page(client, event, query=""):
    response = client.get(reverse("booking:event_detail", args=[event.id]) + query)
    token = re.search(r'name="token" value="([^"]+)"', response.content.decode()).group(1)
    return response, token


def submit(client, event, code, tickets, email="ada@example.com"):
    _, token = page(client, event)
    data = {"name": "Ada", "email": email, "token": token, "access_code": code,
            "qty_day": 0, **{f"qty_{t}": n for t, n in tickets.items()}}
    response = client.post(reverse("booking:event_detail", args=[event.id]), data)
    deliver_owed()
    return response


def test_page__without_a_code__code_only_type_hidden_field_offered(client, event):
    html = page(client, event)[0].content.decode()
    assert 'name="qty_day"' in html and 'name="qty_speaker"' not in html
    assert 'name="access_code"' in html and "Have an access code?" in html


def test_page__code_link__code_filled_in_and_its_type_shown(client, event):
    html = page(client, event, "?code=speaker-7q2k")[0].content.decode()
    assert 'name="qty_speaker"' in html
    assert 'value="speaker-7q2k"' in html


def test_page__wrong_code_link__type_stays_hidden(client, event):
    html = page(client, event, "?code=NOPE-NOPE")[0].content.decode()
    assert 'name="qty_speaker"' not in html


def test_signup__with_the_code__booked_with_its_use(client, service, event):
    response = submit(client, event, "speaker-7q2k", {"speaker": 1})

    assert response.status_code == 303, response.content.decode()[:2000]
    assert [r.access_code for r in service.registrations(event.id)] == ["SPEAKER-7Q2K"]
    assert service.access_codes(event.id)[0].uses == 1


def test_signup__wrong_code__error_at_the_field_nothing_booked(client, service, event):
    response = submit(client, event, "NOPE-NOPE", {"speaker": 1})

    html = response.content.decode()
    assert response.status_code == 400
    assert "not valid for this event" in html and 'id="id_access_code_error"' in html
    assert service.registrations(event.id) == []
    assert 'value="NOPE-NOPE"' in html  # what was typed stays


def test_signup__code_only_type_posted_without_a_code__not_booked(client, service, event):
    response = submit(client, event, "", {"speaker": 1})

    assert response.status_code == 400  # the type is not on a form without a code
    assert service.registrations(event.id) == []


def test_signup__code_used_up__409_at_the_field(client, service, event):
    assert submit(client, event, "SPEAKER-7Q2K", {"speaker": 1}).status_code == 303

    response = submit(client, event, "SPEAKER-7Q2K", {"speaker": 1}, email="bo@example.com")

    assert response.status_code == 409
    assert "used as many times" in response.content.decode()
    assert len(service.registrations(event.id)) == 1
