"""manage.py bench_booking: throughput, requests and capacity units per booking, by strategy."""
import argparse
import json

from django.core.management.base import BaseCommand, CommandError, DjangoHelpFormatter

from harness.bench import alone, door, drop, report
from harness.bench.runner import BenchConfig, run
from booking.dynamo.provision import existing_table_names
from booking.dynamo.access import StoreError
from booking.errors import BookingError
from booking.management.output import progress
from booking.strategies import GUARDED
from booking.wiring import client_config, get_store
from harness.controls import ALL_STRATEGIES, BASELINES

STRATEGIES = {**ALL_STRATEGIES, **BASELINES}


def int_list(value: str) -> list[int]:
    try:
        numbers = [int(part) for part in value.split(",") if part.strip()]
    except ValueError:
        raise CommandError(f"Expected comma-separated whole numbers, not {value!r}.", returncode=2)
    if not numbers or min(numbers) < 1:
        raise CommandError(f"Expected positive whole numbers, not {value!r}.", returncode=2)
    return numbers


QUICK = {"clients": "1,4", "capacity": 10, "attempts": 20, "cost_capacities": "20"}
COLUMNS_HELP = """\
columns of the hot-event table (one row per strategy and client count):
  BOOKED          attempts that got a seat (at most the capacity)
  FULL            attempts refused because the event was full: expected once it fills
  BOOK/S          successful bookings per second
  xUNGUARDED      BOOK/S divided by the unguarded control's, measured in the same run
  REQ/BOOK        DynamoDB requests per successful booking
  REQ/REJECT      DynamoDB requests per refused attempt
  CCF/BOOK        conditional-check failures (lost races) per booking
  RETRY/BOOK      strategy retries after a conflict, per booking
  P50ms, P99ms    booking latency, median and 99th percentile, in milliseconds
  OVERBOOKED      confirmed beyond capacity: 0 for every guarded strategy
  WCU/BOOK        write capacity units per booking
  MAIL_REQ/BOOK   DynamoDB requests to send each confirmation e-mail exactly once
  UNKNOWN         first answers lost or unknown (resolved before answering)
  UNRESOLVED      unknown outcomes never resolved: should be 0
columns of the streams table (--strategies ...,streams; accepted now, decided later):
  ACCEPTED, ACCEPT/S  provisional bookings accepted, and attempts answered per second
  xLOCK_TABLE         ACCEPT/S over lock_table's answered attempts per second, same run
  REQ/ACCEPT          DynamoDB requests per accepted booking (its one write)
  CONFIRMED, REJECTED, PENDING   decisions made, and requests left undecided (0)
  DECIDE_P50ms, DECIDE_P99ms     time from a booking's arrival to its decision
  DECISIONS/S, REQ/DECISION      decider throughput; its DynamoDB + Streams requests
  OVERBOOKED, TWICE, CHANGED     confirmed beyond capacity, registrations decided twice,
                                 decisions the stored status contradicts: all 0
  KILLED_MID_RUN, KILLED_AT_s    the decider process was SIGKILLed while clients still
                                 booked (True), that many seconds into the booking
columns of the cost-by-capacity table (one client):
  CREATE_REQ, CREATE_WCU, CREATE_S   requests, write units and seconds to create the event
  BOOK_REQ, BOOK_ms                  requests and milliseconds for one booking
  BOOK_WCU_MEAN, BOOK_WCU_LAST_SEAT  write units per booking, mean over filling the event
                                     and for the last seat
"""


class HelpFormatter(DjangoHelpFormatter, argparse.RawDescriptionHelpFormatter):
    """Django's option order, with the column glossary kept as written."""


