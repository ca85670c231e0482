"""A small HTTP proxy in front of DynamoDB Local that injects faults (faults.py).

Each request is read whole, given at most one fault, and otherwise forwarded on a fresh
connection to DynamoDB Local (a kept-alive upstream connection could be closed by the
store while idle, and resending a write on another one would be a second request). A lost
response is forwarded and applied, then the client's connection is closed unanswered.

Test hooks: ``GET /_localdynamo/faults`` answers the faults injected so far, by kind;
``POST /_localdynamo/faults/next?kind=...&count=...[&skip=N][&only_mutating=1]`` scripts
the next faults.
"""
import http.client
import json
import socket
import threading
import urllib.parse
import uuid
import zlib
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

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


class FaultProxyHandler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"  # keep-alive, as botocore expects
    server: "FaultProxyServer"

    def do_GET(self):
        if self.path.rstrip("/") == ADMIN_PREFIX + "faults":
            self.answer(*json_answer(self.server.injector.snapshot()))
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
        else:
            self.forward(body, fault)

    def read_body(self) -> bytes:
        length = int(self.headers.get("Content-Length") or 0)
        return self.rfile.read(length) if length else b""

    def forward(self, body: bytes, fault: str | None) -> None:
        try:
            status, headers, payload = self.server.upstream(self.command, self.path,
                                                            self.headers, body)
        except OSError as exc:
            self.answer(*error_answer("ServiceUnavailable",
                                      f"DynamoDB Local did not answer: {exc}", 503))
            return
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

    def __init__(self, address, upstream_url: str, injector: fault_injection.FaultInjector):
        super().__init__(address, FaultProxyHandler)
        parts = urllib.parse.urlsplit(upstream_url)
        self.upstream_address = (parts.hostname, parts.port)
        self.injector = injector

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
                 host: str = "127.0.0.1", port: int = 0):
        self.injector = injector
        self.server = FaultProxyServer((host, port), upstream_url, injector)
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
