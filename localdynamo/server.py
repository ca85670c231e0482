"""A linearizable DynamoDB endpoint on 127.0.0.1, built on moto's server app.

moto's own server handles requests on threads with no lock around a conditional check
and the write that depends on it, so two concurrent ``attribute_not_exists`` puts on one
key can both succeed. Here every request runs alone: the body is read first (so a slow
client cannot stall the others), then the request is applied and its response built
while holding one lock. Each request is therefore atomic, and the order in which they
take the lock is a valid linear order. Several processes can share one running server.

See docs/local-dynamodb.md for where this server differs from DynamoDB.
"""
import io
import logging
import sys
import threading

from moto.moto_server.werkzeug_app import (
    DomainDispatcherApplication,
    MotoRequestHandler,
    create_backend_app,
)
from werkzeug.serving import make_server

logger = logging.getLogger(__name__)


class SerializedApp:
    """WSGI middleware that lets one request at a time into the wrapped app."""

    def __init__(self, app):
        self.app = app
        self.lock = threading.Lock()
        self.requests_served = 0

    def __call__(self, environ, start_response):
        length = int(environ.get("CONTENT_LENGTH") or 0)
        body = environ["wsgi.input"].read(length) if length else b""
        environ["wsgi.input"] = io.BytesIO(body)
        response = {}

        def capture(status, headers, exc_info=None):
            response["status"], response["headers"] = status, headers
            return lambda data: None

        with self.lock:
            chunks = self.app(environ, capture)
            try:
                payload = b"".join(chunks)
            finally:
                getattr(chunks, "close", lambda: None)()
            self.requests_served += 1
        start_response(response["status"], response["headers"])
        return [payload]


def build_app() -> SerializedApp:
    return SerializedApp(DomainDispatcherApplication(create_backend_app))


class QuietRequestHandler(MotoRequestHandler):
    """Log errors only: a line per request would slow every booking down."""

    def log_request(self, code="-", size="-"):
        pass


class LocalDynamoDB:
    """A running server: ``start()`` in a thread or ``serve_forever()`` in the foreground."""

    def __init__(self, host: str = "127.0.0.1", port: int = 8001, *, log_requests=False):
        self.app = build_app()
        handler = MotoRequestHandler if log_requests else QuietRequestHandler
        self.server = make_server(host, port, self.app, threaded=True, request_handler=handler)
        self.host, self.port = host, self.server.server_port
        self._thread = None

    @property
    def url(self) -> str:
        return f"http://{self.host}:{self.port}"

    def serve_forever(self) -> None:
        self.server.serve_forever()

    def start(self) -> "LocalDynamoDB":
        self._thread = threading.Thread(target=self.serve_forever, daemon=True)
        self._thread.start()
        return self

    def stop(self) -> None:
        self.server.shutdown()
        self.server.server_close()
        if self._thread:
            self._thread.join(timeout=5)


def set_switch_interval(seconds: float | None) -> None:
    """Make thread switches frequent (tests use 1e-5 to provoke races)."""
    if seconds:
        sys.setswitchinterval(seconds)
