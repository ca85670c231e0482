"""E-mails from the outbox: sent right after the request, exactly once, by any sender.

The booking_worker (the safety net), replay_failed (failed sends only), and a booking
that survives a failing mail server.
"""
import json
import re
import smtplib
import threading
from io import StringIO

import pytest
from django.core import mail
from django.core.mail.backends.base import BaseEmailBackend
from django.core.management import CommandError, call_command

from booking.errors import StoreUnavailable
from booking.entry import forms as page_tokens
from booking.mail import sender as booking_mail
from booking.dynamo.history import RequestHistory
from booking.wiring import get_booking_service, leases as service_leases
from booking.wiring import mail_sender
from tests.mail.helpers import deliver_owed
from tests.web.test_signup import submit


class RefusingBackend(BaseEmailBackend):
    """A mail server that is down."""

    def send_messages(self, email_messages):
        raise smtplib.SMTPConnectError(421, "Service not available")


def owed():
    return list(mail_sender().outbox.pending())


def statuses(message_id):
    return [r["exec_status"] for r in reversed(list(RequestHistory(get_booking_service().store).newest_first(message_id)))]


def worker(*args):
    out = StringIO()
    call_command("booking_worker", "--once", "--min-age", "0", "--json", *args, stdout=out)
    return json.loads(out.getvalue())


def replay(*args):
    out = StringIO()
    call_command("replay_failed", "--json", *args, stdout=out)
    return json.loads(out.getvalue())


@pytest.fixture
def failed_send(client, service, settings):
    """A booking whose confirmation could not be sent (the mail server was down)."""
    settings.EMAIL_BACKEND = "tests.mail.test_sender.RefusingBackend"
    event = service.create_event(name="Mail outage", capacity=5, strategy="aggregate")
    response = submit(client, event.id)
    settings.EMAIL_BACKEND = "django.core.mail.backends.locmem.EmailBackend"
    return event, response


def test_signup__mail_server_fails__booking_kept_mail_still_owed(client, service, failed_send):
    event, response = failed_send
    page = client.get(response["Location"])

    assert response.status_code == 303 and page.status_code == 200
    registration = service.find_registration(event.id, email="ada@example.com")
    assert re.search(r'href="http://testserver/cancel/', page.content.decode())
    [message] = owed()
    assert message["message_id"] == f"confirmation-{registration.registration_id}"
    assert statuses(message["message_id"]) == ["started", "failed"]


def test_booking_worker__failed_send__left_to_replay_failed(failed_send):
    assert worker() == {"failed": 1}
    assert mail.outbox == [] and len(owed()) == 1


def test_replay_failed__failed_send__sent_once_then_nothing_owed(failed_send):
    listed = replay("--dry-run")["messages"]
    assert [(m["kind"], m["failed_reason"], m["outcome"]) for m in listed] == [
        ("confirmation", "mail_failed", "dry_run")]
    assert mail.outbox == []

    [sent] = replay()["messages"]

    assert sent["outcome"] == "sent" and len(mail.outbox) == 1
    assert owed() == [] and replay()["messages"] == []
    assert len(mail.outbox) == 1


def test_replay_failed__another_run_holds_lease__refused_sends_nothing(failed_send):
    service_leases().acquire("replay_failed", seconds=60)

    with pytest.raises(CommandError) as refused:
        replay()
    assert refused.value.returncode == 3 and mail.outbox == []


def test_replay_failed__bad_since__clear_error(service):
    with pytest.raises(CommandError, match="--since must be an ISO 8601"):
        replay("--since", "yesterday")


def test_replay_failed__refused_booking__never_rerun(client, service):
    # A person told "full" is not booked later by anything but their own new request.
    event = service.create_event(name="Tiny", capacity=1)
    service.book(event.id, name="Bo", email="bo@example.com")
    assert submit(client, event.id, token=page_tokens.new_form_token(event.id)).status_code == 409
    service.cancel(event.id, email="bo@example.com")

    replay()
    worker()

    assert service.find_registration(event.id, email="ada@example.com") is None
    assert service.availability(event.id).confirmed == 0


def test_signup__mail__names_event_and_person_with_working_cancel_link(client, service):
    event = service.create_event(name="Mail night", capacity=5,
                                 starts_at="2031-01-02T10:00:00+00:00")

    submit(client, event.id, name="Grace Hopper", email="Grace@Example.com")

    [message] = mail.outbox
    assert message.to == ["Grace@Example.com"]  # mailed as typed; stored as its key
    assert message.subject == "Booked: Mail night"
    assert "Grace Hopper" in message.body and "2 Jan 2031" in message.body
    assert owed() == []
    link = re.search(r"http://testserver(/cancel/\S+/)", message.body).group(1)
    assert client.post(link).status_code == 303
    deliver_owed()
    assert service.find_registration(event.id, email="grace@example.com") is None
    assert [m.subject for m in mail.outbox] == ["Booked: Mail night", "Cancelled: Mail night"]
    assert "grace@example.com" in mail.outbox[1].body and owed() == []


def test_signup__refused_booking__sends_no_mail(client, service):
    event = service.create_event(name="Tiny", capacity=0)

    response = submit(client, event.id, token=page_tokens.new_form_token(event.id))

    assert response.status_code == 409 and mail.outbox == [] and owed() == []


