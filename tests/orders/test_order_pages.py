"""The signup form of an event with orders: a quantity per ticket type, the order on the
booking's page, and a full quota that says which part is sold out."""
from django.urls import reverse

from booking.errors import StillDeciding
from tests.mail.helpers import deliver_owed
from tests.orders.test_orders import devconf
from tests.web.test_signup import form_page


def post_order(client, event_id, quantities, *, name="Ada Lovelace", email="ada@example.com",
               token=None):
    token = token or form_page(client, event_id)[1]
    data = {"name": name, "email": email, "token": token,
            **{f"qty_{t}": str(n) for t, n in quantities.items()}}
    response = client.post(reverse("booking:event_detail", args=[event_id]), data)
    deliver_owed()
    return response


def test_the_form_asks_a_quantity_per_type_with_what_is_left(client, service):
    event = devconf(service, "lock_table", workshop=2)
    service.book(event.id, name="Bo", email="bo@example.com", tickets={"workshop-a": 1})
    html = client.get(reverse("booking:event_detail", args=[event.id])).content.decode()
    for ticket_type in ("conference", "workshop-a", "workshop-b"):
        assert f'name="qty_{ticket_type}"' in html
    assert "1 seat left." in html and "2 seats left." in html and "Book my tickets" in html


def test_an_order_from_the_form_is_booked_whole_and_shown(client, service):
    event = devconf(service, "aggregate")
    response = post_order(client, event.id, {"conference": 2, "workshop-a": 1, "workshop-b": 0})
    assert response.status_code == 303
    page = client.get(response["Location"]).content.decode()
    assert "2 × Conference, 1 × Workshop A (3 seats)" in page
    assert "Your 3 seats at" in page
    reg = service.find_registration(event.id, email="ada@example.com")
    assert reg.tickets == {"conference": 2, "workshop-a": 1}


def test_a_full_quota_says_which_part_and_keeps_the_form(client, service):
    event = devconf(service, "lock_table", workshop=1)
    service.book(event.id, name="Bo", email="bo@example.com", tickets={"workshop-a": 1})
    response = post_order(client, event.id, {"conference": 1, "workshop-a": 1, "workshop-b": 0})
    html = response.content.decode()
    assert response.status_code == 409
    assert "not enough seats left in Workshop A for this order" in html
    assert 'data-full-quota="workshop-a"' in html
    assert 'name="qty_conference"' in html  # what is still available can be chosen
    assert service.find_registration(event.id, email="ada@example.com") is None


def test_no_ticket_chosen_or_too_many_is_a_clear_error_with_nothing_stored(client, service):
    event = devconf(service, "lock_table")
    none = post_order(client, event.id, {"conference": 0, "workshop-a": 0, "workshop-b": 0})
    many = post_order(client, event.id, {"conference": 5, "workshop-a": 0, "workshop-b": 0})
    assert none.status_code == 400 and "Choose at least one ticket." in none.content.decode()
    assert many.status_code == 400
    assert service.registrations(event.id) == []


def test_the_hints_of_what_is_left_stay_after_every_kind_of_error(client, service):
    event = devconf(service, "lock_table", workshop=2)
    service.book(event.id, name="Bo", email="bo@example.com", tickets={"workshop-a": 1})
    blank_name = post_order(client, event.id, {"conference": 1}, name="")
    no_ticket = post_order(client, event.id, {"conference": 0, "workshop-a": 0})
    expired = post_order(client, event.id, {"conference": 1}, token="not-a-token")
    too_many = post_order(client, event.id, {"conference": 5})
    for response in (blank_name, no_ticket, expired, too_many):
        html = response.content.decode()
        assert response.status_code == 400
        assert "1 seat left." in html and "2 seats left." in html  # workshop A, workshop B
    assert service.registrations(event.id) == [service.find_registration(
        event.id, email="bo@example.com")]


def waitlist_post(client, event_id, quantities, email="cy@example.com"):
    token = form_page(client, event_id)[1]
    data = {"name": "Cy", "email": email, "token": token,
            **{f"qty_{t}": str(n) for t, n in quantities.items()}}
    response = client.post(reverse("booking:waitlist_join", args=[event_id]), data)
    deliver_owed()
    return response


def test_more_of_a_quota_than_it_has__clear_error_and_no_waiting_list(client, service):
    """Workshop B has 3 seats and 10 are free: 4 × Workshop B can never be booked, so the
    page says why and offers no place in line, and a join for it is refused."""
    event = devconf(service, "lock_table")
    response = post_order(client, event.id, {"conference": 0, "workshop-a": 0, "workshop-b": 4})
    html = response.content.decode()
    assert "Workshop B has 3 seats in all: an order can hold at most 3 of them" in html
    assert "waitlist_" not in html  # no waiting-list form for this order
    joined = waitlist_post(client, event.id, {"conference": 0, "workshop-a": 0,
                                                   "workshop-b": 4})
    assert joined.status_code == 400
    assert "Workshop B has 3 seats in all" in joined.content.decode()
    assert service.waiting_list(event.id) == [] and service.registrations(event.id) == []


def test_a_refused_order_that_fits_by_now__offers_no_waiting_list(client, service,
                                                                 monkeypatch):
    """The order was refused as full, but seats freed before the page was drawn: book
    again, no place in line for an order that fits."""
    from booking.errors import EventFull

    event = devconf(service, "lock_table", workshop=2)

    def refused_as_full(*args, **kwargs):
        raise EventFull(quota="workshop-a")
    monkeypatch.setattr(service, "register", refused_as_full)
    response = post_order(client, event.id, {"conference": 0, "workshop-a": 2, "workshop-b": 0})
    html = response.content.decode()
    assert response.status_code == 409 and "not enough seats left in Workshop A" in html
    assert "waitlist_" not in html


def test_a_refused_order_that_could_fit_later__may_wait_in_line(client, service):
    event = devconf(service, "lock_table", workshop=2)
    service.book(event.id, name="Bo", email="bo@example.com", tickets={"workshop-a": 1})
    html = post_order(client, event.id, {"conference": 0, "workshop-a": 2, "workshop-b": 0}).content.decode()
    assert 'id="waitlist_name"' in html  # the line is offered for exactly this order


def test_a_full_quota_whose_re_read_is_late__says_which_part_never_the_event(
        client, service, monkeypatch):
    # What is left is read again after the refusal, bounded in time; when that read
    # could not be made in time (page_availability: None) the refusal is still told as
    # it is: the quota, the form as typed, 409, never "this event is full".
    event = devconf(service, "lock_table", workshop=1)
    service.book(event.id, name="Bo", email="bo@example.com", tickets={"workshop-a": 1})
    token = form_page(client, event.id)[1]
    monkeypatch.setattr(service, "page_availability", lambda event_id, fresh=False: None)

    def late(event_id):  # the read as it was, unbounded: here, past the deadline
        raise StillDeciding()
    monkeypatch.setattr(service, "availability", late)
    response = post_order(client, event.id, {"conference": 1, "workshop-a": 1,
                                             "workshop-b": 0}, token=token)
    html = response.content.decode()
    assert response.status_code == 409
    assert "not enough seats left in Workshop A for this order" in html
    assert 'data-full-quota="workshop-a"' in html and "event is full" not in html
    assert 'name="qty_conference"' in html
    assert service.find_registration(event.id, email="ada@example.com") is None
