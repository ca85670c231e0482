"""The served stack (nginx in front of gunicorn, DEBUG=false) at its edges, the fourth
round: request lines too long for the proxy and paths it cannot parse answer the API's
problem+json under /api/ (F9); the access logs of nginx and gunicorn and Django's request
log never hold a link's secret or an access code (F10), while the links keep working."""
import http.client

import pytest

from booking.dynamo.provision import ensure_tables
from harness.controls import local_store
from harness.serving import ProductionSite, nginx_available

pytestmark = [pytest.mark.concurrency,
              pytest.mark.skipif(not nginx_available(), reason="needs Debian's nginx "
                                 "(scripts/ensure_nginx.sh, run by make test as root)")]
PROBLEM = "application/problem+json"
SECRETS = ("CANCELSECRET7Q2K", "BOOKINGSECRET9X", "APISECRET4M2P", "CODESECRET8R3T",
           "REFERERSECRET5W")


@pytest.fixture(scope="module")
def site(local_server, tmp_path_factory):
    served = ProductionSite(local_server.url, workdir=tmp_path_factory.mktemp("edges"),
                            client_timeout=10, threads=4)
    ensure_tables(local_store(local_server.url, table_prefix=served.table_prefix))
    try:
        yield served.start(pages=False, tables=False)
    finally:
        served.stop()


def get(port, path, headers=None):
    connection = http.client.HTTPConnection("127.0.0.1", port, timeout=30)
    try:
        connection.request("GET", path, headers=headers or {})
        response = connection.getresponse()
        return (response.status, (response.getheader("Content-Type") or "").split(";")[0],
                response.read())
    finally:
        connection.close()


def test_api__request_lines_over_the_limits_and_nul__problem_json(site):
    over_gunicorns_old_limit = get(site.port, "/api/v1/events/" + "a" * 5000 + "/")
    over_nginx = get(site.port, "/api/v1/events/" + "a" * 9000 + "/")
    nul = get(site.port, "/api/v1/events/%00/")
    page_over_nginx = get(site.port, "/events/" + "a" * 9000 + "/")

    assert over_gunicorns_old_limit[:2] == (404, PROBLEM), over_gunicorns_old_limit
    assert over_nginx[:2] == (414, PROBLEM), over_nginx
    assert b'"status": 414' in over_nginx[2]
    assert nul[:2] == (400, PROBLEM), nul
    assert page_over_nginx[0] == 414 and page_over_nginx[1] != PROBLEM  # pages: nginx's


def test_logs__secrets_of_links_redacted_in_every_log(site):
    answers = [
        get(site.port, f"/cancel/{SECRETS[0]}/",
            {"Referer": f"http://127.0.0.1/bookings/{SECRETS[4]}/"}),
        get(site.port, f"/bookings/{SECRETS[1]}/"),
        get(site.port, f"/api/v1/registrations/{SECRETS[2]}/answers/"),
        get(site.port, f"/api/v1/events/?code={SECRETS[3]}"),
    ]
    assert all(status < 500 for status, _, _ in answers), answers

    logs = {"nginx": (site.runtime / "nginx-access.log").read_text(),
            "gunicorn": (site.workdir / "access.log").read_text(),
            "django": (site.workdir / "serve.log").read_text()}
    leaked = {name: [s for s in SECRETS if s in text] for name, text in logs.items()}
    assert leaked == {"nginx": [], "gunicorn": [], "django": []}
    for name in ("nginx", "gunicorn"):
        assert "/cancel/[redacted]/" in logs[name], logs[name][-2000:]
        assert "/api/v1/registrations/[redacted]/answers/" in logs[name]
        assert "/bookings/[redacted]/" in logs[name]  # the Referer
    assert "/cancel/[redacted]/" in logs["django"], logs["django"][-2000:]
