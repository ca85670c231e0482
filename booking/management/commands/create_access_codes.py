"""manage.py create_access_codes: create an event's access codes and print them."""
from django.core.management.base import BaseCommand, CommandError

from booking.errors import BookingError
from booking.wiring import get_booking_service


class Command(BaseCommand):
    help = ("Create access codes for an event (all or none) and print one per line: "
            "generated ones (--count) or given ones (--code).")

    def add_arguments(self, parser):
        parser.add_argument("event_id")
        parser.add_argument("--count", type=int, default=1, help="Codes to generate (1-100).")
        parser.add_argument("--code", action="append", dest="codes", metavar="CODE",
                            help="A code to create as given (repeatable); instead of --count.")
        parser.add_argument("--max-uses", type=int, default=1, dest="max_uses",
                            help="Orders each code may be used for (default 1).")
        parser.add_argument("--ticket-type", action="append", dest="ticket_types",
                            metavar="TYPE", help="A type it unlocks (repeatable; default: all).")
        parser.add_argument("--reserve", type=int, default=0, dest="reserved_seats",
                            metavar="N", help="Seats held for the code's holders.")
        parser.add_argument("--valid-until", default=None, dest="valid_until", metavar="ISO",
                            help="End of validity, ISO 8601 (UTC unless it has an offset).")

    def handle(self, *args, event_id, count, codes, max_uses, ticket_types, reserved_seats,
               valid_until, **options):
        try:
            made = get_booking_service().create_access_codes(
                event_id, count=count, codes=codes, max_uses=max_uses, valid_until=valid_until,
                ticket_types=ticket_types, reserved_seats=reserved_seats)
        except BookingError as exc:
            raise CommandError(exc.message) from exc
        for code in made:
            self.stdout.write(code.code)
