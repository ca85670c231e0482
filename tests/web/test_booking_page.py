"""A booking's own page (booking/web/booking_page.py), opened by its sealed link: the order,
its reference, the event, resend, cancel some seats with nothing chosen to begin with."""
from django.core import mail
from django.urls import reverse

from booking import links
from booking.models import booking_reference
from tests.mail.helpers import deliver_owed
from tests.orders.test_order_cancel_page import form_token, order  # noqa: F401 - a fixture

ADA = "ada@example.com"


def page_url(registration):
    return reverse("booking:booking",
                   args=[links.registration_token(registration, salt=links.CANCEL_SALT)])


def test_booking_reference__short_and_derived_from_the_id():
    assert booking_reference("8f3a21c0" + "0" * 24) == "8F3A-21C0"


def test_page__the_order_its_reference_and_the_event__no_seat_chosen(client, order):
    event, registration = order
    html = client.get(page_url(registration)).content.decode()
    assert registration.reference in html and event.name in html
    assert "2 × Conference, 1 × Workshop A (3 seats)" in html
    assert 'name="cancel_conference" value="0"' in html
    assert 'name="cancel_workshop-a" value="0"' in html
    assert "E-mail my confirmation again" in html


def test_page__each_seats_pass_and_the_printable_page(client, service, order):
    event, registration = order
    html = client.get(page_url(registration)).content.decode()
    codes = [p.code for p in service.passes(registration)]
    assert len(codes) == 3 and all(code in html for code in codes)
    assert html.count("<svg") >= 3 and "Print the passes" in html


def test_page__tampered_link__bad_link_nothing_shown(client, order):
    _, registration = order
    url = page_url(registration)
    response = client.get(url[:-6] + "AAAAA/")
    assert response.status_code == 400 and ADA not in response.content.decode()


def test_page__cancel_one_seat_of_three__a_plain_confirmation(client, service, order):
    event, registration = order
    html = client.get(page_url(registration)).content.decode()
    cancel_path = reverse("booking:cancel",
                          args=[links.registration_token(registration, salt=links.CANCEL_SALT)])
    assert f'action="{cancel_path}"' in html
    response = client.post(cancel_path, {"form_token": form_token(html), "cancel_conference": "1",
                                         "cancel_workshop-a": "0"})
    deliver_owed()
    done = client.get(response["Location"]).content.decode()
    assert "Those seats are cancelled" in done and "<form" not in done
    assert service.find_registration(event.id, email=ADA).tickets == {"conference": 1,
                                                                       "workshop-a": 1}


def test_resend__the_confirmation_again_with_its_reference_and_page(client, order):
    _, registration = order
    mail.outbox.clear()
    url = page_url(registration)
    response = client.post(reverse("booking:booking_resend", args=[url.split("/")[-2]]))
    assert response.status_code == 303 and response["Location"].endswith("?resent=1")
    deliver_owed()
    (sent,) = mail.outbox
    assert registration.reference in sent.body and url in sent.body
    assert "on its way to your e-mail again" in client.get(response["Location"]).content.decode()


def test_e_mails__confirmation_and_part_cancelled__name_the_reference_and_link_the_page(
        service, order):
    event, registration = order
    (confirmation,) = mail.outbox  # the order's, sent by the worker's pass
    service.cancel(event.id, email=ADA, tickets={"conference": 1})
    deliver_owed()
    _, part = mail.outbox
    page = page_url(registration)
    for sent in (confirmation, part):
        assert registration.reference in sent.body and page in sent.body
        assert page in sent.alternatives[0][0] and registration.reference in sent.alternatives[0][0]
