"""The rights module: roles, limited teams, superusers, tokens (scope, revocation, lost
membership, inactive or demoted users), and what listings reach."""
from dataclasses import dataclass

import pytest
from django.contrib.auth.models import User

from booking.api.models import READ, WRITE
from booking.organizers import rights
from booking.organizers.models import ADMIN, CHECKIN, EDITOR, VIEWER, Team
from tests.organizers.helpers import member, organizer, staff, token_for

pytestmark = pytest.mark.django_db


@dataclass(frozen=True)
class Ev:
    id: str
    organizer: str


A1, A2, B1 = Ev("a1", "a"), Ev("a2", "a"), Ev("b1", "b")


@pytest.mark.parametrize("role, allowed", [
    (ADMIN, set(rights.ACTIONS)),
    (EDITOR, {rights.VIEW, rights.CHANGE, rights.DELETE, rights.CREATE, rights.SECRETS,
              rights.SCAN, rights.SEE_DOOR}),
    (VIEWER, {rights.VIEW}),
    (CHECKIN, {rights.SCAN, rights.SEE_DOOR}),
])
def test_role__grants_its_actions_on_its_organizer_only(role, allowed):
    organizer("b")
    user = staff("u", "a", role)
    mine = rights.for_user(user)

    assert {a for a in rights.ACTIONS if mine.may_event(a, A1)} == allowed
    assert mine.knows_event(A1) and not mine.knows_event(B1)
    assert not any(mine.may_event(a, B1) for a in rights.ACTIONS)


def test_limited_team__only_its_events_never_organizer_wide():
    user = staff("u", "a", role=None)
    member(user, "a", EDITOR, events=["a1"])
    mine = rights.for_user(user)

    assert mine.may_event(rights.CHANGE, A1) and not mine.knows_event(A2)
    assert not mine.may_organizer(rights.CREATE, "a")
    scope = mine.scope(rights.VIEW)
    assert scope.organizers == frozenset() and scope.event_ids == {"a1"}
    assert scope.holds(A1) and not scope.holds(A2)


def test_superuser__everything_in_the_admin_but_a_token_only_its_organizer():
    organizer("a"), organizer("b")
    root = User.objects.create_superuser("root", "r@example.com", "pw")
    assert rights.for_user(root).may_event(rights.DELETE, B1)
    assert rights.for_user(root).scope().is_everything
    token, _ = token_for(root, WRITE, "a")

    mine = rights.for_token(token)
    assert mine.may_event(rights.DELETE, A1) and not mine.knows_event(B1)


@pytest.mark.parametrize("lose", ["membership", "role", "inactive", "staff", "revoked"])
def test_token__is_its_users_rights_now(lose):
    user = staff("u", "a", EDITOR)
    token, _ = token_for(user, WRITE, "a")
    assert rights.for_token(token).may_event(rights.CHANGE, A1)

    if lose == "membership":
        user.organizer_teams.clear()
    elif lose == "role":
        Team.objects.filter(members=user).update(role=VIEWER)
    elif lose in ("inactive", "staff"):
        setattr(user, "is_active" if lose == "inactive" else "is_staff", False)
        user.save()
    else:
        token.revoked_at = token.created_at
    token.user.refresh_from_db()

    assert not rights.for_token(token).may_event(rights.CHANGE, A1)


def test_read_token__views_never_changes_nor_sees_secrets():
    token, _ = token_for(staff("u", "a", ADMIN), READ, "a")
    mine = rights.for_token(token)

    assert mine.may_event(rights.VIEW, A1) and mine.may_organizer(rights.SEE_WEBHOOKS, "a")
    assert not any(mine.may_event(a, A1) for a in
                   (rights.CHANGE, rights.DELETE, rights.SECRETS, rights.CREATE, rights.MANAGE))


def test_token__of_another_organizer_than_its_users_team__nothing():
    organizer("b")
    token, _ = token_for(staff("u", "a", ADMIN), WRITE, "b")

    assert rights.for_token(token).is_empty


def test_mint__needs_admin_on_all_events():
    assert rights.may_mint_token(staff("boss", "a", ADMIN), "a")
    assert not rights.may_mint_token(staff("ed", "a", EDITOR), "a")
    limited = staff("lim", "a", role=None)
    member(limited, "a", ADMIN, events=["a1"])
    assert not rights.may_mint_token(limited, "a")
