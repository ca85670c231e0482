"""The editor sets ticket types bookable only with an access code (the docs showed them
only from Python): ticked on the add form's rows, stored, named on the change form, kept
out of the types added later; a ticked box on a nameless row, or every type code-only
(nobody could book without a code), is said before anything is stored."""
import pytest

from tests.admin.test_events import admin_url, rows

pytestmark = pytest.mark.django_db
BASE = {"name": "DevConf", "capacity": "20", "crowd": "few", "max_per_order": "2",
        "starts_at": "2031-06-01T09:00", "time_zone": "Europe/Berlin"}


def test_add__a_type_ticked_code_only__stored_and_shown_on_the_change_form(admin_client,
                                                                          service):
    page = admin_client.get(admin_url("add")).content.decode()
    assert 'name="type-0-code_only"' in page
    posted = {**BASE, **rows(types=[("Conference", "", ""), ("Speaker", "", "")]),
              "type-1-code_only": "on"}
    response = admin_client.post(admin_url("add"), posted)
    assert response.status_code == 302, response.context["form"].errors
    [event] = service.iter_events()
    assert event.code_only_types == ("speaker",)
    change = admin_client.get(admin_url("change", event.id)).content.decode()
    assert change.count("only with an access code") == 1
    assert 'name="newtype-0-code_only"' not in change  # set at creation only
    # the public form hides it; a code that unlocks it books it
    service.create_access_codes(event.id, codes=["SPEAKER-7Q2K"], ticket_types=["speaker"])
    order = service.book(event.id, name="Ada", email="ada@example.com",
                         tickets={"speaker": 1}, access_code="speaker-7q2k")
    assert order.tickets == {"speaker": 1}


def test_add__code_only_on_a_nameless_row__error_nothing_stored(admin_client, service):
    posted = {**BASE, **rows(types=[("Conference", "", "")]), "type-1-code_only": "on"}
    response = admin_client.post(admin_url("add"), posted)
    assert response.status_code == 200
    assert "Name this ticket type" in response.content.decode()
    assert list(service.iter_events()) == []


def test_add__every_type_code_only__a_warning_then_saved_when_confirmed(admin_client,
                                                                       service):
    posted = {**BASE, **rows(types=[("Speaker", "", "")]), "type-0-code_only": "on"}
    response = admin_client.post(admin_url("add"), posted)
    assert response.status_code == 200 and list(service.iter_events()) == []
    assert "Every ticket type needs an access code" in " ".join(
        response.context["form"].warnings)
    assert admin_client.post(admin_url("add"), {**posted, "save_anyway": "on"}).status_code == 302
    [event] = service.iter_events()
    assert event.code_only_types == ("speaker",)
