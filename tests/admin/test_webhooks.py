"""Webhook endpoints in the admin: organizers add (https only; the secret shown once),
see their own, read the delivery log, remove, and re-enable one that was disabled."""
import pytest
from django.contrib.auth.models import Permission
from django.urls import reverse

from booking.dynamo.webhooks import WebhookEndpoints
from booking.mail.sender import send_owed
from booking.organizers.models import ADMIN
from booking.wiring import mail_sender, webhook_registry, webhook_sender
from tests.organizers.helpers import DEFAULT, member

pytestmark = pytest.mark.django_db
FORM = {"url": "https://hooks.example.com/a", "events": ["registration.created"],
        "event_id": "", "description": "CRM"}


def admin_url(name, *args):
    return reverse(f"admin:booking_api_webhookendpointentry_{name}", args=args)


def organizer(client, django_user_model, name, slug=DEFAULT):
    """Log in a new staff user, an admin of ``slug`` (Django's model permissions alone
    would give nothing)."""
    user = django_user_model.objects.create_user(name, password="pw", is_staff=True)
    user.user_permissions.add(*Permission.objects.filter(codename__endswith="webhookendpointentry"))
    member(user, slug, ADMIN)
    client.force_login(user)
    return user


def test_add__https_only__secret_shown_on_the_page_only_other_organizer_sees_nothing(
        client, django_user_model, service):
    organizer(client, django_user_model, "ann")
    refused = client.post(admin_url("add"), {**FORM, "url": "http://hooks.example.com/a"})
    assert refused.status_code == 200 and "https://" in str(refused.context["form"].errors)
    added = client.post(admin_url("add"), FORM)

    [endpoint] = webhook_registry(service).listing()
    assert endpoint.url == FORM["url"] and endpoint.organizer == DEFAULT
    assert endpoint.secret in added.content.decode()
    assert "messages" not in added.cookies  # never in the cookie
    listed = client.get(admin_url("changelist"))
    assert endpoint.secret not in listed.content.decode()
    assert [row[0].id for row in listed.context["rows"]] == [endpoint.id]
    organizer(client, django_user_model, "bob", slug="other-org")
    assert client.get(admin_url("changelist")).context["rows"] == []
    assert client.get(admin_url("deliveries", endpoint.id)).status_code == 302  # not found
    client.post(admin_url("delete", endpoint.id))
    assert webhook_registry(service).listing() == [endpoint]


def test_log_disable_enable_remove(client, django_user_model, service):
    user = organizer(client, django_user_model, "ann")
    endpoint = webhook_registry(service).register(url=FORM["url"], events=FORM["events"],
                                                  owner=str(user.pk), organizer=DEFAULT)
    event = service.create_event(name="Hooks", capacity=3, strategy="lock_table",
                                 organizer=DEFAULT)
    service.book(event.id, name="Ada", email="ada@example.com")
    send_owed(mail_sender(service), min_age=0)
    webhook_sender(service, post=lambda *a, **k: 502).run_pass()

    log = client.get(admin_url("deliveries", endpoint.id))
    assert b"HTTP 502" in log.content and b"registration.created" in log.content
    store = WebhookEndpoints(service.store)
    store.disable(endpoint.id, since=store.get(endpoint.id)["failing_since"],
                  reason="Every delivery failed for 24 hours.", now=1.0)
    listed = client.get(admin_url("changelist"))
    assert any("was disabled" in str(m) for m in listed.context["messages"])
    client.post(admin_url("enable", endpoint.id))
    assert webhook_registry(service).get(endpoint.id).active
    client.post(admin_url("delete", endpoint.id))
    assert webhook_registry(service).listing() == []


def test_add__event_picked_by_name_listed_by_name_another_organizers_event_refused(
        client, django_user_model, service):
    organizer(client, django_user_model, "ann")
    ours = service.create_event(name="Spring gala", capacity=5, organizer=DEFAULT)
    theirs = service.create_event(name="Their party", capacity=5, organizer="globex")
    form = client.get(admin_url("add")).context["form"]
    assert ("", "Every event") in form.fields["event_id"].choices
    assert (ours.id, "Spring gala") in form.fields["event_id"].choices
    assert theirs.id not in dict(form.fields["event_id"].choices)  # not offered
    refused = client.post(admin_url("add"), {**FORM, "event_id": theirs.id,
                                             "organizer": DEFAULT})
    assert refused.status_code == 200 and refused.context["form"].errors["event_id"]
    assert webhook_registry(service).listing() == []

    client.post(admin_url("add"), {**FORM, "event_id": ours.id, "organizer": DEFAULT})
    [endpoint] = webhook_registry(service).listing()
    assert endpoint.scope == ours.id
    listing = client.get(admin_url("changelist")).content.decode()
    assert "Spring gala" in listing and ours.id not in listing.replace(endpoint.id, "")
    assert reverse("api:docs") in listing  # the API docs are linked


def test_new_secret_and_token_pages__link_the_api_docs(client, django_user_model, service):
    organizer(client, django_user_model, "ann")
    added = client.post(admin_url("add"), {**FORM, "organizer": DEFAULT})
    assert reverse("api:docs") in added.content.decode()


def test_add__two_organizers__events_offered_are_the_chosen_organizers_only(
        client, django_user_model, service):
    user = organizer(client, django_user_model, "ann")  # admin of acme
    member(user, "zeta", ADMIN)
    ours = service.create_event(name="Acme gala", capacity=5, organizer=DEFAULT)
    zetas = service.create_event(name="Zeta party", capacity=5, organizer="zeta")

    first = client.get(admin_url("add"))
    form = first.context["form"]
    assert form["organizer"].value() == DEFAULT
    assert set(dict(form.fields["event_id"].choices)) == {"", ours.id}
    assert "?organizer=zeta" in first.content.decode()
    switched = client.get(admin_url("add") + "?organizer=zeta").context["form"]
    assert switched["organizer"].value() == "zeta"
    assert set(dict(switched.fields["event_id"].choices)) == {"", zetas.id}

    client.post(admin_url("add"), {**FORM, "event_id": zetas.id, "organizer": "zeta"})
    [endpoint] = webhook_registry(service).listing()
    assert (endpoint.organizer, endpoint.scope) == ("zeta", zetas.id)
