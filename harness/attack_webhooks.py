"""The attack run's webhook and metrics findings (harness/attack.py runs them on `make
serve`): webhook URLs aimed inside (registration over the API, and a stored endpoint the
worker would send to, as if its name now resolved to 127.0.0.1), a receiver that trickles
its answer while another organizer's endpoint waits, and ``/metrics`` through the proxy.

The sending parts run the product's worker code in a ``manage.py shell`` of the site
(its settings, DEBUG=false); the slow-receiver part lists 127.0.0.1 in
``WEBHOOK_ALLOWED_HOSTS`` for that process only, since its receivers listen there.
"""
import http.client
import json
import os
import socket
import subprocess
import sys
import threading
import time

METRICS_TOKEN = "attack-run-metrics-token"
# What the attack run's site runs with, besides the defaults: metrics on, with a token.
# (and no development allowance for webhooks, whatever the caller's environment says).
SITE_ENV = {"METRICS_ENABLED": "true", "METRICS_BEARER_TOKEN": METRICS_TOKEN,
            "WEBHOOK_ALLOWED_HOSTS": ""}
INSIDE_URLS = ("https://127.0.0.1/h", "https://localhost/h", "https://[::1]/h",
               "https://[::ffff:127.0.0.1]/h", "https://127.1/h", "https://2130706433/h",
               "https://0x7f000001/h", "https://0.0.0.0/h", "https://169.254.169.254/h",
               "https://metadata.google.internal/h", "https://10.0.0.1/h",
               "https://hooks.example.com:0/h", "https://hooks.example.com:99999/h")
TRICKLE_ANSWER = b"HTTP/1.1 204 No Content\r\n\r\n"


class Trickler:
    """A receiver on 127.0.0.1 that reads each request whole, then answers ``answer`` one
    byte every ``every`` seconds; ``accepted`` notes when each connection came (monotonic)."""

    def __init__(self, every: float, answer: bytes = TRICKLE_ANSWER):
        self.every, self.answer = every, answer
        self.listener = socket.create_server(("127.0.0.1", 0))
        self.accepted: list[float] = []
        self.closed = threading.Event()
        threading.Thread(target=self._serve, daemon=True).start()

    @property
    def port(self) -> int:
        return self.listener.getsockname()[1]

    def _serve(self):
        while not self.closed.is_set():
            try:
                conn, _ = self.listener.accept()
            except OSError:
                return
            self.accepted.append(time.monotonic())
            threading.Thread(target=self._trickle, args=(conn,), daemon=True).start()

    def _trickle(self, conn):
        with conn:
            data = b""
            while b"\r\n\r\n" not in data:
                data += conn.recv(65536)
            head, _, body = data.partition(b"\r\n\r\n")
            length = int(next(line.split(b":")[1] for line in head.split(b"\r\n")
                              if line.lower().startswith(b"content-length")))
            while len(body) < length:
                body += conn.recv(65536)
            try:
                for byte in self.answer:
                    conn.sendall(bytes([byte]))
                    time.sleep(self.every)
                conn.settimeout(10)
                conn.recv(1)  # stay until the sender is done with it
            except OSError:
                pass  # the sender hung up

    def close(self):
        self.closed.set()
        self.listener.close()


def api_token(site) -> str:
    """A write token of the site's superuser: by ``create_api_token`` where the site has
    it, else by the token model (what the admin does)."""
    from harness.serving import ADMIN_USER

    try:
        site.manage("create_organizer", "attackers", "--member", f"{ADMIN_USER}:admin")
        return site.manage("create_api_token", "--organizer", "attackers", "--user", ADMIN_USER,
                           "--name", "attack", "--scope", "write").strip().splitlines()[-1]
    except RuntimeError:
        return site.manage("shell", "-c", (
            "from django.contrib.auth.models import User; from booking.api.models import ApiToken; "
            f"t = ApiToken(user=User.objects.get(username={ADMIN_USER!r}), name='attack', "
            "scope='write'); s = t.issue(); t.save(); print(s)")).split()[-1]


