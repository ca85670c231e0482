"""Webhooks by organizer: a receiver on 127.0.0.1 gets only its organizer's changes while
both organizers' events take bookings at once; an endpoint cannot name another's event.
The control, a fan-out that forgets the organizer, is caught by the same check."""
import json
import threading

import pytest

from booking.errors import EventNotFound
from booking.mail.sender import send_owed
from booking.webhooks.fanout import ALL_EVENTS, Fanout
from booking.webhooks.registry import endpoint_from_item
from booking.wiring import get_booking_service, mail_sender, webhook_registry, webhook_sender
from tests.webhooks.receiver import LoopbackHttp, Receiver

PEOPLE = 6


class CarelessFanout(Fanout):
    """Tells every endpoint that wants the event, whoever's it is."""

    def listening(self, event_id, event):
        return [e for e in map(endpoint_from_item, self.endpoints.all())
                if e.active and e.scope in (ALL_EVENTS, event_id)]


def deliveries_by_organizer(receiver_factory_fanout) -> tuple[dict, dict, list]:
    """Book on both organizers' events from threads while passes deliver; return (each
    organizer's event id, the event ids each receiver path got, the bad signatures)."""
    service = get_booking_service()
    registry = webhook_registry(service, url_policy=LoopbackHttp())
    events = {org: service.create_event(name=f"{org} night", capacity=PEOPLE,
                                        strategy="lock_table", organizer=org).id
              for org in ("alpha", "beta")}
    with Receiver() as receiver:
        for org in events:
            endpoint = registry.register(url=receiver.url(org), organizer=org,
                                         events=["registration.created"])
            receiver.secrets[org] = endpoint.secret
        sender = mail_sender(service)
        sender.fanout = receiver_factory_fanout(service)
        webhooks = webhook_sender(service, url_policy=LoopbackHttp())
        booking = [threading.Thread(target=service.book, args=(events[org],),
                                    kwargs={"name": f"P{n}", "email": f"p{n}@{org}.example.com"})
                   for n in range(PEOPLE) for org in events]
        for thread in booking:
            thread.start()
        while any(thread.is_alive() for thread in booking):
            send_owed(sender, min_age=0)
            webhooks.run_pass()
        for thread in booking:
            thread.join()
        send_owed(sender, min_age=0)
        webhooks.run_pass()
        got = {org: [json.loads(r.body)["data"]["event_id"] for r in receiver.received
                     if r.path == org] for org in events}
        bad = [r.webhook_id for r in receiver.received if not r.valid]
    return events, got, bad


def product_fanout(service):
    return mail_sender(service).fanout


def careless_fanout(service):
    original = mail_sender(service).fanout
    return CarelessFanout(endpoints=original.endpoints, deliveries=original.deliveries,
                          availability=original.availability,
                          waiting_entry=original.waiting_entry,
                          retention_seconds=original.retention_seconds)


def test_receiver__gets_only_its_organizers_changes(server_store):
    events, got, bad = deliveries_by_organizer(product_fanout)

    assert bad == []
    for org, event_id in events.items():
        assert got[org] == [event_id] * PEOPLE, org


def test_control__careless_fanout__caught(server_store):
    events, got, _ = deliveries_by_organizer(careless_fanout)

    assert events["beta"] in got["alpha"]  # what the check above refuses


def test_register__another_organizers_event__not_found_nothing_stored(service):
    registry = webhook_registry(service, url_policy=LoopbackHttp())
    theirs = service.create_event(name="Beta", capacity=3, organizer="beta")

    with pytest.raises(EventNotFound):
        registry.register(url="https://hooks.example.com/a", events=["registration.created"],
                          scope=theirs.id, organizer="alpha")

    assert registry.listing() == []
