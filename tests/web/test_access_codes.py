"""Access codes on the signup page: ``?code=...`` links, the code field, ticket types
bookable only with a code, refusals next to the field with nothing booked."""
import re

import pytest
from django.urls import reverse

from booking.mail import sender as booking_mail


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
    booking_mail.flush()
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


# --- the fourth round: a ?code= link spends the wrong-code limit --------------------------
def test_page__wrong_code_links__spend_the_limit_then_no_code_is_checked(client, service, event,
                                                                        settings):
    settings.BOOKING_ACCESS_CODE_RATE = "3/10m"
    wrong = [page(client, event, f"?code=GUESS-{n:04d}")[0] for n in range(3)]
    right, _ = page(client, event, "?code=speaker-7q2k")

    assert [r.status_code for r in wrong] == [200] * 3
    html = right.content.decode()
    assert right.status_code == 429 and right["Retry-After"]
    assert 'name="qty_speaker"' not in html and 'id="code-limited"' in html
    assert 'value="speaker-7q2k"' in html  # the code stays filled in, unchecked
    # The one limit: the form's booking with the right code waits too.
    assert submit(client, event, "SPEAKER-7Q2K", {"speaker": 1}).status_code == 429
    assert service.registrations(event.id) == []


def test_page__right_code_links__never_spend_the_limit(client, event, settings):
    settings.BOOKING_ACCESS_CODE_RATE = "2/10m"
    answers = [page(client, event, "?code=SPEAKER-7Q2K")[0] for _ in range(5)]

    assert [r.status_code for r in answers] == [200] * 5
    assert all('name="qty_speaker"' in r.content.decode() for r in answers)


def test_page__wrong_codes_spent_by_bookings__the_link_is_not_checked(client, service, event,
                                                                       settings):
    settings.BOOKING_ACCESS_CODE_RATE = "2/10m"
    for n in range(2):
        assert submit(client, event, f"GUESS-{n:04d}", {"speaker": 1},
                      email=f"p{n}@example.com").status_code == 400

    response, _ = page(client, event, "?code=SPEAKER-7Q2K")
    assert response.status_code == 429
    assert 'name="qty_speaker"' not in response.content.decode()


def test_signup__code_for_other_types__names_the_type_by_its_label(client, service):
    """A refusal names the ticket type as the page shows it, never its internal key."""
    event = service.create_event(name="Labels", capacity=10, strategy="lock_table",
                                 ticket_types={"conference": [], "workshop-a": []},
                                 ticket_labels={"workshop-a": "Hands-on workshop"},
                                 max_per_order=2)
    service.create_access_codes(event.id, codes=["TALKS-7Q2K"], max_uses=5,
                                ticket_types=["conference"])
    response = submit(client, event, "TALKS-7Q2K", {"workshop-a": 1, "conference": 0})
    html = response.content.decode()
    assert response.status_code == 400
    assert "This access code is not valid for Hands-on workshop." in html
    assert "workshop-a." not in html and service.registrations(event.id) == []


def test_page__seats_reserved_for_a_code__said_apart_from_those_left(client, service):
    event = service.create_event(name="Reserved", capacity=10, strategy="lock_table")
    service.create_access_codes(event.id, codes=["GUEST-7Q2K"], max_uses=2,
                                reserved_seats=2)
    html = page(client, event)[0].content.decode()
    assert "8 seats left</span><span class=\"seats-held\">, 2 more held for access codes" in html
    assert "8 of 10 seats left" not in html


def test_page__code_link__says_the_code_is_applied_and_what_it_unlocks(client, event):
    html = page(client, event, "?code=speaker-7q2k")[0].content.decode()
    assert "Code <strong>SPEAKER-7Q2K</strong> applied: it unlocks Speaker tickets" in html


def test_page__wrong_code_link__says_nothing_about_the_code(client, event):
    html = page(client, event, "?code=NOPE-NOPE")[0].content.decode()
    assert "applied" not in html and "not valid" not in html
