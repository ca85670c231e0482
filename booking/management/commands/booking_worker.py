"""manage.py booking_worker: the product's one background worker (the outbox's safety net,
and the waiting list's clock: lapsed offers pass to the next in line)."""
import json
import time

from django.conf import settings
from django.core.management.base import BaseCommand, CommandError

from booking.errors import BookingError
from booking.mail import send_owed
from booking.wiring import get_booking_service, mail_sender


class Command(BaseCommand):
    help = (
        "Send the confirmation and cancellation e-mails still owed in the outbox (what a "
        "crash or a restart left unsent), each exactly once even beside other senders. "
        "Runs until stopped; --once makes one pass. Failed sends are left to replay_failed. "
        "Each pass also expires lapsed waiting-list offers and offers freed seats to the next "
        "in line."
    )

    def add_arguments(self, parser):
        parser.add_argument("--once", action="store_true", help="One pass, then exit.")
        parser.add_argument("--interval", type=float, default=None,
                            help="Seconds between passes (default BOOKING_WORKER_INTERVAL).")
        parser.add_argument("--min-age", type=float, default=10.0,
                            help="Leave messages younger than this many seconds to the web "
                                 "process that is sending them (default 10).")
        parser.add_argument("--json", action="store_true", dest="as_json",
                            help="Print each pass's outcomes as JSON.")

    def handle(self, *args, once: bool, interval, min_age: float, as_json: bool, **options):
        interval = settings.BOOKING_WORKER_INTERVAL if interval is None else interval
        if interval <= 0 or min_age < 0:
            raise CommandError("--interval must be positive and --min-age not negative.",
                               returncode=2)
        sender = mail_sender()
        while True:
            try:
                waiting = get_booking_service().waiting_list_pass()
                outcomes = {**send_owed(sender, min_age=min_age), **waiting}
            except BookingError as exc:
                if once:
                    raise CommandError(exc.message) from exc
                self.stderr.write(f"Outbox not readable: {exc.message}")
                outcomes = None
            if outcomes is not None and (once or outcomes):
                self.stdout.write(json.dumps(outcomes) if as_json else _summary(outcomes))
            if once:
                return
            time.sleep(interval)


def _summary(outcomes: dict) -> str:
    if not outcomes:
        return "No e-mails owed."
    return ", ".join(f"{count} {outcome.replace('_', ' ')}" for outcome, count in
                     sorted(outcomes.items()))