def inside(site, function: str, **env) -> dict:
    """Run ``function`` of this module in a ``manage.py shell`` of the site; its JSON."""
    code = f"import json; from harness.attack_webhooks import {function}; print(json.dumps({function}()))"
    done = subprocess.run([sys.executable, "manage.py", "shell", "-c", code], cwd=site_root(),
                          env={**site.env, **env}, capture_output=True, text=True, timeout=180)
    if done.returncode:
        raise RuntimeError(f"{function} failed:\n{done.stderr}")
    return json.loads(done.stdout.strip().splitlines()[-1])


def site_root():
    from harness.serving import ROOT

    return ROOT


def _owe(endpoint_id: str, delivery_id: str, at: float) -> None:
    from booking.dynamo.webhooks import WebhookDeliveries
    from booking.wiring import get_store

    WebhookDeliveries(get_store()).add(
        {"delivery_id": delivery_id, "endpoint_id": endpoint_id,
         "event_type": "registration.created", "event_id": "attack", "body": "{}"},
        now=at, ttl=int(time.time() + 3600))


def _store_endpoint(endpoint_id: str, url: str, owner: str) -> None:
    """An endpoint item as registration writes it, bypassing registration's check (one
    registered while its name resolved elsewhere)."""
    from booking.dynamo.webhooks import WebhookEndpoints
    from booking.wiring import get_store

    WebhookEndpoints(get_store()).put({
        "endpoint_id": endpoint_id, "url": url, "secret": "whsec_" + "A" * 32,
        "events": ["registration.created"], "scope": "*", "owner": owner,
        "description": "", "fingerprint": endpoint_id, "created_at": int(time.time())})


def _log_errors(*delivery_ids: str) -> list[str]:
    from booking.dynamo.webhooks import WebhookDeliveries
    from booking.wiring import get_store

    table = WebhookDeliveries(get_store()).table
    return [(table.get({"delivery_id": d}) or {}).get("log", [{}])[-1].get("error", "")
            for d in delivery_ids]


def port_scan_inside() -> dict:
    """The worker's pass over endpoints aimed at a closed port and an open one on
    127.0.0.1 and at ``localhost``: what its delivery log says of each."""
    from booking.wiring import webhook_sender

    closed = socket.create_server(("127.0.0.1", 0))
    closed_port = closed.getsockname()[1]
    closed.close()
    opened = socket.create_server(("127.0.0.1", 0))  # accepts, never speaks TLS
    now = time.time()
    targets = {"closed": f"https://127.0.0.1:{closed_port}/h",
               "open": f"https://127.0.0.1:{opened.getsockname()[1]}/h",
               "localhost": f"https://localhost:{opened.getsockname()[1]}/h"}
    for n, (name, url) in enumerate(targets.items()):
        _store_endpoint(f"ep_attack_{name}", url, owner="attack")
        _owe(f"ep_attack_{name}", f"msg_attack_{name}", now - 1 - n)
    webhook_sender(deadline_seconds=3).run_pass()
    opened.close()
    return dict(zip(targets, _log_errors(*(f"msg_attack_{n}" for n in targets))))


def slow_receiver_inside() -> dict:
    """One pass of the worker's sender over a trickling receiver's deliveries (older) and
    another organizer's fast receiver's delivery: how each went, measured in deadlines."""
    from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

    from booking.wiring import webhook_registry, webhook_sender

    arrived = []

    class Fast(BaseHTTPRequestHandler):
        def do_POST(self):
            arrived.append(time.monotonic())
            self.rfile.read(int(self.headers.get("Content-Length", 0)))
            self.send_response(204)
            self.end_headers()

        def log_message(self, *args):
            pass

    deadline = float(os.environ["WEBHOOK_DELIVERY_DEADLINE"])
    trickler, fast = Trickler(every=deadline / 4), ThreadingHTTPServer(("127.0.0.1", 0), Fast)
    threading.Thread(target=fast.serve_forever, daemon=True).start()
    registry = webhook_registry()
    slow_hook = registry.register(url=f"http://127.0.0.1:{trickler.port}/slow",
                                  events=["registration.created"], owner="organizer-a")
    fast_hook = registry.register(url=f"http://127.0.0.1:{fast.server_address[1]}/fast",
                                  events=["registration.created"], owner="organizer-b")
    now = time.time()
    for n in range(3):
        _owe(slow_hook.id, f"msg_slow_{n}", now - 10 + n)
    _owe(fast_hook.id, "msg_fast", now - 5)
    began = time.monotonic()
    webhook_sender(threads=2).run_pass()
    spent = time.monotonic() - began
    trickler.close()
    fast.shutdown()
    errors = _log_errors("msg_slow_0", "msg_slow_1", "msg_slow_2", "msg_fast")
    return {"deadline": deadline, "pass_seconds": spent, "slow_errors": errors[:3],
            "fast_error": errors[3],
            "fast_after_slow_began": (arrived[0] - trickler.accepted[0]) if arrived else None}


