"""manage.py assign_organizer --default SLUG: give the events, webhook endpoints and API
tokens stored before organizers existed (those without one) to an organizer. Idempotent."""
from django.core.management.base import BaseCommand, CommandError

from booking.organizers.tokens import ApiToken
from booking.errors import BookingError
from booking.organizers.models import Organizer
from booking.wiring import get_booking_service, webhook_registry


class Command(BaseCommand):
    help = ("Assign every event, webhook endpoint and API token that has no organizer to "
            "the organizer SLUG (create it first with create_organizer). Each write is "
            "conditional on the item still having none: running it again changes nothing.")

    def add_arguments(self, parser):
        parser.add_argument("--default", required=True, metavar="SLUG", dest="slug")

    def handle(self, *args, slug, **options):
        organizer = Organizer.objects.filter(slug=slug).first()
        if organizer is None:
            raise CommandError(f"No organizer {slug!r}. Create it with "
                               f"manage.py create_organizer {slug}.", returncode=2)
        try:
            events = get_booking_service().assign_organizer(slug)
            endpoints = webhook_registry().assign_organizer(slug)
        except BookingError as error:
            raise CommandError(error.message, returncode=2) from error
        tokens = ApiToken.objects.filter(organizer=None).update(organizer=organizer)
        self.stdout.write(f"Assigned {len(events)} event(s), {len(endpoints)} webhook "
                          f"endpoint(s) and {tokens} API token(s) to {slug}.")
