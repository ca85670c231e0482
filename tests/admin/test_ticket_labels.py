"""Ticket types and quotas keep the label the organizer typed ("VIP", not "Vip"): stored
only when given (other events' items as before), shown on the public form, in e-mails, on
the booking's page and in the admin (docs/admin.md)."""
import pytest
from django.core import mail

from booking.dynamo import items
from booking.errors import InvalidBooking
from booking.mail import sender as booking_mail
from booking.service.catalog import creation_fingerprint
from booking.wiring import mail_sender
from tests.admin.test_events import admin_url, rows
from tests.mail.helpers import deliver_owed

pytestmark = pytest.mark.django_db
VIP = {"name": "Gala", "capacity": "10", "crowd": "few", "max_per_order": "3",
       **rows(quotas=[("VIP lounge", "2")],
              types=[("Standing", "", ""), ("VIP", "Champagne.", "VIP lounge")])}


@pytest.fixture
def gala(admin_client, service):
    response = admin_client.post(admin_url("add"), VIP)
    assert response.status_code == 302, response.context and response.context["form"].errors
    (event,) = service.iter_events()
    return event


def test_add__labels_as_typed_stored(gala):
    assert gala.ticket_labels == {"standing": "Standing", "vip": "VIP",
                                  "vip-lounge": "VIP lounge"}
    assert gala.label("vip") == "VIP" and gala.label("standing") == "Standing"


def test_labels__public_form_e_mail_and_admin_say_vip(client, admin_client, service, gala):
    page = client.get(f"/events/{gala.id}/").content.decode()
    assert '>VIP</label>' in page and "Vip" not in page
    registration = service.book(gala.id, name="Ada", email="ada@example.com",
                                tickets={"vip": 1, "standing": 1})
    mail.outbox.clear()
    booking_mail.send_soon(mail_sender(), booking_mail.CONFIRMATION, registration, event=gala)
    deliver_owed()
    (sent,) = mail.outbox
    assert "1 × Standing, 1 × VIP" in sent.body and "Vip" not in sent.body
    assert "1 × VIP" in sent.alternatives[0][0]
    admin = admin_client.get(admin_url("registrations", gala.id)).content.decode()
    assert "1 × VIP" in admin and "VIP lounge" in admin and "Vip" not in admin
    change = admin_client.get(admin_url("change", gala.id)).content.decode()
    assert "VIP: description" in change and "A VIP seat takes" in change
    home = admin_client.get("/admin/").content.decode()
    assert "VIP lounge" in home and "Vip" not in home


def test_labels__stored_only_when_given__other_events_as_before(service):
    kinds = {"conference": [], "vip": []}
    bare = service.create_event(name="A", capacity=5, ticket_types=kinds, max_per_order=2)
    assert "ticket_labels" not in items.event_item(bare) and bare.label("vip") == "Vip"
    labelled = service.create_event(name="A", capacity=5, ticket_types=kinds, max_per_order=2,
                                    ticket_labels={"vip": "VIP", "conference": " "})
    assert service.get_event(labelled.id).ticket_labels == {"vip": "VIP"}
    assert creation_fingerprint(bare) != creation_fingerprint(labelled)


@pytest.mark.parametrize("labels", [{"backstage": "Backstage"}, {"vip": "x" * 61}, ["VIP"]])
def test_labels__bad__refused_nothing_stored(service, labels):
    with pytest.raises(InvalidBooking):
        service.create_event(name="A", capacity=5, ticket_types={"vip": []}, max_per_order=2,
                             ticket_labels=labels)
    assert list(service.iter_events()) == []
