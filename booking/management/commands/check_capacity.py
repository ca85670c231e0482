"""manage.py check_capacity: verify (and with --repair fix) each event's stored invariants."""
import json

from django.core.management.base import BaseCommand, CommandError

from booking.errors import BookingError, EventNotFound, LeaseHeld
from booking.management.output import progress, table
from booking.wiring import get_booking_service

EXIT_VIOLATED, EXIT_USAGE, EXIT_LEASE_HELD, EXIT_UNAVAILABLE = 1, 2, 3, 4


class Command(BaseCommand):
    help = (
        "Check every event (or the named ones) against the invariants its strategy relies "
        "on. Exit 0: all hold; 1: violations (each named); 2: usage error or unknown event; "
        "3: --repair found another repair holding the lease. --repair fixes derived data "
        "only (counters, lock items, slot claims), never registrations. Waiting lists are "
        "checked too: confirmed + held <= capacity, nobody both registered and waiting, "
        "offers in join order, every held seat belongs to an open offer; at the door, no pass "
        "admitted twice on a list without re-entry and no list over its occupancy limit."
    )

    def add_arguments(self, parser):
        parser.add_argument("event_ids", nargs="*", metavar="EVENT_ID",
                            help="Events to check (default: all, read page by page).")
        parser.add_argument("--json", action="store_true", dest="as_json",
                            help="Print JSON (docs/commands.md).")
        parser.add_argument("--repair", action="store_true",
                            help="Fix derived data under a time-limited lease, then re-check.")

    def handle(self, *args, **options):
        try:
            self._run(**options)
        except BookingError as exc:  # the store is down or too busy: not a verdict
            raise CommandError(exc.message, returncode=EXIT_UNAVAILABLE) from exc

    def _run(self, *, event_ids, as_json: bool, repair: bool, **options):
        service = get_booking_service()
        for event_id in event_ids:  # refuse unknown ids before touching anything
            try:
                service.get_event(event_id)
            except EventNotFound:
                raise CommandError(f"Unknown event id {event_id!r}.", returncode=EXIT_USAGE)
        ids = event_ids or service.iter_event_ids()
        checked, violations, repairs = 0, [], []
        for event_id in progress(ids, self.stderr, total=len(event_ids) or None):
            checked += 1
            found = self._check(service, event_id)
            if found and repair:
                report = self._repair(service, event_id)
                repairs.append(report)
                found = report.remaining
            violations += found
        self._render(as_json, checked, violations, repairs)
        if violations:
            raise CommandError(f"{len(violations)} invariant violation(s) in {checked} event(s).",
                               returncode=EXIT_VIOLATED)

    def _check(self, service, event_id):
        try:
            return service.audit(event_id)
        except EventNotFound:
            return []  # deleted since the scan listed it
        except BookingError as exc:
            raise CommandError(f"Event {event_id}: {exc.message}") from exc

    def _repair(self, service, event_id):
        try:
            return service.repair(event_id)
        except LeaseHeld as held:
            raise CommandError(held.message, returncode=EXIT_LEASE_HELD) from held
        except BookingError as exc:
            raise CommandError(f"Event {event_id}: {exc.message}") from exc

    def _render(self, as_json, checked, violations, repairs):
        if as_json:
            self.stdout.write(json.dumps({
                "ok": not violations, "events_checked": checked,
                "violations": [v.as_dict() for v in violations],
                "repairs": [r.as_dict() for r in repairs],
            }, indent=2, default=str))
            return
        for report in repairs:
            for change in report.fixed:
                self.stdout.write(f"repaired {report.event_id}: {change}")
        if violations:
            rows = [(v.event_id, v.invariant, str(v.expected), str(v.found), v.detail)
                    for v in violations]
            self.stdout.write(table(("EVENT", "INVARIANT", "EXPECTED", "FOUND", "DETAIL"), rows))
        verdict = "all invariants hold" if not violations else f"{len(violations)} violation(s)"
        self.stdout.write(f"Checked {checked} event(s): {verdict}.")

