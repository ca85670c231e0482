"""``/metrics`` behind the production serving (`make serve`: nginx in front of gunicorn,
DEBUG=false), metrics on, the default allow-list (127.0.0.1, where nginx connects from)
and a bearer token: through nginx a scrape without the token answers 404 and one with a
wrong token 403; the token lets a scrape through; gunicorn's own port answers a scraper on
a listed address (the control: that very request, without nginx in between, is answered,
so the 404 and the 403 are the proxy's and the proxy rule's doing)."""
import http.client

import pytest

from booking.dynamo.provision import ensure_tables
from harness.controls import local_store
from harness.serving import ProductionSite, nginx_available

pytestmark = [pytest.mark.concurrency,
              pytest.mark.skipif(not nginx_available(), reason="needs Debian's nginx "
                                 "(scripts/ensure_nginx.sh, run by make test as root)")]
TOKEN = "scrape-token-0123456789"


@pytest.fixture(scope="module")
def site(local_server, tmp_path_factory):
    served = ProductionSite(local_server.url, workdir=tmp_path_factory.mktemp("serve"),
                            METRICS_ENABLED="true", METRICS_BEARER_TOKEN=TOKEN)
    ensure_tables(local_store(local_server.url, table_prefix=served.table_prefix))
    try:
        served.start(pages=False, tables=False)
        yield served
    finally:
        served.stop()


def scrape(port: int, **headers) -> int:
    connection = http.client.HTTPConnection("127.0.0.1", port, timeout=30)
    try:
        connection.request("GET", "/metrics", headers=headers)
        response = connection.getresponse()
        response.read()
        return response.status
    finally:
        connection.close()


def test_metrics_through_nginx__404_without_token_403_wrong_token_200_with_it(site):
    assert scrape(site.port) == 404
    assert scrape(site.port, Authorization="Basic eDp5") == 404
    assert scrape(site.port, Authorization="Bearer wrong") == 403
    assert scrape(site.port, Authorization=f"Bearer {TOKEN}") == 200


def test_control__gunicorns_own_port__listed_scraper_answered_without_token(site):
    assert scrape(site.app_port) == 200
    assert scrape(site.app_port, **{"X-Forwarded-For": "127.0.0.1"}) == 403
