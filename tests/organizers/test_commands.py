"""create_organizer, create_api_token, create_event --organizer and assign_organizer."""
from io import StringIO

import pytest
from django.contrib.auth.models import User
from django.core.management import call_command
from django.core.management.base import CommandError

from booking.api.models import ApiToken
from booking.organizers import rights
from booking.organizers.models import Organizer, Team
from booking.wiring import webhook_registry
from tests.organizers.helpers import organizer

pytestmark = pytest.mark.django_db


def run(*args) -> str:
    out = StringIO()
    call_command(*args, stdout=out)
    return out.getvalue().strip()


def test_create_organizer__members_by_role__idempotent():
    User.objects.create_user("ann", is_staff=True)
    User.objects.create_user("bo", is_staff=True)

    assert run("create_organizer", "acme", "--name", "Acme", "--member", "ann:admin",
               "--member", "bo:viewer") == "acme"
    run("create_organizer", "acme", "--member", "ann:admin")

    assert Organizer.objects.get(slug="acme").name == "Acme"
    assert sorted(Team.objects.values_list("role", flat=True)) == ["admin", "viewer"]
    assert rights.for_user(User.objects.get(username="ann")).may_organizer(rights.MANAGE, "acme")


@pytest.mark.parametrize("args, message", [
    (("Bad Slug",), "lower-case"),
    (("acme", "--member", "ann:owner"), "USERNAME:ROLE"),
    (("acme", "--member", "ghost:admin"), "No such user: ghost"),
])
def test_create_organizer__bad_input__error_nothing_stored(args, message):
    User.objects.create_user("ann", is_staff=True)
    with pytest.raises(CommandError, match=message):
        run("create_organizer", *args)
    assert not Organizer.objects.exists()


def test_create_organizer__a_missing_member_says_how_to_make_one():
    with pytest.raises(CommandError) as refused:
        run("create_organizer", "acme", "--member", "ann:admin")
    assert "createsuperuser --username ann" in str(refused.value)
    assert "--create-user" in str(refused.value)
    assert not Organizer.objects.exists() and not User.objects.exists()


def test_create_organizer__create_user_makes_a_staff_member_without_a_password():
    out, err = StringIO(), StringIO()
    call_command("create_organizer", "acme", "--member", "ann:admin", "--create-user",
                 stdout=out, stderr=err)
    assert out.getvalue().strip() == "acme"  # the slug only, for scripts
    assert "manage.py changepassword ann" in err.getvalue()
    ann = User.objects.get(username="ann")
    assert ann.is_staff and not ann.is_superuser and not ann.has_usable_password()
    assert rights.for_user(ann).may_organizer(rights.MANAGE, "acme")
    call_command("create_organizer", "acme", "--member", "ann:admin", "--create-user",
                 stdout=StringIO(), stderr=StringIO())  # again: the same user, kept
    assert User.objects.count() == 1


def test_create_organizer__create_user_refuses_a_bad_name__nothing_stored():
    with pytest.raises(CommandError, match="letters, numbers"):
        run("create_organizer", "acme", "--member", "a n!:admin", "--create-user")
    assert not Organizer.objects.exists() and not User.objects.exists()


def test_create_organizer__a_member_who_is_not_staff_is_told_so():
    User.objects.create_user("ann")
    err = StringIO()
    call_command("create_organizer", "acme", "--member", "ann:admin", stdout=StringIO(),
                 stderr=err)
    assert "not a staff user" in err.getvalue()


def test_create_api_token__prints_only_the_token_which_works():
    User.objects.create_user("ann", is_staff=True)
    run("create_organizer", "acme", "--member", "ann:editor")

    printed = run("create_api_token", "--organizer", "acme", "--user", "ann", "--name", "ci",
                  "--scope", "write")

    assert printed.startswith("bk_") and len(printed.split()) == 1
    token = ApiToken.authenticate(printed)
    assert token.organizer.slug == "acme" and token.scope == "write"
    assert rights.for_token(token).may_organizer(rights.CREATE, "acme")


@pytest.mark.parametrize("args, message", [
    (("--organizer", "nope", "--user", "ann"), "No organizer"),
    (("--organizer", "acme", "--user", "ghost"), "No such user"),
    (("--organizer", "other", "--user", "ann"), "no role on other"),
])
def test_create_api_token__refused__nothing_stored(args, message):
    User.objects.create_user("ann", is_staff=True)
    run("create_organizer", "acme", "--member", "ann:admin")
    organizer("other")
    with pytest.raises(CommandError, match=message):
        run("create_api_token", *args, "--name", "ci", "--scope", "read")
    assert not ApiToken.objects.exists()


def test_create_event__organizer_required_with_two(service):
    organizer("acme")
    only = run("create_event", "--name", "Talk", "--capacity", "3", "--id-only")
    assert service.get_event(only).organizer == "acme"
    organizer("other")

    with pytest.raises(CommandError, match="More than one organizer"):
        run("create_event", "--name", "Talk", "--capacity", "3")
    with pytest.raises(CommandError, match="No organizer 'nope'"):
        run("create_event", "--name", "Talk", "--capacity", "3", "--organizer", "nope")
    named = run("create_event", "--name", "Talk", "--capacity", "3", "--organizer", "other",
                "--id-only")

    assert service.get_event(named).organizer == "other" and len(service.list_events()) == 2


def test_assign_organizer__only_unowned__idempotent(service):
    organizer("acme"), organizer("other")
    old = service.create_event(name="Old", capacity=3)
    owned = service.create_event(name="Owned", capacity=3, organizer="other")
    hook = webhook_registry(service).register(url="https://hooks.example.com/a",
                                              events=["registration.created"])
    old_token = ApiToken(user=User.objects.create_user("ann", is_staff=True), name="old")
    old_token.issue()
    old_token.save()

    assert run("assign_organizer", "--default", "acme") == (
        "Assigned 1 event(s), 1 webhook endpoint(s) and 1 API token(s) to acme.")
    assert run("assign_organizer", "--default", "other") == (
        "Assigned 0 event(s), 0 webhook endpoint(s) and 0 API token(s) to other.")

    assert service.get_event(old.id).organizer == "acme"
    assert service.get_event(owned.id).organizer == "other"
    assert webhook_registry(service).get(hook.id).organizer == "acme"
    old_token.refresh_from_db()
    assert old_token.organizer.slug == "acme"
    with pytest.raises(CommandError, match="No organizer"):
        run("assign_organizer", "--default", "nope")
