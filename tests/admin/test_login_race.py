"""The admin login throttle under a real race (issue 27, finding 7): 30 wrong passwords
sent at once over HTTP, each on its own thread, to a threaded server in this process.
Each attempt is reserved in DynamoDB before its password is checked, so at most the
limit (10) are checked. The control, a check-then-count variant the test builds (read
the count, check the password, count the failure), lets many more through."""
import http.client
import re
import threading
import time
from contextlib import contextmanager
from urllib.parse import urlencode

import pytest
from django.contrib.auth.backends import BaseBackend
from django.core.servers.basehttp import ThreadedWSGIServer, WSGIRequestHandler
from django.core.wsgi import get_wsgi_application

from booking.admin import login
from booking.errors import RateLimited
from booking.entry import limits as rate_limits
from booking import wiring
from tests.helpers import within_one_window

LIMIT, ATTEMPTS = 10, 30
PASSWORD_CHECK_SECONDS = 0.05  # what a real password hash costs, roughly


class SlowCountingBackend(BaseBackend):
    """A password check that takes as long as a real password hash, counts itself, and
    never matches: every attempt here is a wrong password (no user table needed)."""

    checks, lock = [0], threading.Lock()

    def authenticate(self, request, username=None, password=None, **kwargs):
        with self.lock:
            self.checks[0] += 1
        time.sleep(PASSWORD_CHECK_SECONDS)
        return None


@contextmanager
def check_then_count(limit, clients, *, message=None, now=None):
    """The control: read each count, let the attempt through below the limit, and count
    it only after the password check (the race the reservation closes)."""
    rate = rate_limits._rate(limit)
    start, retry_after = rate_limits._window(rate, time.time())
    counters = wiring.rate_counters()
    buckets = [rate_limits._bucket(limit, client) for client in clients]
    if any(counters.hits(b, window_start=start) >= rate.limit for b in buckets):
        raise RateLimited(message, retry_after=retry_after)
    right = []
    yield lambda: right.append(True)
    if not right:
        for bucket in buckets:
            counters.hit(bucket, window_start=start, window_seconds=rate.seconds)


class Quiet(WSGIRequestHandler):
    def log_message(self, *args):
        pass


class Server(ThreadedWSGIServer):
    request_queue_size = 2 * ATTEMPTS  # every attempt connects at once


@pytest.fixture
def site(dynamo, settings):
    settings.ADMIN_LOGIN_RATE = f"{LIMIT}/15m"
    within_one_window(15 * 60, room=30.0)  # every attempt in one window of the limit
    settings.AUTHENTICATION_BACKENDS = [f"{__name__}.SlowCountingBackend"]
    SlowCountingBackend.checks[0] = 0
    server = Server(("127.0.0.1", 0), Quiet)
    server.set_app(get_wsgi_application())
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    yield server.server_address[1]
    server.shutdown()
    server.server_close()


def csrf(port) -> tuple[str, str]:
    """A CSRF cookie and the login form's token (reusable by every attempt)."""
    connection = http.client.HTTPConnection("127.0.0.1", port, timeout=30)
    connection.request("GET", "/admin/login/")
    response = connection.getresponse()
    cookie = response.getheader("Set-Cookie").split(";")[0]
    token = re.search(r'name="csrfmiddlewaretoken" value="([^"]+)"',
                      response.read().decode()).group(1)
    return cookie, token


def wrong_passwords_at_once(port) -> list[int]:
    cookie, token = csrf(port)
    body = urlencode({"csrfmiddlewaretoken": token, "username": "organizer",
                      "password": "wrong"})
    barrier, answers = threading.Barrier(ATTEMPTS), []

    def attempt():
        connection = http.client.HTTPConnection("127.0.0.1", port, timeout=60)
        barrier.wait()
        connection.request("POST", "/admin/login/", body, {
            "Content-Type": "application/x-www-form-urlencoded", "Cookie": cookie})
        answers.append(connection.getresponse().status)

    threads = [threading.Thread(target=attempt) for _ in range(ATTEMPTS)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    return answers


def test_admin_login__30_wrong_passwords_at_once__at_most_the_limit_checked(site):
    answers = wrong_passwords_at_once(site)

    checked = SlowCountingBackend.checks[0]
    assert checked <= LIMIT
    assert answers.count(200) == checked and answers.count(429) == ATTEMPTS - checked


def test_admin_login__check_then_count_control__checks_more_than_the_limit(site,
                                                                          monkeypatch):
    monkeypatch.setattr(login, "attempts", check_then_count)

    wrong_passwords_at_once(site)

    assert SlowCountingBackend.checks[0] > LIMIT
