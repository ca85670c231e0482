"""The production setup as an operator runs it: `collectstatic`, then gunicorn with
config/gunicorn.conf.py and only the production environment, behind a proxy that says
HTTPS with X-Forwarded-Proto. One server serves every test here."""
import http.client
import os
import re
import socket
import subprocess
import sys
import uuid
from pathlib import Path

import pytest

from config.test_settings import TEST_ENVIRONMENT
from localdynamo.process import terminate
from tests.browser.conftest import free_port, wait_for_port

ROOT = Path(__file__).resolve().parents[2]
SECRET = "p9Lm2-vQ7xR4tY8uW1zA6sD3fG0hJ5kN2bV7cX4mQ9wE1rT6yU"
HTTPS = {"X-Forwarded-Proto": "https"}


def production_env(local_server, workdir: Path) -> dict:
    """The operator's environment: the test suite's own settings removed."""
    env = {k: v for k, v in os.environ.items() if k not in TEST_ENVIRONMENT}
    return {**env, "DJANGO_SETTINGS_MODULE": "config.settings", "DEBUG": "false",
            "SECRET_KEY": SECRET, "ALLOWED_HOSTS": "127.0.0.1",
            "SECURE_PROXY_SSL_HEADER": "HTTP_X_FORWARDED_PROTO,https",
            "STATIC_ROOT": str(workdir / "static"),
            "DYNAMODB_ENDPOINT_URL": local_server.url,
            "DYNAMODB_TABLE_PREFIX": f"p{uuid.uuid4().hex[:8]}-",
            "DATABASE_URL": f"sqlite:///{workdir / 'db.sqlite3'}",
            "EMAIL_URL": "dummymail://", "BOOKING_SIGNUP_RATE": "off"}


@pytest.fixture(scope="module")
def production_site(local_server, tmp_path_factory):
    workdir = tmp_path_factory.mktemp("production")
    env = production_env(local_server, workdir)
    for command in (["collectstatic", "--noinput"], ["migrate", "--noinput"],
                    ["create_tables"]):
        subprocess.run([sys.executable, "manage.py", *command], cwd=ROOT, env=env,
                       check=True, capture_output=True, timeout=120)
    port, log = free_port(), workdir / "gunicorn.log"
    env = {**env, "GUNICORN_BIND": f"127.0.0.1:{port}", "WEB_CONCURRENCY": "1",
           "GUNICORN_THREADS": "4"}
    with log.open("w") as output:
        process = subprocess.Popen([sys.executable, "-m", "gunicorn", "-c",
                                    "config/gunicorn.conf.py"],
                                   cwd=ROOT, env=env, stdout=output, stderr=subprocess.STDOUT)
    wait_for_port(port, process, log)
    yield port
    terminate(process)


def get(port, path, headers=None):
    connection = http.client.HTTPConnection("127.0.0.1", port, timeout=60)
    try:
        connection.request("GET", path, headers=headers or {})
        response = connection.getresponse()
        return response, response.read()
    finally:
        connection.close()


def test_home__https_via_proxy__200_with_security_headers(production_site):
    response, body = get(production_site, "/", HTTPS)

    assert response.status == 200, body[:500]
    assert response.getheader("Strict-Transport-Security") == (
        "max-age=31536000; includeSubDomains; preload")
    assert response.getheader("X-Content-Type-Options") == "nosniff"
    assert response.getheader("X-Frame-Options") == "DENY"
    assert "'nonce-" in response.getheader("Content-Security-Policy")
    assert response.getheader("Permissions-Policy")


def test_home__plain_http__redirected_to_https(production_site):
    response, _ = get(production_site, "/")

    assert response.status == 301
    assert response.getheader("Location").startswith("https://127.0.0.1")


def test_static__hashed_css__served_with_far_future_cache(production_site):
    _, body = get(production_site, "/", HTTPS)
    css = re.search(rb'href="(/static/booking/site\.[0-9a-f]{12}\.css)"', body)
    assert css, body[:800]

    response, content = get(production_site, css.group(1).decode(), HTTPS)

    assert response.status == 200 and b"{" in content
    assert "max-age=315360000" in response.getheader("Cache-Control")


def test_favicon__redirects_to_the_hashed_icon_and_pages_link_it(production_site):
    response, _ = get(production_site, "/favicon.ico", HTTPS)
    assert response.status == 302
    icon = response.getheader("Location")
    assert re.fullmatch(r"/static/booking/favicon\.[0-9a-f]{12}\.ico", icon), icon

    served, content = get(production_site, icon, HTTPS)

    assert served.status == 200 and content[:4] == b"\x00\x00\x01\x00"  # an ICO file
    _, home = get(production_site, "/", HTTPS)
    assert f'<link rel="icon" href="{icon}"'.encode() in home


def test_slow_clients__do_not_hold_the_site(production_site):
    """Clients that send half a request and stall hold at most their own threads: a
    threaded worker (4 threads here) still answers others while 3 of them stall."""
    stalled = []
    for _ in range(3):
        slow = socket.create_connection(("127.0.0.1", production_site), timeout=60)
        slow.sendall(b"GET / HTTP/1.1\r\nHost: 127.0.0.1\r\nX-Slow: ")
        stalled.append(slow)
    try:
        response, _ = get(production_site, "/", HTTPS)
        assert response.status == 200
    finally:
        for slow in stalled:
            slow.close()
