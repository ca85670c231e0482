"""manage.py replay_failed: send again the e-mails whose latest send failed."""
import json
from datetime import datetime

from django.core.management.base import BaseCommand, CommandError
from django.utils import timezone

from booking.errors import BookingError, LeaseHeld
from booking.management.output import table
from booking.mail.replay import replay_failed
from booking.wiring import leases, mail_sender, worker_settings

EXIT_LEASE_HELD = 3


class Command(BaseCommand):
    help = (
        "Send again every confirmation or cancellation e-mail whose latest send failed "
        "(between --since and --until) and that is still owed; each is sent at most once. "
        "Booking decisions are never re-run. Exit 3: another replay holds the lease."
    )

    def add_arguments(self, parser):
        parser.add_argument("--since", help="ISO 8601 date/time (default: the beginning).")
        parser.add_argument("--until", help="ISO 8601 date/time (default: now).")
        parser.add_argument("--dry-run", action="store_true", help="List, do not re-run.")
        parser.add_argument("--json", action="store_true", dest="as_json", help="Print JSON.")

    def handle(self, *args, since, until, dry_run: bool, as_json: bool, **options):
        window = {"since": _epoch(since, "--since", 0.0), "until": _epoch(until, "--until", None)}
        try:
            sender = mail_sender()
            replayed = replay_failed(sender, leases(), dry_run=dry_run,
                                     lease_seconds=worker_settings().replay_lease_seconds,
                                     **window)
        except LeaseHeld as held:
            raise CommandError(held.message, returncode=EXIT_LEASE_HELD) from held
        except BookingError as exc:
            raise CommandError(exc.message) from exc
        if as_json:
            self.stdout.write(json.dumps({"dry_run": dry_run,
                                          "messages": [r.as_dict() for r in replayed]}, indent=2))
            return
        rows = [(r.message_id, r.kind, r.event_id, r.email, r.failed_reason, r.outcome)
                for r in replayed]
        self.stdout.write(table(("message", "kind", "event", "email", "failed with",
                                 "outcome"), rows) if rows else "No failed e-mails to replay.")


def _epoch(value, option: str, default):
    if value in (None, ""):
        return default
    try:
        moment = datetime.fromisoformat(value)
    except ValueError:
        raise CommandError(f"{option} must be an ISO 8601 date/time, not {value!r}.",
                           returncode=2) from None
    if timezone.is_naive(moment):
        moment = timezone.make_aware(moment)
    return moment.timestamp()
