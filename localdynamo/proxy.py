"""A small HTTP proxy in front of DynamoDB Local that injects faults (faults.py) and
enforces DynamoDB's per-partition capacity limits (capacity.py).

Each request is read whole, given at most one fault, and otherwise forwarded on a fresh
connection to DynamoDB Local (a kept-alive upstream connection could be closed by the
store while idle, and resending a write on another one would be a second request). A lost
response is forwarded and applied, then the client's connection is closed unanswered.

Test hooks: ``GET /_localdynamo/faults`` answers the faults injected so far, by kind;
``POST /_localdynamo/faults/next?kind=...&count=...[&skip=N][&only_mutating=1]`` scripts
the next faults. With a capacity model, each data-plane request is charged by DynamoDB's
rules before it is forwarded, and refused as DynamoDB refuses it when a partition it
touches has no units left (nothing applied); ``GET /_localdynamo/capacity`` answers the
units consumed and the throttles per table and the hottest partitions,
``POST /_localdynamo/capacity/reset`` starts the accounting (and the buckets) afresh.
"""
import http.client
import json
import socket
import threading
import urllib.parse
import uuid
import zlib
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

from . import capacity as capacity_model
from . import faults as fault_injection

API_PREFIX = "DynamoDB_20120810"
ADMIN_PREFIX = "/_localdynamo/"
HOP_BY_HOP = frozenset({"connection", "keep-alive", "transfer-encoding", "content-length"})
UPSTREAM_TIMEOUT_SECONDS = 120


def json_answer(document: dict, status: int = 200) -> tuple[int, list, bytes]:
    """A DynamoDB-shaped JSON answer, with the CRC-32 header botocore checks."""
    payload = json.dumps(document).encode()
    headers = [("Content-Type", "application/x-amz-json-1.0"),
               ("x-amzn-RequestId", uuid.uuid4().hex.upper()),
               ("x-amz-crc32", str(zlib.crc32(payload)))]
    return status, headers, payload


def error_answer(code: str, message: str, status: int) -> tuple[int, list, bytes]:
    return json_answer({"__type": f"com.amazonaws.dynamodb.v20120810#{code}",
                        "message": message}, status)


REFUSALS = {
    fault_injection.THROTTLE: error_answer(
        "ProvisionedThroughputExceededException",
        "Injected fault: the request rate is too high.", 400),
    fault_injection.ERROR500: error_answer(
        "InternalServerError", "Injected fault: internal server error.", 500),
}
THROTTLING_MESSAGE = ("Throughput exceeds the current capacity of your table or index. DynamoDB "
                      "is automatically scaling your table or index so please try again shortly.")


def throttle_answer(operation: str, request: dict, position: int) -> tuple[int, list, bytes]:
    """DynamoDB's refusal for a request that would overdraw a partition."""
    if operation not in ("TransactWriteItems", "TransactGetItems"):
        return error_answer("ProvisionedThroughputExceededException", THROTTLING_MESSAGE, 400)
    reasons = [{"Code": "ThrottlingError", "Message": THROTTLING_MESSAGE} if n == position
               else {"Code": "None"} for n in range(len(request["TransactItems"]))]
    codes = ", ".join(reason["Code"] for reason in reasons)
    return json_answer({
        "__type": "com.amazonaws.dynamodb.v20120810#TransactionCanceledException",
        "Message": "Transaction cancelled, please refer cancellation reasons for specific "
                   f"reasons [{codes}]",
        "CancellationReasons": reasons}, 400)


