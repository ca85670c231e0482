"""The queue deadline through the production serving (nginx in front of gunicorn,
DEBUG=false): nginx stamps every request's ``X-Request-Start`` over the client's own, and
the app refuses a changing request that waited past ``BOOKING_QUEUE_DEADLINE``. With the
deadline a microsecond every booking has waited longer (nginx's stamp is its millisecond),
so a booking answers 503 problem+json with Retry-After and stores nothing, even when the
client sends a start time in the future (passed through, it would skip the check); a read
is served."""
import json
import urllib.error
import urllib.request

import pytest

from booking.dynamo.provision import ensure_tables
from booking.wiring import service_from_settings
from harness.controls import local_store
from harness.serving import ProductionSite, nginx_available

pytestmark = [pytest.mark.concurrency,
              pytest.mark.skipif(not nginx_available(), reason="needs Debian's nginx "
                                 "(scripts/ensure_nginx.sh, run by make test as root)")]


@pytest.fixture
def site(local_server, tmp_path):
    served = ProductionSite(local_server.url, workdir=tmp_path, client_timeout=10, threads=2,
                            BOOKING_QUEUE_DEADLINE="0.000001")
    store = local_store(local_server.url, table_prefix=served.table_prefix)
    ensure_tables(store)
    service = service_from_settings(store=store)
    try:
        yield served.start(pages=False, tables=False), service
    finally:
        served.stop()


def send(site, method, path, body=None, **headers):
    """(status, headers, body) of one request through nginx."""
    request = urllib.request.Request(
        f"http://127.0.0.1:{site.port}{path}", method=method,
        data=None if body is None else json.dumps(body).encode(),
        headers={"Content-Type": "application/json", **headers})
    try:
        with urllib.request.urlopen(request, timeout=20) as response:
            return response.status, response.headers, response.read()
    except urllib.error.HTTPError as error:
        return error.code, error.headers, error.read()


def test_served__booking_waited__refused_by_nginxs_stamp_not_the_clients(site):
    served, service = site
    event = service.create_event(name="Served queue", capacity=2, strategy="lock_table")
    path = f"/api/v1/events/{event.id}/registrations/"
    body = {"name": "Ann", "email": "ann@example.com"}

    plain = send(served, "POST", path, body, **{"Idempotency-Key": "ann-key-0001"})
    forged = send(served, "POST", path, body, **{"Idempotency-Key": "ann-key-0002",
                                                 "X-Request-Start": "t=9999999999.000"})
    read = send(served, "GET", f"/api/v1/events/{event.id}/")

    for status, headers, content in (plain, forged):
        assert status == 503, content
        assert headers["Content-Type"] == "application/problem+json"
        assert headers["Retry-After"].isdigit()
        assert "nothing was written" in json.loads(content)["detail"]
    assert read[0] == 200, read[2]
    assert service.registrations(event.id) == []
