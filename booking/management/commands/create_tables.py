from django.core.management.base import BaseCommand, CommandError

from booking.dynamo.provision import drop_tables, ensure_tables
from booking.errors import BookingError
from booking.wiring import get_store


class Command(BaseCommand):
    help = "Create the DynamoDB tables that are missing, wait until active, enable TTL."

    def add_arguments(self, parser):
        parser.add_argument(
            "--reset", action="store_true",
            help="Delete the tables first (all events and registrations are lost).",
        )

    def handle(self, *args, reset, **options):
        store = get_store()
        try:
            if reset:
                for name in drop_tables(store):
                    self.stdout.write(f"{name}: deleted")
            for name, action in ensure_tables(store):
                self.stdout.write(f"{name}: {action}")
        except BookingError as exc:
            raise CommandError(exc.message) from exc
