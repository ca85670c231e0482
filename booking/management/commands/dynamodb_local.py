import os
import signal
import time
from pathlib import Path
from urllib.parse import urlsplit

from django.conf import settings
from django.core.management.base import BaseCommand, CommandError

from localdynamo.faults import FaultSpec, FaultSpecError
from localdynamo.journal import DamagedLog
from localdynamo.server import LocalDynamoDB, set_switch_interval
from localdynamo.snapshot import DamagedSnapshot
from localdynamo.store import DEFAULT_SNAPSHOT_EVERY, DataDirInUse
from localdynamo.ttl import DEFAULT_DELAY_SECONDS


def default_address() -> tuple[str, int]:
    """Host and port of DYNAMODB_ENDPOINT_URL when it is local, else 127.0.0.1:8001."""
    parts = urlsplit(settings.DYNAMODB_ENDPOINT_URL or "")
    if parts.hostname in ("127.0.0.1", "localhost") and parts.port:
        return parts.hostname, parts.port
    return "127.0.0.1", 8001


def default_data_dir() -> str:
    """LOCAL_DYNAMODB_DATA_DIR when set (empty means in memory), else var/dynamodb.

    A relative path is taken from the project directory, wherever the command runs.
    """
    value = os.environ.get("LOCAL_DYNAMODB_DATA_DIR", "var/dynamodb")
    return str(Path(settings.BASE_DIR) / value) if value else ""


def default_ttl_delay() -> float:
    value = os.environ.get("LOCAL_DYNAMODB_TTL_DELAY", "")
    try:
        return float(value) if value else DEFAULT_DELAY_SECONDS
    except ValueError:
        raise CommandError(f"LOCAL_DYNAMODB_TTL_DELAY must be a number of seconds, not {value!r}.")


def fault_spec(text: str | None) -> FaultSpec:
    """--faults when given, else LOCAL_DYNAMODB_FAULTS (empty: no faults)."""
    text = os.environ.get("LOCAL_DYNAMODB_FAULTS", "") if text is None else text
    try:
        return FaultSpec.parse(text)
    except FaultSpecError as exc:
        raise CommandError(f"Bad fault spec {text!r}: {exc}") from exc


def stop_on_sigterm(signum, frame):
    raise KeyboardInterrupt


class Command(BaseCommand):
    help = (
        "Run the embedded, linearizable DynamoDB server (moto's API, one request at a "
        "time). Data is kept in --data-dir (default var/dynamodb) unless --in-memory. "
        "Several processes can share it through DYNAMODB_ENDPOINT_URL."
    )

    def add_arguments(self, parser):
        host, port = default_address()
        parser.add_argument("--host", default=host, help=f"Address to bind (default {host}).")
        parser.add_argument("--port", type=int, default=port, help=f"Port (default {port}).")
        storage = parser.add_mutually_exclusive_group()
        storage.add_argument(
            "--data-dir", default=None,
            help="Directory that keeps the data across restarts (default: "
                 "$LOCAL_DYNAMODB_DATA_DIR, else var/dynamodb; empty means in memory).",
        )
        storage.add_argument("--in-memory", action="store_true",
                             help="Keep nothing: every start is empty (tests use this).")
        parser.add_argument(
            "--ttl-sweep-delay", type=float, default=None,
            help="Delete items whose TTL passed this many seconds ago (default "
                 f"$LOCAL_DYNAMODB_TTL_DELAY, else {DEFAULT_DELAY_SECONDS:g}).",
        )
        parser.add_argument(
            "--snapshot-every", type=float, default=DEFAULT_SNAPSHOT_EVERY,
            help="Snapshot in the background once the log holds this many seconds of "
                 f"replay work; bounds restart time (default {DEFAULT_SNAPSHOT_EVERY:g}).",
        )
        parser.add_argument(
            "--faults", default=None,
            help="Inject faults into data-plane requests, e.g. 'throttle=0.05,lost_response=0.02,"
                 "error500=0.01,delay_ms=0-20,seed=7' (default $LOCAL_DYNAMODB_FAULTS; off).",
        )
        parser.add_argument(
            "--switch-interval", type=float, default=None,
            help="Python thread switch interval in seconds (tests use 1e-5 to provoke races).",
        )

    def handle(self, *args, host, port, switch_interval, **options):
        set_switch_interval(switch_interval)
        data_dir = options["data_dir"]
        if options["in_memory"]:
            data_dir = ""
        elif data_dir is None:
            data_dir = default_data_dir()
        ttl_delay = options["ttl_sweep_delay"]
        faults = fault_spec(options["faults"])
        started = time.perf_counter()
        server = self.open_server(host, port, data_dir or None, options["verbosity"],
                                  default_ttl_delay() if ttl_delay is None else ttl_delay,
                                  options["snapshot_every"], faults)
        self.report_storage(server, data_dir, time.perf_counter() - started)
        if server.app.faults:
            self.stdout.write(f"Fault injection on: {faults}")
            signal.signal(signal.SIGTERM, stop_on_sigterm)  # so the counts get reported
        self.stdout.write(f"Embedded DynamoDB listening on {server.url} (Ctrl+C to stop)")
        self.stdout.flush()
        try:
            server.serve_forever()
        except KeyboardInterrupt:
            pass
        finally:
            server.stop()
            if server.app.faults:
                self.stdout.write(f"Faults injected: {server.app.faults.summary()}")
                self.stdout.flush()

    def open_server(self, host, port, data_dir, verbosity, ttl_delay, snapshot_every,
                    faults=None):
        try:
            return LocalDynamoDB(host, port, log_requests=verbosity >= 2, data_dir=data_dir,
                                 ttl_delay=ttl_delay, snapshot_every=snapshot_every,
                                 faults=faults)
        except DataDirInUse as exc:
            raise CommandError(str(exc)) from exc
        except (DamagedLog, DamagedSnapshot) as exc:
            raise CommandError(f"Cannot recover the data in {data_dir}: {exc}") from exc
        except OSError as exc:
            if exc.filename:
                raise CommandError(f"Cannot use the data directory {data_dir}: {exc}") from exc
            raise CommandError(
                f"Cannot listen on {host}:{port} ({exc.strerror}). Is another dynamodb_local "
                "already running there? Processes can share one server: point "
                "DYNAMODB_ENDPOINT_URL at it instead of starting a second one."
            ) from exc

    def report_storage(self, server, data_dir, seconds):
        recovery = server.recovery
        if recovery is None:
            self.stdout.write("Data is kept in memory only (lost when the server stops).")
            return
        self.stdout.write(
            f"Data directory {Path(data_dir).resolve()}: recovered in {seconds:.2f} s "
            f"(snapshot {recovery.snapshot_seq} loaded in {recovery.load_seconds:.2f} s, "
            f"{recovery.replayed} log records replayed in {recovery.replay_seconds:.2f} s"
            + (f", {recovery.failed} of them failed" if recovery.failed else "")
            + (f", torn last record of {recovery.torn_bytes} bytes dropped"
               if recovery.torn_bytes else "")
            + ")."
        )
