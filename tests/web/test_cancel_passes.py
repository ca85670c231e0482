"""Choosing whose passes to cancel (booking/web/cancel.py): a box per pass named by its
holder, exactly the ticked ones given up (never "the last of that type"), the booking's
pages no longer list a cancelled pass, and the texts count the seats given up."""
import datetime as dt
import re

import pytest
from django.urls import reverse

from booking import links
from booking.mail import sender as booking_mail

ADA = "ada@example.com"
NAMES = ["Olga", "Pavel", "Wanda"]


@pytest.fixture
def order(service):
    event = service.create_event(
        name="Talks", capacity=10, strategy="lock_table", max_per_order=4,
        ticket_types={"conference": []},
        starts_at=dt.datetime.now(dt.timezone.utc) + dt.timedelta(days=10))
    service.set_questions(event.id, [{"id": "name_on_pass", "label": "Name on the pass",
                                      "kind": "text", "per_pass": True}], expected_version=0)
    registration = service.book(event.id, name="Olga Order", email=ADA,
                                tickets={"conference": 3},
                                pass_answers=[{"name_on_pass": n} for n in NAMES])
    booking_mail.flush()
    return event, registration


def cancel_url(registration):
    return reverse("booking:cancel",
                   args=[links.registration_token(registration, salt=links.CANCEL_SALT)])


def post_passes(client, url, passes):
    html = client.get(url).content.decode()
    token = re.search(r'name="form_token" value="([^"]+)"', html).group(1)
    response = client.post(url, {"form_token": token, "choose": "passes", "passes": passes})
    booking_mail.flush()
    return response


def test_cancel_page__a_box_per_pass_named_by_its_holder(client, order):
    _, registration = order
    html = client.get(cancel_url(registration)).content.decode()
    for n, name in enumerate(NAMES, start=1):
        assert f"Conference, pass {n} of 3: {name}" in html
    assert "<legend>Passes to cancel</legend>" in html


def test_cancel_page__pavels_pass_ticked__exactly_pavels_given_up(client, service, order):
    event, registration = order
    pavel = f"{registration.registration_id}-2"
    response = post_passes(client, cancel_url(registration), [pavel])
    assert response.status_code == 303
    kept = service.find_registration(event.id, email=ADA)
    assert [p.status for p in service.passes(kept)] == ["valid", "cancelled", "valid"]
    done = client.get(response["Location"]).content.decode()
    assert "That seat is cancelled" in done
    # The confirmation page lists only the passes that still let someone in.
    booked = client.get(reverse("booking:booked", args=[event.id, links.registration_token(
        kept, salt=links.CONFIRMATION_SALT)])).content.decode()
    assert f'id="pass-{pavel}"' not in booked
    assert f'id="pass-{registration.registration_id}-1"' in booked


def test_cancel_page__nothing_ticked__asks_again_nothing_cancelled(client, service, order):
    event, registration = order
    response = post_passes(client, cancel_url(registration), [])
    assert response.status_code == 400
    assert "Choose at least one pass to cancel." in response.content.decode()
    assert service.find_registration(event.id, email=ADA).tickets == {"conference": 3}


def test_cancel_page__the_rest_cancelled__the_text_counts_the_seats(client, service, order):
    event, registration = order
    url = cancel_url(registration)
    post_passes(client, url, [f"{registration.registration_id}-1"])
    response = post_passes(client, url, [f"{registration.registration_id}-{n}" for n in (2, 3)])
    done = client.get(response["Location"]).content.decode()
    assert "Your 2 seats at <strong>Talks</strong> have been released." in done
    assert "Your seat at" not in done
    assert service.find_registration(event.id, email=ADA) is None
