from urllib.parse import urlsplit

from django.conf import settings
from django.core.management.base import BaseCommand, CommandError

from localdynamo.server import LocalDynamoDB, set_switch_interval


def default_address() -> tuple[str, int]:
    """Host and port of DYNAMODB_ENDPOINT_URL when it is local, else 127.0.0.1:8001."""
    parts = urlsplit(settings.DYNAMODB_ENDPOINT_URL or "")
    if parts.hostname in ("127.0.0.1", "localhost") and parts.port:
        return parts.hostname, parts.port
    return "127.0.0.1", 8001


class Command(BaseCommand):
    help = (
        "Run the embedded, linearizable DynamoDB server (moto's API, one request at a "
        "time). Several processes can share it through DYNAMODB_ENDPOINT_URL."
    )

    def add_arguments(self, parser):
        host, port = default_address()
        parser.add_argument("--host", default=host, help=f"Address to bind (default {host}).")
        parser.add_argument("--port", type=int, default=port, help=f"Port (default {port}).")
        parser.add_argument(
            "--switch-interval",
            type=float,
            default=None,
            help="Python thread switch interval in seconds (tests use 1e-5 to provoke races).",
        )

    def handle(self, *args, host, port, switch_interval, **options):
        set_switch_interval(switch_interval)
        try:
            server = LocalDynamoDB(host, port, log_requests=options["verbosity"] >= 2)
        except OSError as exc:
            raise CommandError(
                f"Cannot listen on {host}:{port} ({exc.strerror}). Is another dynamodb_local "
                "already running there? Processes can share one server: point "
                "DYNAMODB_ENDPOINT_URL at it instead of starting a second one."
            ) from exc
        self.stdout.write(f"Embedded DynamoDB listening on {server.url} (Ctrl+C to stop)")
        self.stdout.flush()
        try:
            server.serve_forever()
        except KeyboardInterrupt:
            pass
        finally:
            server.stop()
