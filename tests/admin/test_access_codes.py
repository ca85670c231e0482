"""The admin's access-codes page: create one given code or many generated ones, the list
with uses, the CSV of codes, revoking; scoped to the user's organizer."""
import csv
import io

import pytest
from django.urls import reverse

from booking.organizers.models import VIEWER
from tests.organizers.helpers import DEFAULT, member

pytestmark = pytest.mark.django_db


def admin_url(name, *args):
    return reverse(f"admin:booking_dynamoevent_{name}", args=args)


@pytest.fixture
def event(service):
    return service.create_event(name="Summit", capacity=10, strategy="aggregate",
                                organizer=DEFAULT)


def test_create__given_then_generated__listed_with_uses(admin_client, service, event):
    given = admin_client.post(admin_url("access_codes", event.id),
                              {"code": "speaker-7q2k", "max_uses": "3", "count": ""})
    many = admin_client.post(admin_url("access_codes", event.id),
                             {"code": "", "count": "5", "max_uses": "1"})
    service.book(event.id, name="Ada", email="ada@example.com", access_code="SPEAKER-7Q2K")

    assert given.status_code == many.status_code == 302
    response = admin_client.get(admin_url("access_codes", event.id))
    rows = {code.code: (code.uses, status) for code, status in response.context["rows"]}
    assert len(rows) == 6 and rows["SPEAKER-7Q2K"] == (1, "valid")
    assert "1 of 3" in response.content.decode()


def test_create__code_taken__error_shown_nothing_more_stored(admin_client, service, event):
    service.create_access_codes(event.id, codes=["TAKEN"])

    response = admin_client.post(admin_url("access_codes", event.id),
                                 {"code": "taken", "max_uses": "1"})

    assert response.status_code == 200
    assert "already has the code TAKEN" in response.content.decode()
    assert len(service.access_codes(event.id)) == 1


def test_export__csv_of_codes_with_uses(admin_client, service, event):
    service.create_access_codes(event.id, codes=["ONE-CODE", "TWO-CODE"], max_uses=2)
    service.book(event.id, name="Ada", email="ada@example.com", access_code="two-code")

    response = admin_client.get(admin_url("access_codes_export", event.id))

    rows = list(csv.DictReader(io.StringIO(response.content.decode())))
    assert [(r["code"], r["uses"], r["max_uses"]) for r in rows] == [
        ("ONE-CODE", "0", "2"), ("TWO-CODE", "1", "2")]


def test_revoke__selected_code_refuses_further_orders(admin_client, service, event):
    from booking.errors import InvalidAccessCode

    service.create_access_codes(event.id, codes=["GONE-SOON"], max_uses=5)
    response = admin_client.post(admin_url("access_codes", event.id),
                                 {"action": "revoke_selected", "selected": ["GONE-SOON"]})

    assert response.status_code == 302
    with pytest.raises(InvalidAccessCode):
        service.book(event.id, name="Ada", email="ada@example.com", access_code="GONE-SOON")


def test_viewer__sees_codes_cannot_create_or_revoke(client, django_user_model, service, event):
    user = django_user_model.objects.create_user("viewer", password="pw-viewer-1",
                                                 is_staff=True)
    member(user, DEFAULT, VIEWER)
    client.force_login(user)
    service.create_access_codes(event.id, codes=["SEEN-CODE"])

    assert client.get(admin_url("access_codes", event.id)).status_code == 200
    assert client.post(admin_url("access_codes", event.id),
                       {"code": "MINE", "max_uses": "1"}).status_code == 403
    assert client.post(admin_url("access_codes", event.id),
                       {"action": "revoke_selected", "selected": ["SEEN-CODE"]}).status_code == 403
    assert [c.code for c in service.access_codes(event.id)] == ["SEEN-CODE"]
    assert service.access_codes(event.id)[0].revoked_at is None


def test_other_organizers_event__404_as_missing(client, service):
    from tests.organizers.helpers import staff

    client.force_login(staff("acme-admin"))  # an admin of acme only
    other = service.create_event(name="Theirs", capacity=5, organizer="other-org")
    service.create_access_codes(other.id, codes=["THEIRS"])
    for name in ("access_codes", "access_codes_export"):
        assert client.get(admin_url(name, other.id)).status_code == 404
    assert client.post(admin_url("access_codes", other.id),
                       {"action": "revoke_selected", "selected": ["THEIRS"]}).status_code == 404
    assert service.access_codes(other.id)[0].revoked_at is None


@pytest.mark.parametrize("code, warned", [("speaker-2031", True), ("VIP", True),
                                          ("x7kq-p2mw", False)])
def test_create__guessable_given_code__created_with_a_warning(admin_client, service, event,
                                                              code, warned):
    response = admin_client.post(admin_url("access_codes", event.id),
                                 {"code": code, "max_uses": "1", "count": ""}, follow=True)

    shown = [str(m) for m in response.context["messages"]]
    assert [c.code for c in service.access_codes(event.id)] == [code.upper()]
    assert any("easy to guess" in m for m in shown) is warned, shown
