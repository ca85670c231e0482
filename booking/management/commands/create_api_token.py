"""manage.py create_api_token --organizer SLUG --user USERNAME --name NAME --scope read|write:
mint an API token for a member of an organizer; print it once, nothing else. (The
operator running it holds the server; in the admin only the organizer's admins mint.)"""
from django.contrib.auth import get_user_model
from django.core.management.base import BaseCommand, CommandError

from booking.organizers.tokens import READ, WRITE, ApiToken
from booking.organizers import rights
from booking.organizers.models import Organizer


class Command(BaseCommand):
    help = ("Create an API token of USERNAME on the organizer SLUG and print it (only "
            "now: it is stored hashed). The user must be active staff with a role on the "
            "organizer (or a superuser); the token can do what the user can do there, at "
            "each request, and no more than read with --scope read.")

    def add_arguments(self, parser):
        parser.add_argument("--organizer", required=True, metavar="SLUG")
        parser.add_argument("--user", required=True, metavar="USERNAME")
        parser.add_argument("--name", required=True, help="What the token is for.")
        parser.add_argument("--scope", required=True, choices=(READ, WRITE))

    def handle(self, *args, organizer, user, name, scope, **options):
        found = Organizer.objects.filter(slug=organizer).first()
        if found is None:
            raise CommandError(f"No organizer {organizer!r}.", returncode=2)
        owner = get_user_model().objects.filter(username=user).first()
        if owner is None:
            raise CommandError(f"No such user: {user}.", returncode=2)
        if not name.strip() or len(name) > 100:
            raise CommandError("--name takes 1 to 100 characters.", returncode=2)
        if rights.for_user(owner, organizer=found.slug).is_empty:
            raise CommandError(f"{user} has no role on {organizer} (active staff in one of "
                               "its teams, or a superuser).", returncode=2)
        token = ApiToken(user=owner, organizer=found, name=name.strip(), scope=scope)
        secret = token.issue()
        token.save()
        self.stdout.write(secret)
