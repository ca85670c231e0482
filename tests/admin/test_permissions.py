"""Who may do what in the events admin: the user's role on the event's organizer
(booking/organizers/rights.py), not Django's model permissions."""
import pytest
from django.contrib.auth.models import Permission
from django.urls import reverse

from booking.organizers.models import EDITOR, VIEWER
from tests.organizers.helpers import DEFAULT, member

pytestmark = pytest.mark.django_db


def admin_url(name, *args):
    return reverse(f"admin:booking_dynamoevent_{name}", args=args)


@pytest.fixture
def event(service):
    created = service.create_event(name="Talk", capacity=3, strategy="lock_table",
                                   organizer=DEFAULT)
    service.book(created.id, name="Ada", email="ada@example.com")
    return created


@pytest.fixture
def viewer(client, django_user_model):
    user = django_user_model.objects.create_user("viewer", password="pw-viewer-1", is_staff=True)
    member(user, DEFAULT, VIEWER)
    client.force_login(user)
    return client


def test_migration__creates_all_four_permissions():
    codenames = set(Permission.objects.filter(content_type__app_label="booking")
                    .values_list("codename", flat=True))
    assert {f"{p}_dynamoevent" for p in ("add", "change", "delete", "view")} <= codenames


def test_view_only__sees_list_form_and_registrations(viewer, event):
    listed = viewer.get(admin_url("changelist"))
    assert [row["event"].name for row in listed.context["rows"]] == ["Talk"]
    assert not listed.context["can_add"]
    form = viewer.get(admin_url("change", event.id))
    assert form.status_code == 200 and b'name="_save"' not in form.content
    assert all(field.disabled for field in form.context["form"].fields.values())
    registrations = viewer.get(admin_url("registrations", event.id))
    assert b"ada@example.com" in registrations.content and b"cancel_selected" not in registrations.content
    assert viewer.get(admin_url("export", event.id)).status_code == 200


def test_view_only__cannot_change_add_delete_or_cancel(viewer, service, event):
    posted = {"name": "Hijacked", "capacity": "9", "version": str(event.version), "starts_at": ""}
    assert viewer.post(admin_url("change", event.id), posted).status_code == 403
    assert viewer.get(admin_url("add")).status_code == 403
    assert viewer.get(admin_url("delete", event.id)).status_code == 403
    assert viewer.post(admin_url("delete", event.id)).status_code == 403
    cancel = {"action": "cancel_selected", "selected": ["ada@example.com"]}
    assert viewer.post(admin_url("registrations", event.id), cancel).status_code == 403
    assert service.get_event(event.id).name == "Talk"
    assert service.availability(event.id).confirmed == 1


def test_non_staff__redirected_to_login(client, django_user_model, event):
    user = django_user_model.objects.create_user("guest", password="pw-guest-1")
    member(user, DEFAULT, EDITOR)
    client.force_login(user)
    for url in (admin_url("changelist"), admin_url("change", event.id),
                admin_url("registrations", event.id), admin_url("export", event.id)):
        response = client.get(url)
        assert response.status_code == 302 and "/admin/login/" in response["Location"]


def test_staff_without_a_team__forbidden_and_events_not_found(client, django_user_model,
                                                                event):
    user = django_user_model.objects.create_user("staff", password="pw-staff-1", is_staff=True)
    user.user_permissions.add(*Permission.objects.filter(codename__endswith="_dynamoevent"))
    client.force_login(user)
    assert client.get(admin_url("changelist")).status_code == 403
    assert client.get(admin_url("change", event.id)).status_code == 404
