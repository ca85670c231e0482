"""manage.py booking_worker: the product's one background worker (the outbox's sender: the
web process only writes what is owed; the waiting list's clock: lapsed offers pass to the
next in line; and the streams strategy's decider on a thread beside it)."""
import json
import signal
import threading
import time

from django.core.management.base import BaseCommand, CommandError

from booking.models import CONFIRMED, REJECTED
from booking.errors import BookingContention, BookingError, StoreUnavailable
from booking.mail.sender import send_owed
from booking.wiring import (get_booking_service, mail_sender, stream_decider, webhook_sender,
                            worker_settings)

WARM_UP_RETRY_SECONDS = 1.0


class Command(BaseCommand):
    help = (
        "Send the e-mails owed in the outbox (confirmations, cancellations, offers: the web "
        "process only records them), each exactly once even beside other senders, looking "
        "every --outbox-interval seconds. Runs until stopped; --once makes one pass. Failed "
        "sends are left to replay_failed. Every --interval seconds it also expires lapsed "
        "waiting-list offers and offers freed seats to the next in line. Beside it, a thread "
        "sends the webhook deliveries owed (retrying with backoff), "
        "and the stream decider confirms or rejects the streams strategy's pending "
        "bookings in arrival order (--no-decider leaves that to another worker or a Lambda). "
        "SIGTERM stops it after the current step."
    )

    def add_arguments(self, parser):
        parser.add_argument("--once", action="store_true", help="One pass, then exit.")
        parser.add_argument("--interval", type=float, default=None,
                            help="Seconds between passes over the waiting lists and access "
                                 "codes (default BOOKING_WORKER_INTERVAL).")
        parser.add_argument("--outbox-interval", type=float, default=None,
                            help="Seconds between looks at the outbox (default "
                                 "BOOKING_OUTBOX_INTERVAL).")
        parser.add_argument("--min-age", type=float, default=0.0,
                            help="Leave messages younger than this many seconds to another "
                                 "sender (default 0: send everything owed).")
        parser.add_argument("--json", action="store_true", dest="as_json",
                            help="Print each pass's outcomes as JSON.")
        parser.add_argument("--no-decider", action="store_false", dest="decider",
                            help="Do not run the stream decider in this worker.")

    def handle(self, *args, once: bool, interval, min_age: float, as_json: bool,
               decider: bool = True, outbox_interval=None, **options):
        interval = worker_settings().worker_interval if interval is None else interval
        outbox_interval = (worker_settings().outbox_interval if outbox_interval is None
                           else outbox_interval)
        if interval <= 0 or outbox_interval <= 0 or min_age < 0:
            raise CommandError("--interval and --outbox-interval must be positive and "
                               "--min-age not negative.", returncode=2)
        sender = mail_sender()
        if not once:
            self._warm_up(decider)
        stop = threading.Event()
        deciding = self._start_decider(sender, stop, once, as_json) if decider else None
        webhooks = self._start_webhooks(stop, once, as_json)
        if not once:
            self._stop_on_signals(stop)
        try:
            self._send_loop(sender, stop, once=once, interval=interval, min_age=min_age,
                            as_json=as_json, outbox_interval=outbox_interval)
        finally:
            stop.set()
            for thread in (deciding, webhooks):
                if thread is not None:
                    thread.join()

    def _warm_up(self, decider: bool) -> None:
        """Reach the store before the first pass, as the web workers do (their client made,
        the first connection open; the decider's streams client too), saying at each attempt
        why it cannot; tables that do not exist stop the worker with that message."""
        service = get_booking_service()
        while True:
            try:
                service.warm_up()
                break
            except StoreUnavailable as exc:
                if exc.missing_table:
                    raise CommandError(exc.message) from exc
                self.stderr.write(f"Warm-up: the store does not answer ({exc.message}); "
                                  "trying again.")
            except BookingContention as exc:
                self.stderr.write(f"Warm-up: the store is busy ({exc.message}); trying again.")
            time.sleep(WARM_UP_RETRY_SECONDS)
        if decider:
            service.store.streams_client  # made now, not at the first stream read

    def _send_loop(self, sender, stop, *, once, interval, min_age, as_json, outbox_interval):
        """The outbox every ``outbox_interval`` seconds (a confirmation's delay), the waiting
        lists' and codes' clock every ``interval``: first, so an offer it makes goes out in
        the same pass."""
        clock_due = 0.0
        while not stop.is_set():
            try:
                waiting = {}
                if time.monotonic() >= clock_due:
                    service = get_booking_service()
                    waiting = {**service.waiting_list_pass(), **service.access_code_pass()}
                    clock_due = time.monotonic() + interval
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
            stop.wait(outbox_interval)

    def _start_decider(self, sender, stop, once, as_json):
        """Decide pending streams bookings: one pass now with --once, else a thread."""
        decider = stream_decider(sender=sender)  # each decision's e-mail goes out at once

        def report(outcomes, caught_up):
            self.stdout.write(json.dumps({"decider": dict(outcomes), "caught_up": caught_up})
                              if as_json else _decided(outcomes, caught_up,
                                                       decider.decided_total))

        if once:
            try:
                outcomes, caught_up = decider.run_pass()
            except BookingError as exc:
                raise CommandError(exc.message) from exc
            if outcomes:
                report(outcomes, caught_up)
            return None
        interval = worker_settings().decider_interval
        thread = threading.Thread(target=decider.run, args=(stop,), name="stream-decider",
                                  kwargs={"interval": interval, "report": report})
        thread.start()
        return thread

    def _start_webhooks(self, stop, once, as_json):
        """Send the webhook deliveries due: one pass now with --once, else a thread."""
        webhooks = webhook_sender()

        def report(outcomes):
            line = {"webhooks": outcomes}
            self.stdout.write(json.dumps(line) if as_json else "Webhooks: " + _summary(outcomes))

        if once:
            try:
                outcomes = webhooks.run_pass()
            except BookingError as exc:
                raise CommandError(exc.message) from exc
            if outcomes:
                report(outcomes)
            return None
        thread = threading.Thread(target=webhooks.run, args=(stop,), name="webhooks",
                                  kwargs={"interval": worker_settings().webhook_interval,
                                          "report": report})
        thread.start()
        return thread

    def _stop_on_signals(self, stop):
        if threading.current_thread() is not threading.main_thread():
            return  # signals reach the main thread only (tests call the command in threads)
        for number in (signal.SIGTERM, signal.SIGINT):
            signal.signal(number, lambda *_: stop.set())


def _summary(outcomes: dict) -> str:
    if not outcomes:
        return "No e-mails owed."
    return ", ".join(f"{count} {outcome.replace('_', ' ')}" for outcome, count in
                     sorted(outcomes.items()))


def _decided(outcomes, caught_up: bool, total: int) -> str:
    confirmed, rejected = outcomes.get(CONFIRMED, 0), outcomes.get(REJECTED, 0)
    skipped = sum(outcomes.values()) - confirmed - rejected
    state = "caught up" if caught_up else "still reading"
    return (f"Decided {confirmed + rejected} ({confirmed} confirmed, {rejected} rejected, "
            f"{skipped} already decided or withdrawn); {total} since start; {state}.")
