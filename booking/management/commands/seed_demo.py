"""manage.py seed_demo: a few realistic demo events when the store has none."""
from datetime import timedelta

from django.core.management.base import BaseCommand, CommandError
from django.utils import timezone

from booking.errors import BookingError
from booking.organizers.models import Organizer
from booking.wiring import get_booking_service

DEMO_ORGANIZER = "demo"
# (name, capacity, strategy, days from now, hour)
DEMO_EVENTS = (
    ("Intro to DynamoDB transactions (workshop)", 20, "lock_table", 7, 18),
    ("Django meetup: service layers in practice", 120, "aggregate", 14, 19),
    ("City marathon 2-hour pacing group", 300, "slots", 30, 8),
    ("Conference keynote: write skew explained", 2000, "lock_table", 45, 9),
)


class Command(BaseCommand):
    help = "Create a few demo events (different strategies, future dates) if there are none."

    def add_arguments(self, parser):
        parser.add_argument("--force", action="store_true",
                            help="Create them even if events already exist.")
        parser.add_argument("--organizer", default=DEMO_ORGANIZER, metavar="SLUG",
                            help=f"Their organizer (default {DEMO_ORGANIZER}, created if "
                                 "missing).")

    def handle(self, *args, force, organizer, **options):
        Organizer.objects.get_or_create(slug=organizer, defaults={"name": organizer})
        service = get_booking_service()
        try:
            if not force and next(service.iter_event_ids(page_size=1), None) is not None:
                self.stdout.write("Events already exist; nothing seeded "
                                  "(use --force to add the demo events).")
                return
            today = timezone.now().replace(minute=0, second=0, microsecond=0)
            for name, capacity, strategy, days, hour in DEMO_EVENTS:
                starts_at = (today + timedelta(days=days)).replace(hour=hour)
                event = service.create_event(name=name, capacity=capacity, strategy=strategy,
                                             starts_at=starts_at, organizer=organizer)
                self.stdout.write(f"{event.id}  {strategy:<10}  {capacity:>5}  {name}")
        except BookingError as exc:
            raise CommandError(exc.message) from exc
        self.stdout.write(f"Seeded {len(DEMO_EVENTS)} demo events.")