class Command(BaseCommand):
    help = (
        "Benchmark the booking strategies against the configured DynamoDB endpoint (the "
        "embedded server by default): concurrent clients book distinct people into a hot "
        "event; then creation and booking cost by capacity. Uses temporary tables."
    )

    def create_parser(self, prog_name, subcommand, **kwargs):
        return super().create_parser(prog_name, subcommand, epilog=COLUMNS_HELP,
                                     formatter_class=HelpFormatter, **kwargs)

    def add_arguments(self, parser):
        parser.add_argument("--quick", action="store_true",
                            help="A run of seconds: clients 1,4, capacity 10, 20 attempts, "
                                 "cost at capacity 20 (overrides those options).")
        parser.add_argument("--strategies", default=None,
                            help="Comma-separated (default: every guarded one, streams "
                                 "included, and unguarded; with --drop: aggregate, "
                                 "lock_table, slots, shards).")
        parser.add_argument("--clients", default="1,8,64", help="Concurrent clients, e.g. 1,8,64.")
        parser.add_argument("--capacity", type=int, default=200, help="Seats of the hot event.")
        parser.add_argument("--attempts", type=int, default=400,
                            help="Booking attempts per strategy and client count.")
        parser.add_argument("--processes", type=int, default=1,
                            help="Spread the clients' threads over this many processes.")
        parser.add_argument("--cost-capacities", default="50,1000,10000",
                            help="Capacities for the cost-by-capacity table ('none' skips it).")
        parser.add_argument("--json", action="store_true", dest="as_json", help="Print JSON.")
        parser.add_argument("--chart", metavar="FILE.png", help="Also write a PNG chart.")
        parser.add_argument(
            "--drop", metavar="PEOPLE:SEATS:SECONDS", nargs="?", const="100000:10000:60",
            help="Instead: a ticket drop (default 100000:10000:60) per strategy, open-loop "
                 "arrivals of careful clients, on a DynamoDB Local of its own behind the "
                 "capacity proxy (DynamoDB's per-partition limits, scaled by --scale).")
        parser.add_argument("--scale", type=float, default=0.02,
                            help="--drop: people, seats and partition capacity scaled together "
                                 "(default 0.02).")
        parser.add_argument("--patience", type=float, default=30.0,
                            help="--drop: seconds a person keeps asking (default 30).")
        parser.add_argument("--threads", type=int, default=64,
                            help="--drop: people in flight at once at most (default 64).")
        parser.add_argument("--probes", type=int, default=10,
                            help="--drop: people booking one at a time before the drop, and "
                                 "refused one at a time after it, for the units each costs "
                                 "(default 10).")
        parser.add_argument("--warmup", type=int, default=300,
                            help="--drop: people booking on an event of their own first, so "
                                 "the store runs warm (default 300; 0: none).")
        parser.add_argument("--no-expected-rate", action="store_true",
                            help="--drop: the event states no expected arrivals a second (by "
                                 "default it states the drop's, PEOPLE / SECONDS unscaled, "
                                 "and shards splits its seats for them).")
        parser.add_argument(
            "--via", choices=("api", "form"), default=None,
            help="--drop through the door: make serve's stack (nginx, gunicorn, the worker) "
                 "on that store, each person a new client from its own loopback address, "
                 "by the JSON API (Idempotency-Key) or the signup form (token, 202 re-check).")
        parser.add_argument(
            "--alone", metavar="PEOPLE", type=int, nargs="?", const=100,
            help="Instead: PEOPLE (default 100) one at a time through make serve's stack, "
                 "each booking one seat, then each four, then each refused: CPU ms a person "
                 "by process (web tier, store and proxy, worker) and the confirmation's "
                 "delay (harness/bench/alone.py). One strategy (--strategies, default "
                 "shards), --via api (default) or form (the one-seat bookings).")
        parser.add_argument(
            "--client", choices=tuple(door.CLIENTS), default="polite",
            help="--via: the people's manners. polite (default): waits a request out and "
                 "asks again after Retry-After; impatient: asks again within about a second "
                 "whatever Retry-After says, and gives up on a request after 10 s to ask "
                 "again with the same Idempotency-Key (the same form token).")
        parser.add_argument(
            "--cold", action="store_true",
            help="--via: start the stack just before the drop, with nothing warmed by the "
                 "harness (no --warmup people, the people booked alone measured after the "
                 "drop): the first seconds as after a deploy.")
        parser.add_argument("--workers", type=int, default=door.DEFAULT_WORKERS,
                            help="--via: gunicorn worker processes (default: make serve's, "
                                 f"{door.DEFAULT_WORKERS} here).")

    def handle(self, *args, as_json, chart, **options):
        if options.get("alone") is not None:
            self._alone(options, as_json)
            return
        if options.get("drop"):
            self._drop(options, as_json, chart)
            return
        config = self._config(options)
        self._require_endpoint()
        cases = (len(config.clients) + len(config.cost_capacities)) * len(config.strategies)
        bar = progress(range(cases), self.stderr, total=cases, unit="case")
        try:
            results = run(config, step=lambda: bar.update(1))
        except BookingError as exc:
            raise CommandError(exc.message) from exc
        finally:
            bar.close()
        results.update(config=vars(config), machine=report.machine(),
                       endpoint=client_config().endpoint_url or "AWS")
        if chart:
            report.chart(results, chart)
        self.stdout.write(json.dumps(results, indent=2) if as_json else report.text(results))

    def _drop(self, options, as_json, chart) -> None:
        strategies = options["strategies"]
        chosen = (tuple(s.strip() for s in strategies.split(",") if s.strip())
                  if strategies else drop.DropConfig.strategies)
        via = options.get("via")
        # streams decides in the worker's decider: only the door's stack runs one.
        unknown = [s for s in chosen if s not in STRATEGIES or (s == "streams" and not via)]
        if unknown:
            raise CommandError(f"Cannot drop on {', '.join(unknown)}"
                               f"{' without --via' if 'streams' in unknown else ''}.",
                               returncode=2)
        try:
            config = drop.DropConfig.parse(options["drop"], scale=options["scale"],
                                           strategies=chosen, patience=options["patience"],
                                           threads=options["threads"],
                                           probes=options["probes"],
                                           state_rate=not options["no_expected_rate"],
                                           warmup=options["warmup"])
        except ValueError as exc:
            raise CommandError(f"Bad --drop {options['drop']!r}: {exc}", returncode=2) from exc
        bar = progress(range(len(chosen)), self.stderr, total=len(chosen), unit="strategy")
        if not via and (options["client"] != "polite" or options["cold"]):
            raise CommandError("--client and --cold need --via.", returncode=2)
        if via and options["workers"] < 1:
            raise CommandError("--workers must be at least 1.", returncode=2)
        try:
            if via:
                results = door.run_door(config, via, workers=options["workers"],
                                        client=options["client"], cold=options["cold"],
                                        step=lambda: bar.update(1))
            else:
                results = drop.run_drop(config, step=lambda: bar.update(1))
        finally:
            bar.close()
        results["machine"] = report.machine()
        if chart:
            drop.chart(results, chart)
        text = door.text if via else drop.text
        self.stdout.write(json.dumps(results, indent=2) if as_json else text(results))

    def _alone(self, options, as_json) -> None:
        strategy = (options["strategies"] or "shards").split(",")[0].strip()
        if strategy not in STRATEGIES or options["alone"] < 2 or options["workers"] < 1:
            raise CommandError("--alone needs 2 people or more, one known strategy and "
                               "--workers 1 or more.", returncode=2)
        result = alone.run(options["alone"], strategy, options.get("via") or "api",
                           options["workers"], door.DEFAULT_THREADS)
        result["machine"] = report.machine()
        self.stdout.write(json.dumps(result, indent=2) if as_json else alone.text(result))

    def _config(self, options) -> BenchConfig:
        if options.get("quick"):
            options = {**options, **QUICK}
        options["strategies"] = options["strategies"] or ",".join((*GUARDED, "unguarded"))
        strategies = [s.strip() for s in options["strategies"].split(",") if s.strip()]
        unknown = [s for s in strategies if s not in STRATEGIES]
        if unknown or not strategies:
            raise CommandError(f"Unknown strategy {', '.join(unknown) or '(none)'}; choose from "
                               f"{', '.join(STRATEGIES)}.", returncode=2)
        for name in ("capacity", "attempts", "processes"):
            if options[name] < 1:
                raise CommandError(f"--{name} must be at least 1.", returncode=2)
        costs = options["cost_capacities"]
        return BenchConfig(
            strategies=strategies, clients=int_list(options["clients"]),
            capacity=options["capacity"], attempts=options["attempts"],
            processes=options["processes"],
            cost_capacities=[] if costs.strip().lower() == "none" else int_list(costs))

    def _require_endpoint(self) -> None:
        try:
            existing_table_names(get_store())
        except (BookingError, StoreError):
            endpoint = client_config().endpoint_url or "AWS"
            raise CommandError(
                f"Cannot reach DynamoDB at {endpoint}. Start the embedded server with "
                "`make dynamodb` (or `make run`), or set DYNAMODB_ENDPOINT_URL.") from None