@pytest.mark.parametrize("strategy", ("aggregate", "lock_table", "slots"))
def test_booking_worker__crash_left_mails_unsent__sent_once_each(service, settings, strategy):
    # Bookings and a cancellation made without anyone sending (as if the web process died
    # right after answering): the worker sends each owed e-mail once; a second pass none.
    settings.SITE_URL = "https://tickets.example.com"
    event = service.create_event(name="Crash", capacity=3, strategy=strategy)
    service.book(event.id, name="Ada", email="ada@example.com")
    service.book(event.id, name="Bo", email="bo@example.com")
    service.cancel(event.id, email="bo@example.com")

    assert worker() == {"sent": 3}
    assert worker() == {}

    subjects = sorted((m.to[0], m.subject) for m in mail.outbox)
    assert subjects == [("ada@example.com", "Booked: Crash"), ("bo@example.com", "Booked: Crash"),
                        ("bo@example.com", "Cancelled: Crash")]
    confirmations = [m.body for m in mail.outbox if m.subject.startswith("Booked")]
    assert all("https://tickets.example.com/cancel/" in body for body in confirmations)


def test_signup__request_only_records_the_mail__the_worker_sends_it(client, service):
    # The web process answers and records what is owed; rendering and sending (the pass
    # images, the webhooks' fan-out) cost the worker's CPU, not the door's.
    event = service.create_event(name="Door", capacity=3)
    response = client.post(f"/events/{event.id}/", {
        "name": "Ada", "email": "ada@example.com",
        "token": page_tokens.new_form_token(event.id)},
        content_type="application/x-www-form-urlencoded")
    booking_mail.flush()  # nothing of this request's is running on the web's threads

    assert response.status_code == 303 and mail.outbox == [] and len(owed()) == 1
    out = StringIO()
    call_command("booking_worker", "--once", stdout=out)  # no --min-age: a moment old is owed
    assert out.getvalue().strip() == "1 sent" and len(mail.outbox) == 1 and owed() == []


def test_booking_worker__min_age__leaves_young_messages_to_another_sender(service):
    event = service.create_event(name="Fresh", capacity=3)
    service.book(event.id, name="Ada", email="ada@example.com")

    out = StringIO()
    call_command("booking_worker", "--once", "--min-age", "10", stdout=out)

    assert out.getvalue().strip() == "No e-mails owed." and mail.outbox == []


def test_booking_worker__bad_interval__usage_error(service):
    with pytest.raises(CommandError) as refused:
        call_command("booking_worker", "--once", "--interval", "0")
    assert refused.value.returncode == 2


def test_two_senders_at_once__each_mail_sent_exactly_once(server_store, settings):
    settings.EMAIL_BACKEND = "django.core.mail.backends.locmem.EmailBackend"
    from booking.wiring import get_booking_service

    service = get_booking_service()
    event = service.create_event(name="Race", capacity=10, strategy="lock_table")
    for n in range(5):
        service.book(event.id, name=f"P{n}", email=f"p{n}@example.com")
    barrier, outcomes = threading.Barrier(4), []

    def sender():
        barrier.wait()
        outcomes.append(booking_mail.send_owed(mail_sender()))

    threads = [threading.Thread(target=sender) for _ in range(4)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(timeout=60)

    assert sorted(m.to[0] for m in mail.outbox) == [f"p{n}@example.com" for n in range(5)]
    assert sum(o.get("sent", 0) for o in outcomes) == 5 and owed() == []



class _PassesReadFails:
    """The order's passes, read through a store that fails the first read."""

    def __init__(self, passes):
        self.passes, self.failed = passes, False

    def __call__(self, registration):
        if not self.failed:
            self.failed = True
            raise StoreUnavailable()
        return self.passes(registration)


class _LatePassesSender(booking_mail.MailSender):
    """The control: reads the passes after claiming the send (its first version), so a
    failed read is recorded as a failed send and the e-mail is never sent."""

    def _passes(self, message):
        return []

    def _deliver(self, message, event, passes, answers=None):
        return super()._deliver(message, event, booking_mail.MailSender._passes(self, message),
                                answers=answers)


def _sent_after_a_failed_passes_read(service, sender_class) -> bool:
    event = service.create_event(name="Passes", capacity=3, strategy="lock_table")
    service.book(event.id, name="Ada", email="ada@example.com")
    sender = mail_sender()
    sender.__class__ = sender_class
    sender.passes = _PassesReadFails(sender.passes)
    [message] = owed()
    try:
        sender.send(message)
    except StoreUnavailable:
        pass  # the worker's next pass sends it
    return sender.send(message) == booking_mail.SENT and owed() == [] and \
        "BP1." in mail.outbox[0].body  # the pass's code, in text beside its image


def test_send__passes_read_fails__mail_still_owed_then_sent(service):
    # A confirmation shows the order's passes, read from the door's table before the send
    # is claimed: a store fault there leaves the e-mail owed, never recorded failed.
    assert _sent_after_a_failed_passes_read(service, booking_mail.MailSender)


def test_control__passes_read_after_the_claim__mail_recorded_failed(service):
    assert not _sent_after_a_failed_passes_read(service, _LatePassesSender)
