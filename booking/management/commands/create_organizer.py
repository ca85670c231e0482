"""manage.py create_organizer SLUG [--name NAME] [--member USERNAME:ROLE ...]: make an
organizer (or find it) and put existing users in its teams, one team per role."""
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
                            help=f"Add a user with a role ({', '.join(ROLES)}); repeatable.")

    def handle(self, *args, slug, name, member, **options):
        try:
            SLUG_RULE(slug)
        except ValidationError as error:
            raise CommandError(f"{slug!r}: {error.messages[0]}", returncode=2) from None
        members = [parse_member(value) for value in member]
        users = get_user_model().objects
        found = {username: users.filter(username=username).first() for username, _ in members}
        missing = sorted(u for u, user in found.items() if user is None)
        if missing:
            raise CommandError(f"No such user: {', '.join(missing)}.", returncode=2)
        with transaction.atomic():
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
        self.stdout.write(organizer.slug)
