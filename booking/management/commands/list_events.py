"""manage.py list_events: every event with its capacity, confirmed, remaining and strategy."""
import json

from django.core.management.base import BaseCommand, CommandError

from booking.errors import BookingError
from booking.management.output import table
from booking.wiring import get_booking_service

from booking.management.commands.create_event import event_dict


class Command(BaseCommand):
    help = "List every event, soonest first: capacity, confirmed, remaining, strategy."

    def add_arguments(self, parser):
        parser.add_argument("--json", action="store_true", dest="as_json", help="Print JSON.")
        parser.add_argument("--organizer", default=None, metavar="SLUG",
                            help="Only this organizer's events.")

    def handle(self, *args, as_json, organizer, **options):
        service = get_booking_service()
        try:
            events = [e for e in service.list_events()
                      if organizer is None or e.organizer == organizer]
            seats = service.availabilities(events)  # every quota, on every strategy
            rows = [event_dict(e, seats[e.id]) for e in events if e.id in seats]
        except BookingError as exc:
            raise CommandError(exc.message) from exc
        if as_json:
            self.stdout.write(json.dumps(rows, indent=2))
            return
        if not rows:
            self.stdout.write(
                "No events yet. Create one with `manage.py create_event` or `seed_demo`.")
            return
        headers = ("ID", "NAME", "STARTS", "CAPACITY", "CONFIRMED", "REMAINING", "STRATEGY")
        self.stdout.write(table(headers, [
            (r["id"], r["name"], _start(r), r["capacity"], r["confirmed"],
             r["remaining"], r["strategy"]) for r in rows]))


def _start(row) -> str:
    """'2030-12-12 19:30+01:00 Europe/Berlin': the event's local time, its offset and zone."""
    if not row["starts_at"]:
        return "-"
    local = row["starts_at"]
    return f"{local[:10]} {local[11:16]}{local[19:]} {row['time_zone']}"
