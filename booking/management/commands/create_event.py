"""manage.py create_event: create one event and print a one-line summary (or its id, or JSON)."""
import json

from django.core.management.base import BaseCommand, CommandError

from booking import times, validation
from booking.errors import BookingError, InvalidBooking
from booking.organizers.models import Organizer
from booking.wiring import get_booking_service
from booking.strategies import GUARDED


def event_dict(event, availability=None) -> dict:
    """The JSON shape of an event (docs/commands.md): times with the event's own offset."""
    zone_name = event.time_zone or None
    data = {"id": event.id, "organizer": event.organizer or None,
            "name": event.name, "capacity": event.capacity,
            "strategy": event.strategy, "version": event.version,
            "starts_at": times.iso_local(event.starts_at, zone_name),
            "ends_at": times.iso_local(event.ends_at, zone_name),
            "time_zone": times.zone(zone_name).key, "venue": event.venue,
            "description": event.description,
            "created_at": event.created_at.isoformat()}
    if event.offers_orders:  # orders: docs/orders.md
        data.update(quotas=dict(event.quotas), max_per_order=event.max_per_order,
                    ticket_types={name: list(q) for name, q in event.ticket_types.items()})
    if availability is not None:
        data.update(confirmed=availability.confirmed, remaining=availability.remaining)
        if availability.further:
            data["quotas_remaining"] = {name: q.remaining for name, q in availability.quotas.items()}
            data["quota_seats"] = {name: {"capacity": q.capacity, "confirmed": q.confirmed,
                                          "held": q.held, "remaining": q.remaining}
                                   for name, q in availability.quotas.items()}
    return data


def parse_quota(value: str) -> tuple[str, int]:
    """``NAME=N`` of ``--quota``."""
    try:
        return validation.parse_quota(value)
    except InvalidBooking:
        raise CommandError(f"--quota takes NAME=N (a whole number of seats), not {value!r}.",
                           returncode=2) from None


def summary(event) -> str:
    """'<id>  Wine tasting · 2030-12-12 19:30 CET (Europe/Berlin) · lock_table · capacity 20'."""
    zone_name = event.time_zone or None
    start = (f"{times.form_value(event.starts_at, zone_name)} "
             f"{times.zone_label(event.starts_at, zone_name)}" if event.starts_at
             else "no start yet")
    line = f"{event.id}  {event.name} · {start} · {event.strategy} · capacity {event.capacity:,}"
    if event.quotas:
        line += " · quotas " + ", ".join(f"{name} {seats:,}" for name, seats in event.quotas.items())
    if event.offers_orders:
        line += f" · {len(event.ticket_types)} ticket type(s), up to {event.max_per_order} per order"
    return line


def owning_organizer(slug: str | None) -> str:
    """The organizer named, or the only one there is (``CommandError`` otherwise)."""
    if slug is not None:
        if not Organizer.objects.filter(slug=slug).exists():
            raise CommandError(f"No organizer {slug!r}.", returncode=2)
        return slug
    slugs = list(Organizer.objects.values_list("slug", flat=True)[:2])
    if len(slugs) != 1:
        raise CommandError("Name the event's organizer with --organizer SLUG (create one "
                           "with manage.py create_organizer SLUG)." if not slugs else
                           "More than one organizer exists: name one with --organizer SLUG.",
                           returncode=2)
    return slugs[0]


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
        parser.add_argument("--quota", action="append", default=[], metavar="NAME=N",
                            help="A quota beside the capacity, e.g. workshop-a=30 (repeatable).")
        parser.add_argument("--ticket-type", action="append", default=[],
                            metavar="NAME[:QUOTA,...]",
                            help="A ticket type and the quotas it counts against besides the "
                                 "capacity, e.g. workshop:workshop-a (repeatable; none: one "
                                 "type, admission).")
        parser.add_argument("--max-per-order", default=None,
                            help="Seats one order may hold (default 1).")
        parser.add_argument("--expected-rate", default=None, metavar="PER_SECOND",
                            help="Arrivals a second expected at the busiest moment (a drop's "
                                 "opening); shards gives the event a shard per 400 beyond its "
                                 "8 (docs/scaling.md).")
        parser.add_argument("--organizer", default=None, metavar="SLUG",
                            help="The organizer that owns the event (required when more "
                                 "than one exists; with exactly one, that one).")
        output = parser.add_mutually_exclusive_group()
        output.add_argument("--json", action="store_true", dest="as_json",
                            help="Print the event as JSON.")
        output.add_argument("--id-only", action="store_true", help="Print only the event id.")

    def handle(self, *args, name, capacity, strategy, starts_at, as_json, id_only, **options):
        try:
            seats = int(capacity)
        except ValueError:
            raise CommandError("Capacity must be a whole number.", returncode=2) from None
        types = [validation.parse_ticket_type(value) for value in options["ticket_type"]]
        try:
            per_order = None if options["max_per_order"] is None else int(options["max_per_order"])
        except ValueError:
            raise CommandError("--max-per-order must be a whole number.", returncode=2) from None
        try:
            rate = None if options["expected_rate"] is None else int(options["expected_rate"])
        except ValueError:
            raise CommandError("--expected-rate must be a whole number.", returncode=2) from None
        quota_args = [parse_quota(value) for value in options["quota"]]
        organizer = owning_organizer(options["organizer"])
        try:
            quotas = validation.unique_names(quota_args, field="quotas", kind="--quota")
            ticket_types = validation.unique_names(types, field="ticket_types",
                                                   kind="--ticket-type")
            event = get_booking_service().create_event(
                name=name, capacity=seats, strategy=strategy, starts_at=starts_at,
                ends_at=options["ends_at"], time_zone=options["time_zone"],
                venue=options["venue"], description=options["description"],
                quotas=quotas or None, ticket_types=ticket_types or None,
                max_per_order=per_order, organizer=organizer, expected_rate=rate)
        except BookingError as exc:
            raise CommandError(exc.message, returncode=2) from exc
        for quota, size in event.quotas.items():  # as the admin's editor warns (stderr)
            if size > event.capacity:
                self.stderr.write(f"Warning: the quota {quota} has {size:,} seats, more than "
                                  f"the event's {event.capacity:,}: its ticket types can never "
                                  "sell more than the event's seats (until the capacity grows).")
        if as_json:
            self.stdout.write(json.dumps(event_dict(event), indent=2))
        else:
            self.stdout.write(event.id if id_only else summary(event))
