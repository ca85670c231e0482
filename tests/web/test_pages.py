"""What the public pages say about seats, lines and past events: never two things at once
that contradict each other."""
import re
from datetime import datetime, timedelta, timezone

import pytest
from django.urls import reverse

from booking.waitlist import engine as waitlist_engine
from tests.web.test_cancel import cancel_url

pytestmark = pytest.mark.django_db


def test_list__past_and_started_events__below_the_upcoming_ones_soonest_first(client, service):
    old = service.create_event(name="Old meetup", capacity=5, starts_at="2020-03-01 18:00")
    later = service.create_event(name="Later talk", capacity=5, starts_at="2031-06-01 18:00")
    sooner = service.create_event(name="Sooner talk", capacity=5, starts_at="2030-06-01 18:00")
    just_started = service.create_event(
        name="Just started", capacity=5,
        starts_at=datetime.now(timezone.utc) - timedelta(minutes=3))

    html = client.get("/").content.decode()

    upcoming, _, past = html.partition("Started and past events")
    assert upcoming.index(sooner.name) < upcoming.index(later.name)
    assert old.name not in upcoming and just_started.name not in upcoming
    assert past.index(just_started.name) < past.index(old.name)  # latest first


@pytest.mark.parametrize(("capacity", "badge"), [(1, "all 1 seat taken"),
                                                 (2, "all 2 seats taken")])
def test_list__full_event__badge_says_every_seat_is_taken(client, service, capacity, badge):
    event = service.create_event(name="Tiny talk", capacity=capacity)
    for n in range(capacity):
        service.book(event.id, name=f"P{n}", email=f"p{n}@example.com")

    html = client.get("/").content.decode()

    assert re.search(rf"Full</strong>\s*<span class=\"capacity\">{badge}", html)


def test_event_page__capacity_zero__closed_and_no_waiting_list_invite(client, service):
    closed = service.create_event(name="Closed for now", capacity=0, strategy="lock_table")

    html = client.get(reverse("booking:event_detail", args=[closed.id])).content.decode()

    assert "Closed" in html and "no seats are offered" in html
    assert "takes no bookings at the moment" in html
    assert "waiting list" not in html.lower() and "full" not in html.lower()
    assert not service.has_waiting_list(closed)


def test_cancelled_page__seat_went_to_the_waiting_list__no_book_again_link(client, service):
    event = service.create_event(name="Full house", capacity=1, strategy="lock_table")
    ada = service.book(event.id, name="Ada", email="ada@example.com")
    service.join_waiting_list(event.id, name="Bob", email="bob@example.com")

    cancelled = client.post(cancel_url(ada))
    waitlist_engine.flush()  # the freed seat is offered right after the answer
    page = client.get(cancelled["Location"]).content.decode()

    assert "held for the next person on the waiting list" in page
    assert "Book again" not in page and "Join the waiting list" in page


def test_cancelled_page__seat_free_again__book_again_link(client, service):
    event = service.create_event(name="Roomy", capacity=3, strategy="lock_table")
    ada = service.book(event.id, name="Ada", email="ada@example.com")

    page = client.post(cancel_url(ada), follow=True).content.decode()

    assert "Book again" in page and re.search(r'id="seats-left">3<', page)


def test_event_page__streams_line_longer_than_the_seats__says_a_request_may_not_get_one(
        client, service):
    event = service.create_event(name="Queue", capacity=1, strategy="streams")
    for n in range(2):
        service.book(event.id, name=f"P{n}", email=f"p{n}@example.com")

    html = client.get(reverse("booking:event_detail", args=[event.id])).content.decode()

    assert "2 earlier requests are waiting for a decision" in html
    assert "gets a seat only if one is left when its turn comes" in html


def test_home_page__streams_card__shows_the_requests_waiting_like_the_event_page(client,
                                                                                 service):
    event = service.create_event(name="Queue", capacity=1, strategy="streams")
    for n in range(2):
        service.book(event.id, name=f"P{n}", email=f"p{n}@example.com")

    html = client.get(reverse("booking:event_list")).content.decode()

    assert "2 earlier requests are waiting for a decision" in html
