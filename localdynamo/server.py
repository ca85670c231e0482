"""A linearizable, durable DynamoDB endpoint on 127.0.0.1, built on moto's server app.

moto's own server handles requests on threads with no lock around a conditional check
and the write that depends on it, so two concurrent ``attribute_not_exists`` puts on one
key can both succeed. Here every request runs alone: the body is read first (so a slow
client cannot stall the others), then the request is applied, logged and its response
built while holding one lock. Each request is therefore atomic, and the order in which
they take the lock is a valid linear order. Several processes can share one running server.

With a data directory, a mutating request that succeeded is appended to the write-ahead
log and fsynced before its response is sent (store.py). TransactWriteItems tokens
(tokens.py) and TTL deletion (ttl.py) are added on top of moto.

See docs/local-dynamodb.md for where this server differs from DynamoDB.
"""
import io
import logging
import os
import socket
import sys
import threading
import time
import urllib.parse

from moto.moto_server.werkzeug_app import (
    DomainDispatcherApplication,
    MotoRequestHandler,
    create_backend_app,
)
from werkzeug.serving import make_server, select_address_family

from . import faults as fault_injection, queries, transactions
from .store import DurableStore, Recovery
from .tokens import TokenTable
from .ttl import DEFAULT_DELAY_SECONDS, TtlSweeper, expired_deletes
from .wire import (
    Call, Response, call_from_environ, environ_for, error_response, json_response, run_wsgi,
)

logger = logging.getLogger(__name__)

ADMIN_PREFIX = "/_localdynamo/"
FAIL_STOP_EXIT_CODE = 75
CLOSED = error_response("ServiceUnavailable", "The server is shutting down.",
                        "503 Service Unavailable")


class SerializedApp:
    """WSGI middleware that lets one request at a time into moto, and logs the writes."""

    def __init__(self, app, *, store: DurableStore | None = None, tokens: TokenTable | None = None,
                 ttl_delay: float = DEFAULT_DELAY_SECONDS,
                 faults: fault_injection.FaultInjector | None = None):
        self.app = app
        self.faults = faults
        self.store = store
        self.tokens = tokens or TokenTable()
        self.ttl_delay = ttl_delay
        self.lock = threading.Lock()
        self.requests_served = 0
        self.closed = False  # set under the lock once the data directory is released

    def __call__(self, environ, start_response):
        length = int(environ.get("CONTENT_LENGTH") or 0)
        body = environ["wsgi.input"].read(length) if length else b""
        environ["wsgi.input"] = io.BytesIO(body)
        fault = self.faults.draw(environ) if self.faults else None
        if environ.get("PATH_INFO", "").startswith(ADMIN_PREFIX):
            response = self._admin(environ.get("PATH_INFO")[len(ADMIN_PREFIX):], environ)
        elif fault in (fault_injection.THROTTLE, fault_injection.ERROR500):
            response = fault_injection.refusal(fault)
        else:
            with self.lock:
                call = call_from_environ(environ, body, time.time())
                response = CLOSED if self.closed else self._execute(call, environ)
                self.requests_served += 1
        if fault == fault_injection.LOST_RESPONSE:
            fault_injection.drop_connection(environ)  # applied and logged, never answered
        start_response(response.status, response.headers)
        return [response.payload]

    def _execute(self, call: Call | None, environ) -> Response:
        """Apply one request (lock held); log it first if it changed the store."""
        if call is not None:
            repeated = self.tokens.answer(call)
            if repeated is not None:
                return repeated
        started = time.perf_counter()
        response = run_wsgi(self.app, environ)
        if call is not None and call.mutating and response.ok:
            if self.store is not None:
                self._log(call, time.perf_counter() - started)
            self.tokens.remember(call, response.payload)
        return response

    def _log(self, call: Call, cost: float) -> None:
        try:
            self.store.record(call, cost)
        except OSError as exc:
            # The change is applied in memory but not on disk: answering would acknowledge
            # a write a crash can lose. Stop, so that memory falls back to what is durable.
            logger.critical("Cannot write the log (%s); stopping the server.", exc)
            os._exit(FAIL_STOP_EXIT_CODE)

    def replay(self, call: Call) -> tuple[bool, float]:
        """Apply a logged call again during recovery; return (succeeded, seconds taken)."""
        started = time.perf_counter()
        response = run_wsgi(self.app, environ_for(call))
        if response.ok:
            self.tokens.remember(call, response.payload)
        else:
            logger.warning("Replaying record %d (%s) failed this time: %s", call.seq,
                           call.operation, response.payload[:300])
        return response.ok, time.perf_counter() - started

    def recover(self) -> Recovery | None:
        return self.store.recover(self.replay) if self.store else None

    def sweep_ttl(self, now: float) -> int:
        """Delete the items whose TTL passed more than ``ttl_delay`` ago; return how many."""
        with self.lock:
            deleted = 0
            for call in expired_deletes(now, self.ttl_delay):
                deleted += self._execute(call, environ_for(call)).ok
            return deleted

    def snapshot(self) -> int | None:
        """Write a snapshot of the current state and wait for it; return its sequence."""
        if self.store is None:
            return None
        while True:
            with self.lock:
                done, seq = self.store.start_snapshot(), self.store.seq
            if done is not None:
                done.wait()
                return seq
            self.store.wait_for_snapshot()

    def _admin(self, command: str, environ) -> Response:
        """Test hooks: POST ttl-sweep, snapshot and faults/next; GET faults (counts by kind)."""
        if command == "faults":
            return json_response(self.faults.snapshot() if self.faults else {})
        if command == "faults/next" and environ.get("REQUEST_METHOD") == "POST":
            return self._script_faults(environ.get("QUERY_STRING", ""))
        if command == "ttl-sweep":
            return json_response({"deleted": self.sweep_ttl(time.time())})
        if command == "snapshot":
            return json_response({"seq": self.snapshot()})
        return json_response({"message": f"unknown command {command!r}"}, "404 Not Found")

    def _script_faults(self, query: str) -> Response:
        """``?kind=lost_response&count=2[&skip=1][&only_mutating=1]``: force the next faults."""
        fields = dict(urllib.parse.parse_qsl(query))
        injector = self.faults or fault_injection.FaultInjector()  # all-zero random spec
        try:
            count = int(fields.get("count", 1))
            injector.script(fields.get("kind", ""), count, skip=int(fields.get("skip", 0)),
                            only_mutating=fields.get("only_mutating") in ("1", "true"))
        except ValueError as exc:  # FaultSpecError is a ValueError, as is a bad number
            return json_response({"message": str(exc)}, "400 Bad Request")
        self.faults = injector  # a server started without --faults gets one now
        return json_response({"scripted": fields["kind"], "count": count})


