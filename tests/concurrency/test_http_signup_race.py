"""The public signup form under a real race: gunicorn (3 worker processes x 8 threads) on
the embedded DynamoDB, 150 people submitting the form at once for 40 seats. The unguarded
control runs through the very same harness and is caught overbooking, which proves the
checks can fail."""
import http.client
import os
import re
import subprocess
import sys
import threading
import uuid
from collections import Counter
from http.cookies import SimpleCookie
from pathlib import Path
from urllib.parse import urlencode

import pytest

from booking.dynamo.provision import ensure_tables
from booking.wiring import reset_services
from harness.controls import local_store
from tests.conftest import use_test_service
from tests.browser.conftest import free_port, wait_for_port

pytestmark = pytest.mark.concurrency

ROOT = Path(__file__).resolve().parents[2]
CAPACITY = 40
PEOPLE = 150
WORKERS, THREADS = 3, 8


@pytest.fixture(scope="module")
def gunicorn_site(local_server, tmp_path_factory):
    """The site under gunicorn, on its own tables, serving the test graph
    (``tests/concurrency/control_wsgi.py``): the product's strategies and the unguarded
    control, with a 20 ms window between its read and its write."""
    workdir = tmp_path_factory.mktemp("gunicorn")
    env = {**os.environ, "DJANGO_SETTINGS_MODULE": "config.settings",
           "DYNAMODB_ENDPOINT_URL": local_server.url,
           "DYNAMODB_TABLE_PREFIX": f"h{uuid.uuid4().hex[:8]}-",
           "DATABASE_URL": f"sqlite:///{workdir / 'db.sqlite3'}",
           "EMAIL_URL": "dummymail://",
           # 150 people submit from 127.0.0.1: the per-address signup limit is not under test.
           "BOOKING_SIGNUP_RATE": "off"}
    port, log = free_port(), workdir / "gunicorn.log"
    with log.open("w") as output:
        process = subprocess.Popen(
            [sys.executable, "-m", "gunicorn", "tests.concurrency.control_wsgi:application",
             "--bind", f"127.0.0.1:{port}", "--workers", str(WORKERS),
             "--threads", str(THREADS), "--backlog", "512", "--timeout", "120"],
            cwd=ROOT, env=env, stdout=output, stderr=subprocess.STDOUT)
    wait_for_port(port, process, log)
    yield port, env
    process.terminate()
    process.wait(timeout=20)


@pytest.fixture
def race_service(gunicorn_site):
    """This process's service on the same tables as the served site."""
    _, env = gunicorn_site
    store = local_store(env["DYNAMODB_ENDPOINT_URL"], table_prefix=env["DYNAMODB_TABLE_PREFIX"])
    ensure_tables(store)
    yield use_test_service(store)
    reset_services()


def request(port, method, path, body=None, headers=None):
    connection = http.client.HTTPConnection("127.0.0.1", port, timeout=120)
    try:
        connection.request(method, path, body=body, headers={"Connection": "close",
                                                             **(headers or {})})
        response = connection.getresponse()
        return response, response.read().decode()
    finally:
        connection.close()


def open_form(port, path):
    """GET the event page as a browser would: (CSRF cookie, CSRF field, one-time token)."""
    response, html = request(port, "GET", path)
    assert response.status == 200, html[:500]
    cookie = SimpleCookie()
    for header in response.msg.get_all("Set-Cookie") or []:
        cookie.load(header)
    fields = dict(re.findall(r'name="(csrfmiddlewaretoken|token)" value="([^"]+)"', html))
    return cookie["csrftoken"].value, fields["csrfmiddlewaretoken"], fields["token"]


def person_submits(port, path, number, barrier):
    """One person: open the form, wait for everyone, submit; return the outcome."""
    try:
        csrf_cookie, csrf_field, token = open_form(port, path)
    except BaseException:
        barrier.abort()
        raise
    body = urlencode({"csrfmiddlewaretoken": csrf_field, "token": token,
                      "name": f"Person {number}", "email": f"person{number}@example.com"})
    barrier.wait()
    response, html = request(port, "POST", path, body, {
        "Cookie": f"csrftoken={csrf_cookie}",
        "Content-Type": "application/x-www-form-urlencoded"})
    if response.status == 303 and "/booked/" in response.getheader("Location", ""):
        return "booked"
    if response.status == 409 and "this event is full" in html:
        return "full"
    return f"{response.status}: {html[:200]}"


def http_race(port, service, strategy):
    """Race PEOPLE form submissions; return (clients' tally, confirmed e-mails, stored)."""
    event = service.create_event(name=f"HTTP race {strategy}", capacity=CAPACITY,
                                 strategy=strategy)
    path = f"/events/{event.id}/"
    barrier = threading.Barrier(PEOPLE, timeout=90)
    outcomes = [None] * PEOPLE

    def run(number):
        outcomes[number] = person_submits(port, path, number, barrier)

    threads = [threading.Thread(target=run, args=(n,)) for n in range(PEOPLE)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    confirmed = {f"person{n}@example.com" for n, o in enumerate(outcomes) if o == "booked"}
    stored = [r.email for r in service.registrations(event.id)]
    return Counter(outcomes), confirmed, stored


@pytest.mark.parametrize("strategy", ["aggregate", "lock_table", "slots", "shards"])
def test_http_race__150_people_40_seats__exactly_40_booked(gunicorn_site, race_service,
                                                             strategy):
    tally, confirmed, stored = http_race(gunicorn_site[0], race_service, strategy)

    assert tally == {"booked": CAPACITY, "full": PEOPLE - CAPACITY}
    assert sorted(stored) == sorted(confirmed)


def test_http_race__unguarded_control__caught_overbooking(gunicorn_site, race_service):
    tally, confirmed, stored = http_race(gunicorn_site[0], race_service, "unguarded")

    assert tally["booked"] > CAPACITY, tally
    assert len(stored) > CAPACITY
