"""manage.py create_event: create one event and print a one-line summary (or its id, or JSON)."""
import json

from django.core.management.base import BaseCommand, CommandError

from booking import times
from booking.errors import BookingError
from booking.wiring import get_booking_service
from booking.strategies import GUARDED


def event_dict(event, availability=None) -> dict:
    """The JSON shape of an event (docs/commands.md): times with the event's own offset."""
    zone_name = event.time_zone or None
    data = {"id": event.id, "name": event.name, "capacity": event.capacity,
            "strategy": event.strategy, "version": event.version,
            "starts_at": times.iso_local(event.starts_at, zone_name),
            "ends_at": times.iso_local(event.ends_at, zone_name),
            "time_zone": times.zone(zone_name).key, "venue": event.venue,
            "description": event.description,
            "created_at": event.created_at.isoformat()}
    if availability is not None:
        data.update(confirmed=availability.confirmed, remaining=availability.remaining)
    return data


def summary(event) -> str:
    """'<id>  Wine tasting · 2030-12-12 19:30 CET (Europe/Berlin) · lock_table · capacity 20'."""
    zone_name = event.time_zone or None
    start = (f"{times.form_value(event.starts_at, zone_name)} "
             f"{times.zone_label(event.starts_at, zone_name)}" if event.starts_at
             else "no start yet")
    return f"{event.id}  {event.name} · {start} · {event.strategy} · capacity {event.capacity:,}"


class Command(BaseCommand):
    help = ("Create an event and print one line: id, name, start with its zone, strategy, "
            "capacity (--id-only: just the id, for scripts; --json: the whole event).")

    def add_arguments(self, parser):
        parser.add_argument("--name", required=True, help="Event name (at most 200 characters).")
        parser.add_argument("--capacity", required=True, help="Number of seats (whole number).")
        parser.add_argument("--strategy", default=None,
                            help=f"One of {', '.join(GUARDED)} (default BOOKING_DEFAULT_STRATEGY).")
        parser.add_argument("--time-zone", default=None,
                            help="IANA zone of the event, e.g. Europe/Berlin (default TIME_ZONE).")
        parser.add_argument("--starts-at", default=None,
                            help="ISO 8601 start, e.g. 2030-05-01 18:00 (in --time-zone) or "
                                 "2030-05-01T18:00+02:00.")
        parser.add_argument("--ends-at", default=None, help="ISO 8601 end, after the start.")
        parser.add_argument("--venue", default="", help="Where (at most 200 characters).")
        parser.add_argument("--description", default="",
                            help="Shown on the event page (at most 2,000 characters).")
        output = parser.add_mutually_exclusive_group()
        output.add_argument("--json", action="store_true", dest="as_json",
                            help="Print the event as JSON.")
        output.add_argument("--id-only", action="store_true", help="Print only the event id.")

    def handle(self, *args, name, capacity, strategy, starts_at, as_json, id_only, **options):
        try:
            seats = int(capacity)
        except ValueError:
            raise CommandError("Capacity must be a whole number.", returncode=2) from None
        try:
            event = get_booking_service().create_event(
                name=name, capacity=seats, strategy=strategy, starts_at=starts_at,
                ends_at=options["ends_at"], time_zone=options["time_zone"],
                venue=options["venue"], description=options["description"])
        except BookingError as exc:
            raise CommandError(exc.message, returncode=2) from exc
        if as_json:
            self.stdout.write(json.dumps(event_dict(event), indent=2))
        else:
            self.stdout.write(event.id if id_only else summary(event))
