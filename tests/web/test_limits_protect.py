"""Limits that protect the person (issue 27, findings 3 and 10): a limit about an e-mail
address counts only what its owner's own network sends, once per form submission; the
resend form never spends the signups' allowance, and it does the same work whether or
not the address is registered."""
import re

import pytest
from django.core import mail
from django.urls import reverse

from booking.dynamo.metrics import RequestMeter
from booking.mail import sender as booking_mail
from booking.wiring import get_booking_service
from tests.helpers import within_one_window
from tests.mail.helpers import deliver_owed
from tests.web.test_signup import form_page, submit

VICTIM = "victim@example.com"
ATTACKER_ADDR, VICTIM_ADDR = "203.0.113.66", "198.51.100.7"


def post_signup(client, event, token, *, email=VICTIM, addr=VICTIM_ADDR, name="Val"):
    response = client.post(reverse("booking:event_detail", args=[event.id]),
                           {"name": name, "email": email, "token": token}, REMOTE_ADDR=addr)
    deliver_owed()
    return response


def resend(client, event, email, addr):
    response = client.post(reverse("booking:resend", args=[event.id]), {"email": email},
                           REMOTE_ADDR=addr)
    deliver_owed()
    return response


@pytest.fixture
def events(service):
    return [service.create_event(name=f"Talk {n}", capacity=5, strategy="lock_table")
            for n in range(8)]


def test_third_party__spends_every_limit_about_victim__victim_still_books(client, events,
                                                                        settings):
    settings.BOOKING_SIGNUP_EMAIL_RATE, settings.BOOKING_RESEND_RATE = "2/h", "3/10m"
    # Someone else's network: signups for the victim's address on several events (the
    # third is refused), and "resend" requests for it, until refused.
    attacker = [post_signup(client, e, form_page(client, e.id)[1], addr=ATTACKER_ADDR)
                .status_code for e in events[:3]]
    resends = [resend(client, events[0], VICTIM, ATTACKER_ADDR).status_code
               for _ in range(4)]

    own = post_signup(client, events[5], form_page(client, events[5].id)[1])

    assert attacker == [303, 303, 429] and resends == [200, 200, 200, 429]
    assert own.status_code == 303
    assert get_booking_service().find_registration(events[5].id, email=VICTIM) is not None


def test_signup__one_token_replayed__counts_once(client, events, settings):
    settings.BOOKING_SIGNUP_RATE, settings.BOOKING_SIGNUP_EMAIL_RATE = "2/10m", "1/h"
    within_one_window(600)
    token = form_page(client, events[0].id)[1]

    replays = [post_signup(client, events[0], token).status_code for _ in range(6)]
    # The network's second submission is still there for another person's form.
    other = post_signup(client, events[1], form_page(client, events[1].id)[1],
                        email="friend@example.com")
    third = post_signup(client, events[2], form_page(client, events[2].id)[1],
                        email="third@example.com")

    assert replays == [303] * 6 and other.status_code == 303
    assert third.status_code == 429
    assert len(get_booking_service().registrations(events[0].id)) == 1


def test_signup__invalid_form_then_corrected_same_token__counts_once(client, events,
                                                                     settings):
    settings.BOOKING_SIGNUP_RATE = "1/10m"
    token = form_page(client, events[0].id)[1]

    first = post_signup(client, events[0], token, name="")
    corrected = post_signup(client, events[0], token)

    assert (first.status_code, corrected.status_code) == (400, 303)


def test_signup__new_tokens_from_own_network__still_limited_per_address(client, events,
                                                                        settings):
    settings.BOOKING_SIGNUP_EMAIL_RATE = "2/h"

    answers = [post_signup(client, e, form_page(client, e.id)[1]).status_code
               for e in events[:3]]

    assert answers == [303, 303, 429]


def test_resend__never_spends_the_signup_allowance(client, events, settings):
    settings.BOOKING_SIGNUP_RATE, settings.BOOKING_SIGNUP_EMAIL_RATE = "1/10m", "1/h"
    resends = [resend(client, events[0], VICTIM, VICTIM_ADDR).status_code for _ in range(5)]

    booked = post_signup(client, events[0], form_page(client, events[0].id)[1])

    assert resends == [200] * 5 and booked.status_code == 303


def test_resend__many_requests__at_most_the_mail_rate_sent_same_answer(client, events,
                                                                       settings):
    settings.BOOKING_RESEND_MAIL_RATE = "2/h"
    submit(client, events[0].id, email=VICTIM)
    mail.outbox.clear()

    answers = {resend(client, events[0], VICTIM, ATTACKER_ADDR).content for _ in range(5)}

    assert len(answers) == 1 and len(mail.outbox) == 2


def request_work(client, event, email, monkeypatch) -> tuple[list[str], list[str], bytes]:
    """The store calls the resend request makes on its own thread, the jobs it hands to
    the background, and its answer."""
    handed = []
    submit_job = booking_mail._mail.submit
    meter = RequestMeter().install(get_booking_service().store)
    try:
        with monkeypatch.context() as patch, meter.track() as tally:
            patch.setattr(booking_mail._mail, "submit",
                          lambda *job: (handed.append(job[0].__name__), submit_job(*job)))
            response = client.post(reverse("booking:resend", args=[event.id]),
                                   {"email": email})
    finally:
        meter.uninstall()
    deliver_owed()
    assert response.status_code == 200
    return tally.operations, handed, response.content


def test_resend__registered_or_not__same_store_calls_and_handoff(client, events,
                                                                 monkeypatch):
    submit(client, events[0].id, email=VICTIM)
    mail.outbox.clear()

    registered = request_work(client, events[0], VICTIM, monkeypatch)
    unknown = request_work(client, events[0], "nobody@example.com", monkeypatch)

    assert registered == unknown
    assert registered[1] == ["_resend_found"]
    assert len(mail.outbox) == 1  # the lookup and the e-mail ran off the request


def test_cancel__one_link_clicked_many_times__counts_once(client, events, settings):
    settings.BOOKING_CANCEL_RATE = "2/10m"
    submit(client, events[0].id, email=VICTIM)
    link = re.search(r"http://testserver(/cancel/\S+/)", mail.outbox[0].body).group(1)

    answers = [client.post(link).status_code for _ in range(5)]

    assert answers == [303] * 5
    assert get_booking_service().find_registration(events[0].id, email=VICTIM) is None