def scrape(port: int, token: str | None = None) -> int:
    connection = http.client.HTTPConnection("127.0.0.1", port, timeout=30)
    try:
        connection.request("GET", "/metrics",
                           headers={"Authorization": f"Bearer {token}"} if token else {})
        response = connection.getresponse()
        response.read()
        return response.status
    finally:
        connection.close()


class WebhookFindings:
    """The findings' replays, reporting through the attack run's ``report``."""

    def __init__(self, run):
        self.run, self.site = run, run.site

    def steps(self):
        return (self.inside_urls, self.port_scan, self.slow_receiver, self.metrics)

    def inside_urls(self):
        from harness.serving import Browser

        token, browser, answers = api_token(self.site), Browser(self.site.port), {}
        auth = {"Authorization": f"Bearer {token}", "Content-Type": "application/json"}
        for n, url in enumerate(INSIDE_URLS):
            status, _ = browser.request("POST", "/api/v1/webhooks/", json.dumps(
                {"url": url, "events": ["registration.created"]}),
                {**auth, "Idempotency-Key": f"attack-inside-{n}"})
            answers[url] = status
        _, listed = browser.request("GET", "/api/v1/webhooks/", headers=auth)
        taken = [url for url, status in answers.items() if status != 400]
        self.run.report("webhook URLs aimed inside are taken",
                        not taken and json.loads(listed) == [],
                        f"{len(INSIDE_URLS)} URLs (loopback spellings, metadata, private, "
                        f"ports 0 and 99999): not refused {taken or 'none'}, "
                        f"endpoints stored {len(json.loads(listed))}")

    def port_scan(self):
        errors = inside(self.site, "port_scan_inside")
        same = len(set(errors.values())) == 1
        self.run.report("the delivery log is a port scanner",
                        same and errors["closed"] == "refused: not a public address",
                        f"stored endpoints on 127.0.0.1 (closed port, open port, localhost) "
                        f"logged: {errors}")

    def slow_receiver(self):
        seen = inside(self.site, "slow_receiver_inside", WEBHOOK_ALLOWED_HOSTS="127.0.0.1",
                      WEBHOOK_DELIVERY_DEADLINE="2")
        deadline, fast = seen["deadline"], seen["fast_after_slow_began"]
        self.run.report("one slow receiver stalls every organizer's webhooks",
                        seen["slow_errors"] == ["timed out"] * 3 and seen["fast_error"] == ""
                        and fast is not None and fast < deadline,
                        f"3 deliveries to a receiver trickling a byte every {deadline / 4:g} s: "
                        f"{seen['slow_errors']}; the other organizer's delivered "
                        f"{fast if fast is None else round(fast, 2)} s after the slow one "
                        f"began (deadline {deadline:g} s); pass {seen['pass_seconds']:.1f} s")

    def metrics(self):
        answers = {"no token": scrape(self.site.port), "wrong token": scrape(self.site.port, "x"),
                   "token": scrape(self.site.port, METRICS_TOKEN)}
        self.run.report("/metrics open behind the proxy",
                        answers == {"no token": 404, "wrong token": 403, "token": 200},
                        f"through nginx from 127.0.0.1: {answers}")
