"""manage.py torture: random bookings under faults from many processes, then a history check."""
import json

from django.core.management.base import BaseCommand, CommandError

from harness.torture import checker, report
from harness.torture.plan import TortureConfig
from harness.torture.runner import run
from harness.controls import ALL_STRATEGIES as STRATEGIES
from localdynamo.faults import FaultSpec, FaultSpecError

EXIT_ANOMALIES = 1
EXIT_USAGE = 2


class Command(BaseCommand):
    help = (
        "Torture the booking service: random bookings, cancellations and repeated requests "
        "from several processes against a fresh embedded DynamoDB that injects faults; then "
        "check the recorded history against the final state. Exit 0: no anomaly; 1: "
        "anomalies found (each printed with its history); 2: usage error."
    )

    def add_arguments(self, parser):
        defaults = TortureConfig()
        parser.add_argument("--processes", type=int, default=defaults.processes)
        parser.add_argument("--threads", type=int, default=defaults.threads,
                            help="Threads per process.")
        parser.add_argument("--ops", type=int, default=defaults.ops,
                            help="Steps in all (a double click is one step, two requests).")
        parser.add_argument("--seed", type=int, default=defaults.seed)
        parser.add_argument("--faults", default=defaults.faults,
                            help="Fault spec of the embedded server ('none' for none; seeded "
                                 f"from --seed unless it names a seed). Default: {defaults.faults}")
        parser.add_argument("--strategies", default=",".join(defaults.strategies),
                            help="One event per strategy (comma-separated).")
        parser.add_argument("--capacity", type=int, default=defaults.capacity,
                            help="Seats per event.")
        parser.add_argument("--demand", type=int, default=defaults.demand,
                            help="People per event, as a multiple of the capacity (at least 5).")
        parser.add_argument("--code-uses", type=int, default=None,
                            help="Orders each plain event's access code allows (default: half "
                                 "the capacity).")
        parser.add_argument("--no-mail-claims", action="store_true",
                            help="Control: send e-mails without the atomic counter.")
        parser.add_argument("--no-request-history", action="store_true",
                            help="Control: bookings and cancellations write no request row.")
        parser.add_argument("--no-ambiguity-checks", action="store_true",
                            help="Control: strategies do not recognise their own resent writes.")
        parser.add_argument("--careless-access-codes", action="store_true",
                            help="Control: access codes' uses checked by a read, then counted "
                                 "without a condition.")
        parser.add_argument("--unguarded-race-delay-ms", type=float, default=0.0,
                            help="Widen the unguarded control's read-to-write window.")
        parser.add_argument("--no-door", action="store_true",
                            help="Run no scans at the door beside the bookings.")
        parser.add_argument("--careless-door", action="store_true",
                            help="Control: scanners read the pass, then write.")
        parser.add_argument("--history", metavar="FILE.json",
                            help="Also save the run (every invocation, the final state) here.")
        parser.add_argument("--check-history", metavar="FILE.json",
                            help="Run nothing: check a run saved with --history again.")
        parser.add_argument("--json", action="store_true", dest="as_json", help="Print JSON.")

    def handle(self, *args, as_json, history, check_history, **options):
        if check_history:
            config, result = self._saved(check_history)
        else:
            config = self._config(options)
            result = run(config)
            if history:
                report.save_history(config, result, history)
        summary = report.summary(config, result)
        self.stdout.write(json.dumps(summary, indent=2, default=str) if as_json
                          else report.text(summary))
        if summary["anomalies"]:
            raise CommandError(f"{len(summary['anomalies'])} anomalies found.",
                               returncode=EXIT_ANOMALIES)

    def _saved(self, path: str) -> tuple[TortureConfig, dict]:
        try:
            fields, result = report.load_history(path)
        except (OSError, ValueError, KeyError) as exc:
            raise CommandError(f"Cannot read a saved run from {path}: {exc}",
                               returncode=EXIT_USAGE) from exc
        result["check"] = checker.check(result["records"], result["events"], result["final"],
                                        result["peaks"], mails=result.get("mails"),
                                        owed=result.get("owed"), door=result.get("door"))
        return TortureConfig(**fields), result

    def _config(self, options) -> TortureConfig:
        strategies = [s.strip() for s in options["strategies"].split(",") if s.strip()]
        unknown = [s for s in strategies if s not in STRATEGIES]
        if unknown or not strategies:
            raise CommandError(f"Unknown strategy {', '.join(unknown) or '(none)'}; choose from "
                               f"{', '.join(STRATEGIES)}.", returncode=EXIT_USAGE)
        for name in ("processes", "threads", "ops", "capacity"):
            if options[name] < 1:
                raise CommandError(f"--{name} must be at least 1.", returncode=EXIT_USAGE)
        too_big = [s for s in strategies if options["capacity"] > STRATEGIES[s].max_capacity]
        if too_big:
            raise CommandError(f"--capacity {options['capacity']} is more than {too_big[0]} "
                               f"supports ({STRATEGIES[too_big[0]].max_capacity}).",
                               returncode=EXIT_USAGE)
        if options["demand"] < 5:
            raise CommandError("--demand must be at least 5 (people per seat).",
                               returncode=EXIT_USAGE)
        if options["code_uses"] is not None and options["code_uses"] < 1:
            raise CommandError("--code-uses must be at least 1.", returncode=EXIT_USAGE)
        if options["unguarded_race_delay_ms"] < 0:
            raise CommandError("--unguarded-race-delay-ms cannot be negative.",
                               returncode=EXIT_USAGE)
        config = TortureConfig(
            processes=options["processes"], threads=options["threads"], ops=options["ops"],
            seed=options["seed"], faults=options["faults"], strategies=strategies,
            capacity=options["capacity"], demand=options["demand"],
            request_history=not options["no_request_history"],
            mail_claims=not options["no_mail_claims"],
            ambiguity_checks=not options["no_ambiguity_checks"],
            careless_access_codes=options["careless_access_codes"],
            code_uses_given=options["code_uses"],
            unguarded_race_delay_ms=options["unguarded_race_delay_ms"],
            door=not options["no_door"], careless_door=options["careless_door"])
        try:
            FaultSpec.parse(config.fault_spec())
        except FaultSpecError as exc:
            raise CommandError(f"Bad --faults {options['faults']!r}: {exc}",
                               returncode=EXIT_USAGE) from exc
        return config
