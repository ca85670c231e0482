"""manage.py create_organizer SLUG [--name NAME] [--member USERNAME:ROLE ...] [--create-user]:
make an organizer (or find it) and put users in its teams, one team per role. A member must
exist, unless ``--create-user`` makes the missing ones as staff users without a password
(``manage.py changepassword USERNAME`` gives them one)."""
from typing import Any

from django.contrib.auth import get_user_model
from django.core.exceptions import ValidationError
from django.core.management.base import BaseCommand, CommandError
from django.db import transaction

from booking.organizers.models import ROLES, SLUG_RULE, Organizer, Team


def parse_member(value: str) -> tuple[str, str]:
    username, _, role = value.rpartition(":")
    if not username or role not in ROLES:
        raise CommandError(f"--member takes USERNAME:ROLE with ROLE one of "
                           f"{', '.join(ROLES)}, not {value!r}.", returncode=2)
    return username, role


class Command(BaseCommand):
    help = ("Create an organizer (idempotent: an existing one is kept, its name updated "
            "when --name is given) and add users to its teams: one team per role, on all "
            "of its events. Prints the slug.")

    def add_arguments(self, parser):
        parser.add_argument("slug", help="1 to 50 lower-case letters, digits and hyphens.")
        parser.add_argument("--name", default=None, help="Shown in the admin (default: SLUG).")
        parser.add_argument("--member", action="append", default=[], metavar="USERNAME:ROLE",
                            help=f"Add a user with a role ({', '.join(ROLES)}); repeatable. "
                                 "The user must exist (manage.py createsuperuser, or "
                                 "--create-user).")
        parser.add_argument("--create-user", action="store_true",
                            help="Create the members that do not exist as staff users (not "
                                 "superusers) with no password yet: set one with "
                                 "manage.py changepassword USERNAME.")

    def handle(self, *args, slug, name, member, create_user=False, **options):
        try:
            SLUG_RULE(slug)
        except ValidationError as error:
            raise CommandError(f"{slug!r}: {error.messages[0]}", returncode=2) from None
        members = [parse_member(value) for value in member]
        users = get_user_model().objects
        found: dict[str, Any] = {username: users.filter(username=username).first()
                                 for username, _ in members}
        missing = sorted(u for u, user in found.items() if user is None)
        if missing and not create_user:
            raise CommandError(missing_users(missing), returncode=2)
        with transaction.atomic():
            for username in missing:
                found[username] = create_staff_user(username)
            organizer, created = Organizer.objects.get_or_create(
                slug=slug, defaults={"name": name or slug})
            if not created and name:
                organizer.name = name
                organizer.save(update_fields=["name"])
            for username, role in members:
                team, _ = Team.objects.get_or_create(
                    organizer=organizer, name=role.capitalize() + "s",
                    defaults={"role": role, "all_events": True})
                team.members.add(found[username])
        for username in missing:  # stdout keeps only the slug, for scripts
            self.stderr.write(f"Created the staff user {username!r} with no password: give "
                              f"it one with manage.py changepassword {username}.")
        for username in sorted({u for u, _ in members} - set(missing)):
            if not found[username].is_staff and not found[username].is_superuser:
                self.stderr.write(f"{username!r} is not a staff user, so cannot sign in to "
                                  f"the admin: tick \"Staff status\" on the user in the admin "
                                  f"(Users), or ask a superuser to.")
        self.stdout.write(organizer.slug)


def missing_users(usernames: list[str]) -> str:
    names = ", ".join(usernames)
    first = usernames[0]
    return (f"No such user: {names}. A member must be an existing user: create one with "
            f"manage.py createsuperuser --username {first} (a superuser sees every "
            f"organizer), or add --create-user to create the missing members as staff users "
            f"(then manage.py changepassword {first}).")


def create_staff_user(username: str):
    """A staff user (may open the admin, sees only what its teams give) with no usable
    password yet; ``CommandError`` for a name Django's users refuse."""
    model = get_user_model()
    user = model(username=username, is_staff=True)
    user.set_unusable_password()
    try:
        user.full_clean(exclude=["password"])
    except ValidationError as error:
        reason = " ".join(error.messages)
        raise CommandError(f"{username!r}: {reason}", returncode=2) from None
    user.save()
    return user
