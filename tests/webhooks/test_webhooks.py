"""Webhooks in process (moto): registering, the fan-out from outbox rows, the sender's
claims, retries with backoff, disabling after a day of failures."""
import json

import pytest

from booking.dynamo.webhooks import WebhookDeliveries
from booking.errors import EventNotFound, InvalidBooking, WebhookNotFound
from booking.mail.sender import send_owed
from booking.webhooks import signing
from booking.webhooks.delivery import CLAIMED_ELSEWHERE, DELIVERED, RETRYING
from booking.webhooks.registry import EVENT_TYPES
from booking.wiring import mail_sender, webhook_registry, webhook_sender
from tests.webhooks.receiver import LoopbackHttp

URL = "https://hooks.example.com/booking"


class Clock:
    def __init__(self, now=1_900_000_000.0):
        self.now = now

    def __call__(self):
        return self.now


class FakeReceiver:
    """``post`` for the sender: verifies and records; answers ``status``."""

    def __init__(self, secret, status=204):
        self.secret, self.status, self.seen = secret, status, []

    def __call__(self, target, body, headers, *, timeout):
        assert signing.verify(self.secret, headers, body, now=int(headers["webhook-timestamp"]))
        self.seen.append((headers["webhook-id"], json.loads(body)))
        return self.status


@pytest.fixture
def registry(service):
    return webhook_registry(service)


def owed(service) -> dict:
    """Every delivery row, by id."""
    table = WebhookDeliveries(service.store).table
    return {row["delivery_id"]: row for row in table.scan()}


def test_register__bad_input__refused_and_nothing_stored(registry, service):
    for url in ("http://hooks.example.com/x", "ftp://x", "https://", "https://u:p@h/x", "", 5):
        with pytest.raises(InvalidBooking) as refused:
            registry.register(url=url, events=["registration.created"])
        assert refused.value.field == "url"
    for events in ([], ["nope"], "registration.created", [1]):
        with pytest.raises(InvalidBooking):
            registry.register(url=URL, events=events)
    with pytest.raises(EventNotFound):
        registry.register(url=URL, events=["event.full"], scope="no-such-event")
    assert registry.listing() == []


def test_register__same_request_id__same_endpoint_other_content_refused(registry):
    first = registry.register(url=URL, events=["registration.created"], request_id="k1")
    again = registry.register(url=URL, events=["registration.created"], request_id="k1")
    assert again == first and first.secret.startswith("whsec_")
    with pytest.raises(InvalidBooking) as refused:
        registry.register(url=URL + "/other", events=["registration.created"], request_id="k1")
    assert refused.value.field == "request_id"
    registry.remove(first.id)
    replayed = registry.register(url=URL, events=["registration.created"], request_id="k1")
    assert (replayed.id, replayed.secret) == (first.id, first.secret) and not replayed.active
    assert registry.listing() == []
    with pytest.raises(WebhookNotFound):
        registry.get(first.id)


def test_fanout__booking_and_cancellation__one_delivery_each_repeat_adds_none(registry, service):
    event = service.create_event(name="Hooks", capacity=5, strategy="lock_table")
    other = service.create_event(name="Elsewhere", capacity=5, strategy="lock_table")
    everything = registry.register(url=URL, events=list(EVENT_TYPES))
    scoped = registry.register(url=URL + "/2", events=["registration.cancelled"], scope=event.id)
    registration = service.book(event.id, name="Ada", email="ada@example.com")
    service.book(other.id, name="Bob", email="bob@example.com")
    service.cancel(event.id, email="ada@example.com")
    sender = mail_sender(service)
    messages = list(service.requests.outbox.pending())

    send_owed(sender, min_age=0)
    rows = owed(service)
    for message in messages:
        sender.fanout(message, lambda: event)  # a repeat finds every delivery there

    assert owed(service).keys() == rows.keys()
    kinds = sorted((r["endpoint_id"] == scoped.id, r["event_type"], r["event_id"])
                   for r in rows.values())
    assert kinds == sorted([(False, "registration.cancelled", event.id),
                            (False, "registration.created", event.id),
                            (False, "registration.created", other.id),
                            (True, "registration.cancelled", event.id)])
    created = next(json.loads(r["body"]) for r in rows.values()
                   if r["event_type"] == "registration.created" and r["event_id"] == event.id)
    assert created["type"] == "registration.created"
    assert created["data"] == {"event_id": event.id, "registration_id": registration.registration_id,
                               "name": "Ada", "email": "ada@example.com"}
    assert everything.id in {r["endpoint_id"] for r in rows.values()}