def build_app(*, store=None, ttl_delay=DEFAULT_DELAY_SECONDS, faults=None) -> SerializedApp:
    transactions.install()
    queries.install()
    tokens = store.tokens if store else TokenTable()
    return SerializedApp(DomainDispatcherApplication(create_backend_app), store=store,
                         tokens=tokens, ttl_delay=ttl_delay, faults=faults)


class QuietRequestHandler(MotoRequestHandler):
    """Log errors only: a line per request would slow every booking down."""

    def log_request(self, code="-", size="-"):
        pass


def listen(host: str, port: int, app, handler):
    """Bind first, so that a busy port raises OSError (werkzeug would call sys.exit)."""
    family = select_address_family(host, port)
    with socket.create_server((host, port), family=family, backlog=128) as listener:
        return make_server(host, port, app, threaded=True, request_handler=handler,
                           fd=listener.fileno())


class LocalDynamoDB:
    """A running server: ``start()`` in a thread or ``serve_forever()`` in the foreground.

    With ``data_dir`` the directory is locked and its data recovered in the constructor
    (``recovery`` says what was found); without it everything lives in memory only.
    """

    def __init__(self, host: str = "127.0.0.1", port: int = 8001, *, log_requests=False,
                 data_dir=None, ttl_delay: float = DEFAULT_DELAY_SECONDS,
                 snapshot_every: float | None = None,
                 faults: fault_injection.FaultSpec | fault_injection.FaultInjector | None = None):
        options = {} if snapshot_every is None else {"snapshot_every": snapshot_every}
        store = DurableStore(data_dir, tokens=TokenTable(), **options) if data_dir else None
        try:
            injector = faults_for(faults)
            self.app = build_app(store=store, ttl_delay=ttl_delay, faults=injector)
            self.recovery = self.app.recover()
            handler = MotoRequestHandler if log_requests else QuietRequestHandler
            self.server = listen(host, port, self.app, handler)
        except BaseException:
            if store:
                store.close()
            raise
        self.host, self.port = host, self.server.port
        self.sweeper = TtlSweeper(self.app.sweep_ttl, ttl_delay)
        self._thread = None

    @property
    def url(self) -> str:
        return f"http://{self.host}:{self.port}"

    def serve_forever(self) -> None:
        self.sweeper.start()
        self.server.serve_forever()

    def start(self) -> "LocalDynamoDB":
        self._thread = threading.Thread(target=self.serve_forever, daemon=True)
        self._thread.start()
        return self

    def stop(self) -> None:
        self.sweeper.stop()
        self.server.shutdown()
        self.server.server_close()
        if self._thread:
            self._thread.join(timeout=5)
        with self.app.lock:  # no request is half-way through the log
            self.app.closed = True
            if self.app.store:
                self.app.store.close()
        if self.app.faults:
            logger.warning("Faults injected: %s", self.app.faults.summary())


def faults_for(faults) -> fault_injection.FaultInjector | None:
    """An injector as given (tests keep it to script faults), or one for an enabled spec."""
    if isinstance(faults, fault_injection.FaultInjector):
        return faults
    return fault_injection.FaultInjector(faults) if faults and faults.enabled else None


def set_switch_interval(seconds: float | None) -> None:
    """Make thread switches frequent (tests use 1e-5 to provoke races)."""
    if seconds:
        sys.setswitchinterval(seconds)
