"""manage.py purge_answers EVENT_ID --after-days N: delete an event's answers to its
questions once it has been over for N days (docs/orders.md#questions)."""
from django.core.management.base import BaseCommand, CommandError

from booking.errors import BookingError, EventNotFound, InvalidBooking
from booking.wiring import get_booking_service

EXIT_USAGE, EXIT_UNAVAILABLE = 2, 4


class Command(BaseCommand):
    help = ("Delete every answer to an event's questions once the event has been over (its "
            "end, else its start) for --after-days days. The registrations stay. Exit 2: "
            "unknown event, or not over for that long yet (nothing deleted).")

    def add_arguments(self, parser):
        parser.add_argument("event_id", metavar="EVENT_ID")
        parser.add_argument("--after-days", type=int, required=True, dest="after_days",
                            help="Days the event must have been over.")

    def handle(self, *args, event_id, after_days, **options):
        service = get_booking_service()
        try:
            deleted = service.purge_answers(event_id, after_days=after_days)
        except EventNotFound:
            raise CommandError(f"Unknown event id {event_id!r}.", returncode=EXIT_USAGE)
        except InvalidBooking as refused:
            raise CommandError(refused.message, returncode=EXIT_USAGE)
        except BookingError as exc:
            raise CommandError(exc.message, returncode=EXIT_UNAVAILABLE) from exc
        self.stdout.write(f"Deleted the answers of {deleted} order{'s' if deleted != 1 else ''}.")
