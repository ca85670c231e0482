"""Limits that fit real networks: one address can be a whole office or campus, so the
network limits' defaults are far above one person's use while the limits about a person
stay as tight as before; organizer staff signed in are not limited on their own events; a
refused form keeps what was typed; the admin lists recent refusals, scoped to the events
each organizer's staff have a role on."""
import pytest
from django.core import mail
from django.urls import reverse

from booking.organizers.models import CHECKIN, LimitHit
from config.settings_reference import SETTINGS
from tests.helpers import within_one_window
from tests.organizers.helpers import staff
from tests.web.test_signup import form_page
from tests.mail.helpers import deliver_owed

HITS = "/admin/booking_organizers/limithit/"


def post_signup(client, event, n, **fields):
    token = form_page(client, event.id)[1]
    return client.post(reverse("booking:event_detail", args=[event.id]), {
        "name": f"Person {n}", "email": f"p{n}@example.com", "token": token, **fields})


def default(name):
    return next(s.default for s in SETTINGS if s.name == name)


def test_defaults__an_office_network_books_thirty_in_a_row(client, service):
    """30 colleagues behind one router sign up within minutes: nobody is refused (the
    old default refused the 11th)."""
    within_one_window(600, room=20.0)  # 30 posts take a few seconds
    event = service.create_event(name="All hands", capacity=100, strategy="lock_table")
    answers = [post_signup(client, event, n).status_code for n in range(30)]
    assert answers == [303] * 30
    assert len(service.registrations(event.id)) == 30


def test_defaults__the_limits_about_a_person_are_kept():
    assert default("BOOKING_SIGNUP_EMAIL_RATE") == "5/h"  # one inbox, from one network
    assert default("BOOKING_RESEND_MAIL_RATE") == "3/h"  # confirmations per booking
    assert default("ADMIN_LOGIN_RATE") == "10/15m"  # per address and per user name


@pytest.fixture
def tight(settings):
    settings.BOOKING_SIGNUP_RATE = "1/10m"
    within_one_window(600, room=30.0)


def test_refused_form__keeps_what_was_typed_with_the_message_429(client, service, tight):
    event = service.create_event(name="Meetup", capacity=5, strategy="lock_table")
    post_signup(client, event, 0)
    response = post_signup(client, event, 1, name="Grace Hopper", email="grace@example.com")
    html = response.content.decode()
    assert response.status_code == 429 and 0 < int(response["Retry-After"]) <= 600
    assert "Too many signups from your network" in html
    assert 'value="Grace Hopper"' in html and 'value="grace@example.com"' in html
    assert 'name="token"' in html  # the same form, ready to send again
    assert service.find_registration(event.id, email="grace@example.com") is None


def test_refused_waiting_list_form__keeps_what_was_typed(client, service, tight):
    event = service.create_event(name="Tiny", capacity=1, strategy="lock_table")
    service.book(event.id, name="Ada", email="ada@example.com")  # full
    elsewhere = service.create_event(name="Elsewhere", capacity=5, strategy="lock_table")
    post_signup(client, elsewhere, 0)  # the network's one signup of the window
    token = form_page(client, event.id)[1]
    response = client.post(reverse("booking:waitlist_join", args=[event.id]), {
        "name": "Grace Hopper", "email": "grace@example.com", "token": token})
    html = response.content.decode()
    assert response.status_code == 429 and "Join the waiting list" in html
    assert 'value="Grace Hopper"' in html and "Too many signups" in html
    assert service.waiting_list(event.id) == []


def test_organizer_staff_signed_in__not_limited_on_their_own_events(client, service, tight):
    own = service.create_event(name="Ours", capacity=10, strategy="lock_table",
                               organizer="acme")
    other = service.create_event(name="Theirs", capacity=10, strategy="lock_table",
                                 organizer="globex")
    client.force_login(staff("desk", "acme", CHECKIN))  # the desk at the venue
    assert [post_signup(client, own, n).status_code for n in range(4)] == [303] * 4
    assert post_signup(client, other, 10).status_code == 303
    assert post_signup(client, other, 11).status_code == 429  # not their event
    client.logout()
    assert post_signup(client, own, 12).status_code == 429  # signed out: the network's
    deliver_owed()  # the worker's pass: the confirmations the bookings owe
    assert len(service.registrations(own.id)) == 4 and len(mail.outbox) == 5


def test_admin__recent_hits_listed_scoped_to_each_organizers_events(client, service, tight,
                                                                    admin_client):
    acme = service.create_event(name="Acme night", capacity=10, organizer="acme")
    globex = service.create_event(name="Globex day", capacity=10, organizer="globex")
    post_signup(client, acme, 0)
    for n in (1, 2, 3):  # three refusals from one network in one hour: one row, counted
        assert post_signup(client, acme, n).status_code == 429
    assert post_signup(client, globex, 4).status_code == 429
    rows = LimitHit.objects.filter(event_id__in=(acme.id, globex.id)).order_by("event_name")
    assert [(h.event_name, h.organizer, h.refused) for h in rows] == [
        ("Acme night", "acme", 3), ("Globex day", "globex", 1)]

    everything = admin_client.get(HITS).content.decode()
    assert "Acme night" in everything and "Globex day" in everything
    assert "Signup forms from one network" in everything
    client.force_login(staff("acme-boss", "acme"))
    own = client.get(HITS)
    assert own.status_code == 200
    assert "Acme night" in own.content.decode() and "Globex day" not in own.content.decode()
    hit = LimitHit.objects.get(event_name="Globex day")
    assert client.get(f"{HITS}{hit.pk}/change/").status_code in (302, 404)
    assert client.post(f"{HITS}{hit.pk}/delete/").status_code == 403
