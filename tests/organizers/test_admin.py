"""Organizers, teams and API tokens in the admin: each organizer's admins manage their own
only; a new token is shown on its page, never in the messages cookie."""
import pytest
from django.contrib.auth.models import Permission

from booking.api.models import ApiToken
from booking.organizers.models import ADMIN, EDITOR, Team
from tests.organizers.helpers import organizer, staff

pytestmark = pytest.mark.django_db
TOKENS, TEAMS = "/admin/booking_api/apitoken/", "/admin/booking_organizers/team/"


@pytest.fixture
def alpha_admin(client):
    staff("beta-boss", "beta", ADMIN)
    client.force_login(staff("alpha-boss", "alpha", ADMIN))
    return client


def test_token__added_for_own_organizer__shown_on_the_page_not_in_a_cookie(alpha_admin):
    alpha = organizer("alpha")

    added = alpha_admin.post(TOKENS + "add/", {"organizer": alpha.pk, "name": "shop",
                                               "scope": "write"})

    [token] = ApiToken.objects.all()
    shown = added.content.decode()
    assert added.status_code == 200 and token.organizer == alpha
    secret = shown.split('id="one-time-secret"')[1].split(">")[1].split("<")[0]
    assert ApiToken.authenticate(secret) == token
    assert "messages" not in added.cookies
    assert secret not in alpha_admin.get(TOKENS).content.decode()


def test_token__another_organizer__refused_nothing_stored(alpha_admin):
    beta = organizer("beta")

    refused = alpha_admin.post(TOKENS + "add/", {"organizer": beta.pk, "name": "steal",
                                                 "scope": "write"})

    assert refused.status_code == 200 and "organizer" in refused.context["adminform"].form.errors
    assert not ApiToken.objects.exists()


def test_token__add_permission_alone_or_editor__cannot_mint(client):
    organizer("alpha")
    minter = staff("minter", role=None)
    minter.user_permissions.add(Permission.objects.get(codename="add_apitoken"))
    for user in (minter, staff("ed", "alpha", EDITOR)):
        client.force_login(user)
        assert client.get(TOKENS + "add/").status_code == 403
    assert not ApiToken.objects.exists()


def test_teams__own_only_members_among_own_people(alpha_admin):
    page = alpha_admin.get(TEAMS + "add/").content.decode()
    listed = alpha_admin.get(TEAMS).content.decode()
    beta_team = Team.objects.get(organizer__slug="beta")

    assert "alpha-boss" in page and "beta-boss" not in page
    assert "Beta" not in listed
    assert alpha_admin.get(f"{TEAMS}{beta_team.pk}/change/").status_code == 302  # not found
    refused = alpha_admin.post(TEAMS + "add/", {"organizer": beta_team.organizer.pk,
                                                "name": "Mine now", "role": ADMIN,
                                                "all_events": "on", "limit_events": "[]",
                                                "members": [beta_team.members.first().pk]})
    assert refused.status_code == 200
    assert not Team.objects.filter(name="Mine now").exists()


# --- the fourth round: a team's event list is checked at save, read safely ------------------
@pytest.mark.parametrize("bad", ["5", '"abc"', '[5]', '["not-an-id"]', '{"a": 1}'])
def test_teams__limit_events_not_a_list_of_ids__refused_nothing_stored(alpha_admin, bad):
    response = alpha_admin.post(TEAMS + "add/", {
        "organizer": organizer("alpha").pk, "name": "Some events", "role": EDITOR,
        "limit_events": bad, "members": [Team.objects.get(organizer__slug="alpha")
                                         .members.first().pk]})

    assert response.status_code == 200
    assert "limit_events" in response.context["adminform"].form.errors
    assert not Team.objects.filter(name="Some events").exists()


def test_teams__bad_stored_limit_events__members_pages_answer_on_both_organizers(
        client, service):
    from tests.organizers.helpers import member, token_for
    theirs = service.create_event(name="Beta night", capacity=5, organizer="beta")
    both = staff("both", "beta", ADMIN)
    team = member(both, "alpha", EDITOR, events=["0" * 32])
    Team.objects.filter(pk=team.pk).update(limit_events=5)  # saved before it was checked
    _, auth = token_for(both, "read", "beta")
    client.force_login(both)

    assert client.get("/admin/").status_code == 200
    assert client.get("/admin/booking/dynamoevent/").status_code == 200
    assert client.get(f"/api/v1/events/{theirs.id}/registrations/", **auth).status_code == 200
    listed = client.get("/api/v1/events/", **auth).json()["results"]
    assert [e["id"] for e in listed] == [theirs.id]
