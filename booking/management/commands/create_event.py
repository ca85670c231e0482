"""manage.py create_event: create one event and print its id (or the whole event as JSON)."""
import json

from django.core.management.base import BaseCommand, CommandError

from booking.errors import BookingError
from booking.wiring import get_booking_service
from booking.strategies import GUARDED


def event_dict(event, availability=None) -> dict:
    """The JSON shape of an event (docs/commands.md)."""
    data = {"id": event.id, "name": event.name, "capacity": event.capacity,
            "strategy": event.strategy, "version": event.version,
            "starts_at": event.starts_at.isoformat() if event.starts_at else None,
            "created_at": event.created_at.isoformat()}
    if availability is not None:
        data.update(confirmed=availability.confirmed, remaining=availability.remaining)
    return data


class Command(BaseCommand):
    help = "Create an event and print its id (--json: the whole event)."

    def add_arguments(self, parser):
        parser.add_argument("--name", required=True, help="Event name (at most 200 characters).")
        parser.add_argument("--capacity", required=True, help="Number of seats (whole number).")
        parser.add_argument("--strategy", default=None,
                            help=f"One of {', '.join(GUARDED)} (default BOOKING_DEFAULT_STRATEGY).")
        parser.add_argument("--starts-at", default=None,
                            help="ISO 8601 start, e.g. 2030-05-01T18:00+02:00.")
        parser.add_argument("--json", action="store_true", dest="as_json",
                            help="Print the event as JSON.")

    def handle(self, *args, name, capacity, strategy, starts_at, as_json, **options):
        try:
            seats = int(capacity)
        except ValueError:
            raise CommandError("Capacity must be a whole number.", returncode=2) from None
        try:
            event = get_booking_service().create_event(
                name=name, capacity=seats, strategy=strategy, starts_at=starts_at)
        except BookingError as exc:
            raise CommandError(exc.message, returncode=2) from exc
        self.stdout.write(json.dumps(event_dict(event), indent=2) if as_json else event.id)