def test_fanout__part_of_an_order_cancelled__says_which_tickets_not_the_whole_order(
        registry, service):
    event = service.create_event(name="Orders", capacity=10, strategy="lock_table",
                                 quotas={"workshop": 3},
                                 ticket_types={"conference": [], "workshop": ["workshop"]},
                                 max_per_order=4)
    registry.register(url=URL, events=["registration.created", "registration.cancelled"])
    service.book(event.id, name="Ada", email="ada@example.com",
                 tickets={"conference": 2, "workshop": 1})
    service.cancel(event.id, email="ada@example.com", tickets={"conference": 1})

    send_owed(mail_sender(service), min_age=0)

    data = {r["event_type"]: json.loads(r["body"])["data"] for r in owed(service).values()}
    assert data["registration.created"]["tickets"] == {"conference": 2, "workshop": 1}
    assert "part_of_order" not in data["registration.created"]
    assert data["registration.cancelled"]["tickets"] == {"conference": 1}
    assert data["registration.cancelled"]["part_of_order"] is True


def test_fanout__last_seat__event_full_too(registry, service):
    event = service.create_event(name="Tiny", capacity=1, strategy="aggregate")
    registry.register(url=URL, events=["event.full"])
    service.book(event.id, name="Ada", email="ada@example.com")
    send_owed(mail_sender(service), min_age=0)
    [row] = owed(service).values()
    assert row["event_type"] == "event.full"
    assert json.loads(row["body"])["data"] == {"event_id": event.id, "capacity": 1}


def test_sender__signed_delivery__delivered_once(registry, service):
    endpoint = registry.register(url=URL, events=["registration.created"])
    event = service.create_event(name="Hooks", capacity=5, strategy="lock_table")
    service.book(event.id, name="Ada", email="ada@example.com")
    send_owed(mail_sender(service), min_age=0)
    receiver = FakeReceiver(endpoint.secret)
    sender = webhook_sender(service, post=receiver)

    assert sender.run_pass() == {DELIVERED: 1}
    assert sender.run_pass() == {}
    [row] = owed(service).values()
    assert [wid for wid, _ in receiver.seen] == [row["delivery_id"]]
    assert row["status"] == "delivered" and "due_in" not in row and row["attempts"] == 1


def test_sender__one_attempt_claimed_once__second_claimer_sends_nothing(registry, service):
    endpoint = registry.register(url=URL, events=["registration.created"])
    event = service.create_event(name="Hooks", capacity=5, strategy="lock_table")
    service.book(event.id, name="Ada", email="ada@example.com")
    send_owed(mail_sender(service), min_age=0)
    receiver = FakeReceiver(endpoint.secret)
    one, two = webhook_sender(service, post=receiver), webhook_sender(service, post=receiver)
    [due] = one.deliveries.due(now=one.clock())  # both read it due, then both claim

    outcomes = [one.attempt(due, endpoint), two.attempt(due, endpoint)]

    assert outcomes == [DELIVERED, CLAIMED_ELSEWHERE] and len(receiver.seen) == 1