class FaultProxyHandler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"  # keep-alive, as botocore expects
    # An answer goes out as two writes (headers, then body): with Nagle's algorithm the
    # body waits for the client's delayed ACK of the headers, 40 ms per request.
    disable_nagle_algorithm = True
    server: "FaultProxyServer"

    def do_GET(self):
        if self.path.rstrip("/") == ADMIN_PREFIX + "faults":
            self.answer(*json_answer(self.server.injector.snapshot()))
        elif self.path.rstrip("/") == ADMIN_PREFIX + "capacity":
            model = self.server.capacity
            self.answer(*(json_answer(model.snapshot()) if model else
                          json_answer({"message": "the capacity model is off"}, 404)))
        else:
            self.forward(self.read_body(), fault=None)

    def do_POST(self):
        body = self.read_body()
        if self.path.startswith(ADMIN_PREFIX):
            self.answer(*self.admin())
            return
        prefix, _, operation = self.headers.get("X-Amz-Target", "").partition(".")
        fault = self.server.injector.draw(operation) if prefix == API_PREFIX else None
        if fault in REFUSALS:
            self.answer(*REFUSALS[fault])
        elif (self.server.meter and prefix == API_PREFIX
              and operation in fault_injection.DATA_PLANE):
            self.metered(operation, body, fault)
        else:
            self.forward(body, fault)

    def metered(self, operation: str, body: bytes, fault: str | None) -> None:
        """Charge the request's partitions or refuse it; settle a read by its answer."""
        meter = self.server.meter
        request = json.loads(body or b"{}")
        try:
            charges = meter.charges(operation, request)
        except (LookupError, ValueError, OSError):
            charges = []  # a missing table or a bad request: DynamoDB Local answers it
        refused = meter.model.admit([charge for _, charge in charges])
        if refused is not None:
            self.answer(*throttle_answer(operation, request, charges[refused][0]))
            return

        def settle(status, payload):
            if status in (200, 400) and charges:
                try:
                    extra = meter.settlement(operation, request, json.loads(payload), charges)
                except (LookupError, ValueError, OSError):
                    return
                meter.model.settle(extra)
        self.forward(body, fault, after=settle)

    def read_body(self) -> bytes:
        length = int(self.headers.get("Content-Length") or 0)
        return self.rfile.read(length) if length else b""

    def forward(self, body: bytes, fault: str | None, after=None) -> None:
        try:
            status, headers, payload = self.server.upstream(self.command, self.path,
                                                            self.headers, body)
        except OSError as exc:
            self.answer(*error_answer("ServiceUnavailable",
                                      f"DynamoDB Local did not answer: {exc}", 503))
            return
        if after:
            after(status, payload)
        if fault == fault_injection.LOST_RESPONSE:
            self.close_connection = True  # applied, never answered
            try:
                self.connection.shutdown(socket.SHUT_RDWR)
            except OSError:
                pass
            return
        self.answer(status, headers, payload)

    def answer(self, status: int, headers: list, payload: bytes) -> None:
        self.send_response(status)
        for name, value in headers:
            self.send_header(name, value)
        self.send_header("Content-Length", str(len(payload)))
        self.end_headers()
        self.wfile.write(payload)

    def admin(self) -> tuple[int, list, bytes]:
        """``faults/next?kind=lost_response&count=2[&skip=1][&only_mutating=1]``."""
        path, _, query = self.path[len(ADMIN_PREFIX):].partition("?")
        if path == "capacity/reset" and self.server.capacity:
            self.server.capacity.reset()
            return json_answer({"reset": True})
        if path != "faults/next":
            return json_answer({"message": f"unknown command {path!r}"}, 404)
        fields = dict(urllib.parse.parse_qsl(query))
        try:
            count = int(fields.get("count", 1))
            self.server.injector.script(
                fields.get("kind", ""), count, skip=int(fields.get("skip", 0)),
                only_mutating=fields.get("only_mutating") in ("1", "true"))
        except ValueError as exc:  # FaultSpecError is a ValueError, as is a bad number
            return json_answer({"message": str(exc)}, 400)
        return json_answer({"scripted": fields["kind"], "count": count})

    def log_message(self, format, *args):
        pass  # a line per request would slow every booking down


class FaultProxyServer(ThreadingHTTPServer):
    daemon_threads = True
    request_queue_size = 128

    def __init__(self, address, upstream_url: str, injector: fault_injection.FaultInjector,
                 capacity: capacity_model.CapacityModel | None = None):
        super().__init__(address, FaultProxyHandler)
        parts = urllib.parse.urlsplit(upstream_url)
        self.upstream_address = (parts.hostname, parts.port)
        self.injector = injector
        self.capacity = capacity
        self.meter = capacity and capacity_model.Meter(capacity, self.call)

    def call(self, operation: str, document: dict) -> dict:
        """One request of the proxy's own to DynamoDB Local (never charged nor faulted)."""
        status, _, payload = self.upstream("POST", "/", {
            "Content-Type": "application/x-amz-json-1.0",
            "X-Amz-Target": f"{API_PREFIX}.{operation}",
            "Authorization": "AWS4-HMAC-SHA256 Credential=localdynamo/20260101/us-east-1/"
                             "dynamodb/aws4_request, SignedHeaders=host, Signature=0"},
            json.dumps(document).encode())
        if status != 200:
            raise LookupError(f"{operation} answered {status}: {payload[:200]!r}")
        return json.loads(payload)

    def upstream(self, method: str, path: str, headers, body: bytes):
        """Send one request to DynamoDB Local on a fresh connection; return its answer."""
        connection = http.client.HTTPConnection(*self.upstream_address,
                                                timeout=UPSTREAM_TIMEOUT_SECONDS)
        try:
            connection.request(method, path, body, {
                name: value for name, value in headers.items()
                if name.lower() not in HOP_BY_HOP})
            response = connection.getresponse()
            payload = response.read()
            kept = [(n, v) for n, v in response.getheaders() if n.lower() not in HOP_BY_HOP]
            return response.status, kept, payload
        finally:
            connection.close()


class FaultProxy:
    """A running proxy: ``start()`` in a thread or ``serve_forever()`` in the foreground."""

    def __init__(self, upstream_url: str, injector: fault_injection.FaultInjector, *,
                 host: str = "127.0.0.1", port: int = 0,
                 capacity: capacity_model.CapacityModel | None = None):
        self.injector = injector
        self.capacity = capacity
        self.server = FaultProxyServer((host, port), upstream_url, injector, capacity)
        self.host, self.port = host, self.server.server_address[1]
        self._thread = None

    @property
    def url(self) -> str:
        return f"http://{self.host}:{self.port}"

    def serve_forever(self) -> None:
        self.server.serve_forever(poll_interval=0.2)

    def start(self) -> "FaultProxy":
        self._thread = threading.Thread(target=self.serve_forever, daemon=True)
        self._thread.start()
        return self

    def stop(self) -> None:
        self.server.shutdown()
        self.server.server_close()
        if self._thread:
            self._thread.join(timeout=5)
