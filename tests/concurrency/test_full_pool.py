"""A full worker pool answers 503 with Retry-After at once, never a queue past a booking's
deadline: `make serve` (nginx in front of gunicorn) with one thread, its store slowed so
that each request holds that thread for seconds, and a burst of requests. Those beyond the
thread and gunicorn's short line of connections are answered 503 problem+json with
Retry-After within about a second (nginx's connect timeout), and nobody waits past the
proxy's read timeout. The control serves with gunicorn's former pool (1,000 connections a
worker, a line of 2,048): every request queues inside gunicorn and nobody is turned away
fast."""
import http.client
import json
import threading
import time

import pytest

from booking.dynamo.provision import ensure_tables
from harness.controls import local_store
from harness.serving import ProductionSite, nginx_available
from localdynamo.faults import FaultSpec
from tests.conftest import start_fault_proxy

pytestmark = [pytest.mark.concurrency,
              pytest.mark.skipif(not nginx_available(), reason="needs Debian's nginx "
                                 "(scripts/ensure_nginx.sh, run by make test as root)")]

BURST, SLOW_MS = 30, 1200
FAST = 1.8  # seconds: nginx's connect timeout (1 s) and scheduling on a loaded machine
UPSTREAM_TIMEOUT = 5  # ceil(BOOKING_REQUEST_DEADLINE) + 2, as scripts/serve.sh renders it
# gunicorn's pool as it was before: gthread takes 1,000 connections and queues inside.
FORMER_POOL = {"GUNICORN_WORKER_CONNECTIONS": "1000", "GUNICORN_BACKLOG": "2048"}


def get(port: int, path: str) -> tuple[int, float, dict, bytes]:
    """(status, seconds, headers, body) of one GET on a connection of its own."""
    started = time.monotonic()
    connection = http.client.HTTPConnection("127.0.0.1", port, timeout=30)
    try:
        connection.request("GET", path)
        response = connection.getresponse()
        return (response.status, time.monotonic() - started, dict(response.getheaders()),
                response.read())
    finally:
        connection.close()


def burst(port: int, path: str) -> list[tuple[int, float, dict, bytes]]:
    """BURST requests for ``path`` at once: (status, seconds, headers, body) each."""
    answers = [None] * BURST

    def one(number):
        answers[number] = get(port, path)

    threads = [threading.Thread(target=one, args=(n,)) for n in range(BURST)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    return answers


def serve_slowly(local_server, tmp_path, **pool):
    """A one-thread `make serve` on a fault proxy that holds every read SLOW_MS; the
    answers of a burst of event reads."""
    proxy = start_fault_proxy(local_server)
    # Stopped without waiting for the queued reads to drain (they only hold the test up).
    site = ProductionSite(proxy.url, workdir=tmp_path, threads=1,
                          GUNICORN_GRACEFUL_TIMEOUT="1", **pool)
    store = local_store(proxy.url, table_prefix=site.table_prefix)
    ensure_tables(store)
    try:
        site.start(pages=False, tables=False)
        from booking.wiring import service_from_settings
        event = service_from_settings(store=store).create_event(name="Busy", capacity=5)
        path = f"/api/v1/events/{event.id}/"
        assert get(site.port, path)[0] == 200  # warm: the store's clients are built
        proxy.injector.spec = FaultSpec(delay_ms=(SLOW_MS, SLOW_MS))
        return burst(site.port, path)
    finally:
        site.stop()
        proxy.stop()


def test_full_pool__the_rest_answered_503_with_retry_after_at_once(local_server, tmp_path):
    answers = serve_slowly(local_server, tmp_path)

    turned_away = [a for a in answers if a[0] == 503]
    assert turned_away and {a[0] for a in answers} <= {200, 503}, [a[:2] for a in answers]
    assert any(seconds <= FAST for _, seconds, _, _ in turned_away), [a[:2] for a in answers]
    for status, seconds, headers, body in turned_away:
        assert 1 <= int(headers["Retry-After"]) <= 3
        assert headers["Content-Type"] == "application/problem+json"
        assert json.loads(body)["type"] == "/api/v1/problems/unavailable"
    assert max(seconds for _, seconds, _, _ in answers) <= UPSTREAM_TIMEOUT + 1.5


def test_control__former_pool__requests_queue_and_nobody_is_turned_away_fast(local_server,
                                                                            tmp_path):
    answers = serve_slowly(local_server, tmp_path, **FORMER_POOL)

    assert not any(status == 503 and seconds <= FAST for status, seconds, _, _ in answers), [
        a[:2] for a in answers]