def test_sender__failing_receiver__backoff_then_delivered(registry, service):
    endpoint = registry.register(url=URL, events=["registration.created"])
    event = service.create_event(name="Hooks", capacity=5, strategy="lock_table")
    service.book(event.id, name="Ada", email="ada@example.com")
    send_owed(mail_sender(service), min_age=0)
    clock, receiver = Clock(), FakeReceiver(endpoint.secret, status=500)
    sender = webhook_sender(service, post=receiver, clock=clock)
    clock.now = float(next(iter(owed(service).values()))["next_attempt_at"])

    waits = []
    for _ in range(4):
        assert sender.run_pass() == {RETRYING: 1}
        [row] = owed(service).values()
        waits.append(float(row["next_attempt_at"]) - clock.now)
        assert sender.run_pass() == {}  # not due yet
        clock.now = float(row["next_attempt_at"])
    receiver.status = 200
    assert sender.run_pass() == {DELIVERED: 1}

    assert [8 <= w <= 10 * 2**n for n, w in enumerate(waits)] == [True] * 4
    assert waits[3] > waits[0] * 4
    [row] = owed(service).values()
    assert [e["status_code"] for e in row["log"]] == [500, 500, 500, 500, 200]
    assert len({wid for wid, _ in receiver.seen}) == 1
    assert registry.get(endpoint.id).failing_since is None  # the success cleared it


def test_sender__failing_for_the_configured_time__endpoint_disabled_rest_abandoned(
        registry, service, settings):
    settings.WEBHOOK_RETRY_MAX_SECONDS = 3600
    settings.WEBHOOK_DISABLE_AFTER_SECONDS = 4 * 3600  # a day by default
    endpoint = registry.register(url=URL, events=["registration.created"])
    event = service.create_event(name="Hooks", capacity=5, strategy="lock_table")
    service.book(event.id, name="Ada", email="ada@example.com")
    service.book(event.id, name="Bob", email="bob@example.com")
    send_owed(mail_sender(service), min_age=0)
    clock, receiver = Clock(), FakeReceiver(endpoint.secret, status=503)
    sender = webhook_sender(service, post=receiver, clock=clock)
    clock.now = max(float(r["next_attempt_at"]) for r in owed(service).values())
    start = clock.now

    while registry.get(endpoint.id).active:
        sender.run_pass()
        clock.now += 3600
        assert clock.now - start < 6 * 3600
    clock.now += 3600
    sender.run_pass()

    disabled = registry.get(endpoint.id)
    assert disabled.disabled_at - start >= 4 * 3600 and "4 hours" in disabled.disabled_reason
    assert {r["status"] for r in owed(service).values()} == {"abandoned"}
    registry.enable(endpoint.id)
    assert registry.get(endpoint.id).active


def test_sender__allowance_withdrawn__http_loopback_refused_before_sending(service, settings):
    endpoint = webhook_registry(service, url_policy=LoopbackHttp()).register(
        url="http://127.0.0.1:9/hook", events=["registration.created"])
    event = service.create_event(name="Hooks", capacity=5, strategy="lock_table")
    service.book(event.id, name="Ada", email="ada@example.com")
    send_owed(mail_sender(service), min_age=0)
    settings.WEBHOOK_ALLOWED_HOSTS = []
    posts = []
    sender = webhook_sender(service, post=lambda *a, **k: posts.append(a) or 204)

    assert sender.run_pass() == {RETRYING: 1} and posts == []
    [row] = owed(service).values()
    assert row["log"][0]["error"] == "refused: not an allowed URL"
    assert endpoint.url.startswith("http://")


def test_booking_worker_once__fans_out_then_delivers_next_pass(service, monkeypatch):
    """The command's own passes: the outbox pass owes the delivery, the next webhook pass
    sends it (the command's sender, with a test's receiver in place of HTTP)."""
    from io import StringIO

    from django.core.management import call_command

    from booking.management.commands import booking_worker

    endpoint = webhook_registry(service).register(url=URL, events=["registration.created"])
    receiver = FakeReceiver(endpoint.secret)
    monkeypatch.setattr(booking_worker, "webhook_sender",
                        lambda: webhook_sender(service, post=receiver))
    event = service.create_event(name="Hooks", capacity=5, strategy="lock_table")
    service.book(event.id, name="Ada", email="ada@example.com")
    runs = []
    for _ in range(2):
        out = StringIO()
        call_command("booking_worker", "--once", "--min-age", "0", "--json", stdout=out)
        runs.append([json.loads(line) for line in out.getvalue().splitlines()])

    assert {"webhooks": {DELIVERED: 1}} in runs[1] and len(receiver.seen) == 1
