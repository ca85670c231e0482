"""A booking's own page (booking/web/booking_page.py), opened by its sealed link: the order,
its reference, the event, resend, cancel some seats with nothing chosen to begin with."""
import re

from django.core import mail
from django.urls import reverse

from booking import links
from booking.mail import sender as booking_mail
from booking.models import booking_reference
from booking.wiring import mail_sender
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
    assert html.count('type="checkbox" name="passes"') == 3 and " checked" not in html
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
    first = f"{registration.registration_id}-1"  # a conference pass, not the last one
    response = client.post(cancel_path, {"form_token": form_token(html), "choose": "passes",
                                         "passes": [first]})
    booking_mail.flush()
    done = client.get(response["Location"]).content.decode()
    assert "That seat is cancelled" in done and "<form" not in done
    assert [p.status for p in service.passes(service.find_registration(
        event.id, email=ADA))] == ["cancelled", "valid", "valid"]
    assert service.find_registration(event.id, email=ADA).tickets == {"conference": 1,
                                                                       "workshop-a": 1}


def test_resend__the_confirmation_again_with_its_reference_and_page(client, order):
    _, registration = order
    mail.outbox.clear()
    url = page_url(registration)
    response = client.post(reverse("booking:booking_resend", args=[url.split("/")[-2]]))
    assert response.status_code == 303 and response["Location"].endswith("?resent=1")
    booking_mail.flush()
    (sent,) = mail.outbox
    assert registration.reference in sent.body and url in sent.body
    assert "on its way to your e-mail again" in client.get(response["Location"]).content.decode()


def test_e_mails__confirmation_and_part_cancelled__name_the_reference_and_link_the_page(
        service, order):
    event, registration = order
    mail.outbox.clear()
    booking_mail.send_soon(mail_sender(), booking_mail.CONFIRMATION, registration, event=event)
    removed = service.cancel(event.id, email=ADA, tickets={"conference": 1})
    booking_mail.send_soon(mail_sender(), booking_mail.CANCELLATION, removed, event=event)
    booking_mail.flush()
    confirmation, part = mail.outbox
    page = page_url(registration)
    for sent in (confirmation, part):
        assert registration.reference in sent.body and page in sent.body
        assert page in sent.alternatives[0][0] and registration.reference in sent.alternatives[0][0]


def test_page__shows_the_answers_and_links_their_edit(client, service):
    """The page the e-mail links shows the order's and each pass's answers, and "Change my
    answers" opens their edit page (docs/orders.md#questions)."""
    import datetime as dt
    event = service.create_event(
        name="Asked", capacity=10, strategy="lock_table", max_per_order=2,
        ticket_types={"conference": []},
        starts_at=dt.datetime.now(dt.timezone.utc) + dt.timedelta(days=10))
    service.set_questions(event.id, [
        {"id": "company", "label": "Company", "kind": "text"},
        {"id": "name_on_pass", "label": "Name on the pass", "kind": "text",
         "per_pass": True}], expected_version=0)
    registration = service.book(event.id, name="Ada", email=ADA, tickets={"conference": 2},
                                answers={"company": "Acme"},
                                pass_answers=[{"name_on_pass": "Olga"},
                                              {"name_on_pass": "Pavel"}])
    booking_mail.flush()
    html = client.get(page_url(registration)).content.decode()
    assert "Your answers" in html and "Acme" in html
    assert "Olga" in html and "Pavel" in html
    edit = re.search(r'<a href="([^"]+)">Change my answers</a>', html).group(1)
    assert edit.startswith(f"/events/{event.id}/answers/")
    assert 'value="Acme"' in client.get(edit).content.decode()
