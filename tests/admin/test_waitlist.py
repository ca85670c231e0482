"""The admin's waiting-list page: order, places and offers; removing people."""
import pytest
from django.urls import reverse

from booking.organizers.models import VIEWER
from booking.waitlist import engine as waitlist_engine
from tests.organizers.helpers import DEFAULT, member
from tests.mail.helpers import deliver_owed

pytestmark = pytest.mark.django_db


def admin_url(name, *args):
    return reverse(f"admin:booking_dynamoevent_{name}", args=args)


@pytest.fixture
def lined_up(service):
    """A full one-seat event, three people waiting, the seat freed and offered to the first."""
    event = service.create_event(name="Talk", capacity=1, strategy="slots", organizer=DEFAULT)
    service.book(event.id, name="Ada", email="ada@example.com")
    for name in ("Bo", "Cy", "Di"):
        service.join_waiting_list(event.id, name=name, email=f"{name.lower()}@example.com")
    service.cancel(event.id, email="ada@example.com")
    waitlist_engine.flush()  # the offer made right after
    return event


def test_waiting_list__shows_order_places_and_offer(admin_client, lined_up):
    response = admin_client.get(admin_url("waiting_list", lined_up.id))

    html = response.content.decode()
    rows = [(entry.email, place, entry.status) for entry, place, _ in response.context["rows"]]
    assert response.status_code == 200
    assert rows == [("bo@example.com", None, "offered"), ("cy@example.com", 1, "waiting"),
                    ("di@example.com", 2, "waiting")]
    assert "0 confirmed and 1 held for offers, of 1 seat." in html and "2 waiting" in html


def test_waiting_list__remove_offered_person__seat_offered_to_next(admin_client, service,
                                                                    lined_up):
    response = admin_client.post(admin_url("waiting_list", lined_up.id),
                                 {"action": "remove_selected", "selected": ["bo@example.com"]})

    assert response.status_code == 302
    assert [(e.email, e.status) for e in service.waiting_list(lined_up.id)] == [
        ("bo@example.com", "left"), ("cy@example.com", "offered"), ("di@example.com", "waiting")]


def test_waiting_list__remove__the_person_is_told_by_email_once(admin_client, service,
                                                                  lined_up):
    from django.core import mail


    deliver_owed()
    mail.outbox.clear()
    for _ in range(2):  # the second POST (a resubmitted form) removes nobody
        admin_client.post(admin_url("waiting_list", lined_up.id),
                          {"action": "remove_selected", "selected": ["cy@example.com"]})
    deliver_owed()

    [told] = mail.outbox
    assert told.to == ["cy@example.com"] and told.subject == "Removed from the waiting list: Talk"
    assert "has removed you from its waiting list" in told.body
    assert not [m for m in service.requests.outbox.pending() if m["kind"] == "waitlist-removed"]


def test_waiting_list__remove_someone_no_longer_waiting__says_nobody_was_removed(
        admin_client, service, lined_up):
    service.leave_waiting_list(lined_up.id, email="di@example.com")

    response = admin_client.post(admin_url("waiting_list", lined_up.id),
                                 {"action": "remove_selected", "selected": ["di@example.com"]},
                                 follow=True)

    page = response.content.decode()
    assert "Nobody was removed" in page and "Removed 0" not in page


def test_waiting_list__view_only_staff__cannot_remove(client, django_user_model, service,
                                                     lined_up):
    user = django_user_model.objects.create_user("viewer", password="pw", is_staff=True)
    member(user, DEFAULT, VIEWER)
    client.force_login(user)

    page = client.get(admin_url("waiting_list", lined_up.id))
    refused = client.post(admin_url("waiting_list", lined_up.id),
                          {"action": "remove_selected", "selected": ["cy@example.com"]})

    assert page.status_code == 200 and "remove_selected" not in page.content.decode()
    assert refused.status_code == 403
    assert service.waiting_entry(lined_up.id, email="cy@example.com").status == "waiting"


def test_waiting_list__order_event__shows_each_entrys_tickets(admin_client, service):
    event = service.create_event(
        name="DevConf", capacity=1, strategy="lock_table", quotas={"workshop-a": 1},
        ticket_types={"conference": [], "workshop-a": ["workshop-a"]}, max_per_order=2)
    service.book(event.id, name="Ada", email="ada@example.com", tickets={"conference": 1})
    service.join_waiting_list(event.id, name="Bo", email="bo@example.com",
                              tickets={"workshop-a": 1})

    html = admin_client.get(admin_url("waiting_list", event.id)).content.decode()

    assert "<span>Tickets</span>" in html and "1 × Workshop A" in html
