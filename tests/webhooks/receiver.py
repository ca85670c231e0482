"""A webhook receiver on 127.0.0.1 for tests, and the URL policy that lets tests use it.

``LoopbackHttp`` is the product's rule (``PublicUrls``) with 127.0.0.1 listed as the
development setting ``WEBHOOK_ALLOWED_HOSTS`` would list it (config/test_settings.py sets
that for the servers tests start).
"""
import threading
import time
from dataclasses import dataclass
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

from booking.webhooks import signing
from booking.webhooks.addresses import PublicUrls


class LoopbackHttp(PublicUrls):
    """PublicUrls, and also http://127.0.0.1 (a test's receiver)."""

    def __init__(self, **options):
        super().__init__(allowed_hosts=("127.0.0.1",), **options)


@dataclass(frozen=True)
class Received:
    path: str
    webhook_id: str
    body: bytes
    valid: bool  # the signature verified with the path's secret
    status: int  # what the receiver answered


class Receiver:
    """Records every POST. ``secrets[path]`` verifies it; the answer is 500 while
    ``failing()`` is true, else 204. While ``hold`` is set, a request is recorded and then
    kept unanswered until ``release`` is set (``holding`` tells the test one is held)."""

    def __init__(self):
        self.secrets: dict[str, str] = {}
        self.received: list[Received] = []
        self.fail_until = 0.0
        self.fail_next = 0  # answer 500 to this many requests still, whenever they come
        self.hold, self.holding, self.release = (threading.Event(), threading.Event(),
                                                 threading.Event())
        self.lock = threading.Lock()
        receiver = self

        class Handler(BaseHTTPRequestHandler):
            def do_POST(self):
                body = self.rfile.read(int(self.headers.get("Content-Length", 0)))
                receiver.answer(self, body)

            def log_message(self, *args):
                pass

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.server.daemon_threads = True
        self.thread = threading.Thread(target=self.server.serve_forever, daemon=True)

    def __enter__(self):
        self.thread.start()
        return self

    def __exit__(self, *exc):
        self.release.set()
        self.server.shutdown()
        self.server.server_close()

    def url(self, path: str) -> str:
        return f"http://127.0.0.1:{self.server.server_address[1]}/{path}"

    def answer(self, handler, body: bytes) -> None:
        path = handler.path.lstrip("/")
        valid = signing.verify(self.secrets.get(path, "whsec_"), dict(handler.headers), body)
        with self.lock:
            failing = self.fail_next > 0
            self.fail_next -= failing
            status = 500 if failing or time.time() < self.fail_until else 204
            self.received.append(Received(path, handler.headers.get("webhook-id", ""), body,
                                          valid, status))
        if self.hold.is_set():
            self.holding.set()
            self.release.wait(30)
        handler.send_response(status)
        handler.send_header("Content-Length", "0")
        handler.end_headers()


def anomalies(owed: dict[str, bytes], received: list[Received]) -> list[str]:
    """What breaks "every delivery seen, signed, duplicates only as the same webhook-id":
    ``owed`` maps each webhook-id written to its body."""
    found = []
    taken = {r.webhook_id for r in received if r.status == 204}
    found += [f"never received: {wid}" for wid in sorted(set(owed) - taken)]
    for r in received:
        if not r.valid:
            found.append(f"bad signature: {r.webhook_id}")
        if r.webhook_id not in owed:
            found.append(f"not owed: {r.webhook_id}")
        elif r.body != owed[r.webhook_id]:
            found.append(f"same id, other body: {r.webhook_id}")
    return found
