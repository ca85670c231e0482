import os
import signal
import sys
from pathlib import Path
from urllib.parse import urlsplit

from django.core.management.base import BaseCommand, CommandError

from booking.wiring import client_config, project_dir
from localdynamo import distribution, jvm, launch
from localdynamo.capacity import CapacityModel, CapacitySpec
from localdynamo.faults import FaultInjector, FaultSpec
from localdynamo.proxy import FaultProxy


def default_address() -> tuple[str, int]:
    """Host and port of DYNAMODB_ENDPOINT_URL when it is local, else 127.0.0.1:8001."""
    parts = urlsplit(client_config().endpoint_url or "")
    if parts.hostname in ("127.0.0.1", "localhost") and parts.port:
        return parts.hostname, parts.port
    return "127.0.0.1", 8001


def default_data_dir() -> str:
    """LOCAL_DYNAMODB_DATA_DIR when set (empty means in memory), else var/dynamodb.

    A relative path is taken from the project directory, wherever the command runs.
    """
    value = os.environ.get("LOCAL_DYNAMODB_DATA_DIR", "var/dynamodb")
    return str(project_dir() / value) if value else ""


def proxy_spec(text: str | None, variable: str, parse, label: str):
    """The option when given, else the environment ``variable``; None when both are empty.

    Any fault or capacity spec starts the proxy, one of all-zero fault chances too
    (``seed=1``): its faults can then be scripted over HTTP.
    """
    text = os.environ.get(variable, "") if text is None else text
    if not text.strip():
        return None
    try:
        return parse(text)
    except ValueError as exc:  # FaultSpecError and CapacitySpecError are ValueErrors
        raise CommandError(f"Bad {label} spec {text!r}: {exc}") from exc


def stop_on_sigterm(signum, frame):
    raise KeyboardInterrupt


class Command(BaseCommand):
    help = (
        f"Run AWS's DynamoDB Local {distribution.VERSION} (fetched once per user on first "
        "use; needs Java 17+), shared by every client. Data is kept in --data-dir (default "
        "var/dynamodb) unless --in-memory. With --faults, a fault-injecting proxy listens on "
        "the port instead and DynamoDB Local runs behind it."
    )

    def add_arguments(self, parser):
        host, port = default_address()
        parser.add_argument("--host", default=host, help=f"Address to listen on (default {host}).")
        parser.add_argument("--port", type=int, default=port,
                            help=f"Port (default {port}; 0 picks a free one).")
        storage = parser.add_mutually_exclusive_group()
        storage.add_argument(
            "--data-dir", default=None,
            help="Directory that keeps the data across restarts (default: "
                 "$LOCAL_DYNAMODB_DATA_DIR, else var/dynamodb; empty means in memory).",
        )
        storage.add_argument("--in-memory", action="store_true",
                             help="Keep nothing: every start is empty (tests use this).")
        parser.add_argument(
            "--faults", default=None,
            help="Inject faults into data-plane requests, e.g. 'throttle=0.05,lost_response=0.02,"
                 "error500=0.01,delay_ms=0-20,seed=7' (default $LOCAL_DYNAMODB_FAULTS; off).",
        )
        parser.add_argument(
            "--capacity", default=None,
            help="Enforce DynamoDB's per-partition limits, e.g. 'partition_wcu=1000,"
                 "partition_rcu=3000,scale=0.01,burst_s=0[,unit=key]' (default "
                 "$LOCAL_DYNAMODB_CAPACITY; off).",
        )

    def handle(self, *args, host, port, data_dir, in_memory, faults, capacity, **options):
        spec = proxy_spec(faults, "LOCAL_DYNAMODB_FAULTS", FaultSpec.parse, "fault")
        limits = proxy_spec(capacity, "LOCAL_DYNAMODB_CAPACITY", CapacitySpec.parse,
                            "capacity")
        data_dir = "" if in_memory else default_data_dir() if data_dir is None else data_dir
        try:
            release = distribution.locate(log=self.say)
            java = jvm.find_java()
        except (distribution.DistributionError, jvm.JavaMissing) as exc:
            raise CommandError(str(exc)) from exc
        port = self.listenable(host, port)
        lock = self.lock(Path(data_dir).resolve()) if data_dir else None
        if spec is not None or limits is not None:
            self.serve_with_faults(java, release, host, port, data_dir, lock,
                                   spec or FaultSpec(), limits)
            return
        self.describe(host, port, data_dir)
        argv = jvm.command(java, release, host=host, port=port,
                           data_dir=Path(data_dir).resolve() if data_dir else None, log=self.say)
        self.stdout.flush()
        os.execv(argv[0], argv)  # the store's pid is ours: kill -9 of it is a crash of the store

    def say(self, text: str) -> None:
        self.stdout.write(text)
        self.stdout.flush()

    def listenable(self, host: str, port: int) -> int:
        """The port to use (a free one for 0), checked to be free on ``host``."""
        try:
            if port == 0:
                return launch.free_port(host)
            launch.check_port_free(host, port)
            return port
        except OSError as exc:
            raise CommandError(
                f"Cannot listen on {host}:{port} ({exc.strerror}). Is another dynamodb_local "
                "already running there? Processes can share one store: point "
                "DYNAMODB_ENDPOINT_URL at it instead of starting a second one."
            ) from exc

    def lock(self, directory: Path) -> int:
        try:
            descriptor = launch.lock_data_dir(directory)
        except launch.DataDirInUse as exc:
            raise CommandError(str(exc)) from exc
        except OSError as exc:
            raise CommandError(f"Cannot use the data directory {directory}: {exc}") from exc
        if launch.earlier_format_files(directory):
            self.stderr.write(
                f"{directory} also holds files of the earlier embedded server (wal-*.log, "
                "snapshot-*.pickle), which DynamoDB Local does not read; they are left alone.")
        return descriptor

    def describe(self, host, port, data_dir, behind=None) -> None:
        where = (f"data in {Path(data_dir).resolve()}" if data_dir
                 else "data in memory only (lost when it stops)")
        via = f", behind the fault proxy (store on port {behind})" if behind else ""
        self.say(f"DynamoDB Local {distribution.VERSION}, {where}{via}: "
                 f"listening on http://{host}:{port} (Ctrl+C to stop)")

    def serve_with_faults(self, java, release, host, port, data_dir, lock, spec, limits) -> None:
        """DynamoDB Local as a child on a free port, the fault proxy on ``port``."""
        inner = launch.free_port("127.0.0.1")
        argv = jvm.command(java, release, host="127.0.0.1", port=inner,
                           data_dir=Path(data_dir).resolve() if data_dir else None, log=self.say)
        child = launch.spawn(argv, lock)
        try:
            launch.wait_until_listening("127.0.0.1", inner, child)
            proxy = FaultProxy(f"http://127.0.0.1:{inner}", FaultInjector(spec), host=host,
                               port=port, capacity=limits and CapacityModel(limits)).start()
        except BaseException as exc:
            child.kill()
            raise CommandError(f"DynamoDB Local did not start: {exc}") from exc
        signal.signal(signal.SIGTERM, stop_on_sigterm)  # so the counts get reported
        self.say(f"Fault injection on: {spec}")
        if limits:
            self.say(f"Capacity limits on: {limits}")
        self.describe(host, port, data_dir, behind=inner)
        try:
            child.wait()
            self.stderr.write(f"DynamoDB Local exited with status {child.returncode}.")
            sys.exit(1)
        except KeyboardInterrupt:
            pass
        finally:
            proxy.stop()
            if child.poll() is None:
                child.terminate()
                child.wait(timeout=30)
            self.say(f"Faults injected: {proxy.injector.summary()}")
