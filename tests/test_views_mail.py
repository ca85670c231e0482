"""The confirmation e-mail, and a booking that survives a failing mail server."""
import re
import smtplib

from django.core import mail
from django.core.mail.backends.base import BaseEmailBackend

from booking import links
from tests.test_views_signup import submit


class RefusingBackend(BaseEmailBackend):
    """A mail server that is down."""

    def send_messages(self, email_messages):
        raise smtplib.SMTPConnectError(421, "Service not available")


def test_signup__mail_server_fails__booking_kept_and_page_says_so(client, service, settings):
    settings.EMAIL_BACKEND = "tests.test_views_mail.RefusingBackend"
    event = service.create_event(name="Mail outage", capacity=5, strategy="aggregate")

    response = submit(client, event.id)
    page = client.get(response["Location"])

    assert response.status_code == 303
    assert service.find_registration(event.id, email="ada@example.com") is not None
    html = page.content.decode()
    assert page.status_code == 200 and "could not send the confirmation e-mail" in html
    assert 'role="alert"' in html and re.search(r'href="http://testserver/cancel/', html)


def test_signup__mail__names_event_and_person_with_working_cancel_link(client, service):
    event = service.create_event(name="Mail night", capacity=5,
                                 starts_at="2031-01-02T10:00:00+00:00")

    submit(client, event.id, name="Grace Hopper", email="Grace@Example.com")

    [message] = mail.outbox
    assert message.to == ["Grace@Example.com"]  # mailed as typed; stored as its key
    assert message.subject == "Booked: Mail night"
    assert "Grace Hopper" in message.body and "2 Jan 2031" in message.body
    link = re.search(r"http://testserver(/cancel/\S+/)", message.body).group(1)
    assert client.post(link).status_code == 303
    assert service.find_registration(event.id, email="grace@example.com") is None


def test_signup__refused_booking__sends_no_mail(client, service):
    event = service.create_event(name="Tiny", capacity=0)

    response = submit(client, event.id, token=links.new_form_token(event.id))

    assert response.status_code == 409 and mail.outbox == []
