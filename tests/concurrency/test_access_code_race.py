"""An access code under a real race through the JSON API: gunicorn (3 worker processes x
16 threads) on the embedded DynamoDB, 48 people booking at once with one code that allows
3 orders, on every guarded strategy. Exactly 3 orders hold the code and every other answer
is ``access-code-used-up`` with nothing stored; a cancellation lets exactly one more in.
The careless control (the uses checked by a read, then counted without a condition) runs
through the same harness and is caught over the limit."""
import json
import os
import subprocess
import sys
import threading
import time
import uuid
from collections import Counter
from pathlib import Path

import pytest

from booking.dynamo.provision import ensure_tables
from booking.wiring import reset_services
from harness.controls import local_store
from tests import conformance
from tests.browser.conftest import free_port, wait_for_port
from tests.concurrency.test_http_signup_race import request
from tests.conftest import use_test_service

pytestmark = pytest.mark.concurrency

ROOT = Path(__file__).resolve().parents[2]
WORKERS, THREADS = 3, 16
PEOPLE = WORKERS * THREADS
MAX_USES = 3
GUARDED = tuple(s for s in conformance.ALL if s != "unguarded")
USED_UP = "/access-code-used-up"
ASK_AGAIN_FOR = 60.0  # seconds a careful client asks again while the answer is pending


def serve(local_server, workdir, wsgi: str):
    env = {**os.environ, "DJANGO_SETTINGS_MODULE": "config.settings",
           "DYNAMODB_ENDPOINT_URL": local_server.url,
           "DYNAMODB_TABLE_PREFIX": f"c{uuid.uuid4().hex[:8]}-",
           "DATABASE_URL": f"sqlite:///{workdir / 'db.sqlite3'}",
           "EMAIL_URL": "dummymail://",
           # Everyone books from 127.0.0.1: the per-address limits are not under test.
           "BOOKING_SIGNUP_RATE": "off", "BOOKING_SIGNUP_EMAIL_RATE": "off",
           "BOOKING_ACCESS_CODE_RATE": "off"}
    port, log = free_port(), workdir / "gunicorn.log"
    with log.open("w") as output:
        process = subprocess.Popen(
            [sys.executable, "-m", "gunicorn", wsgi, "--bind", f"127.0.0.1:{port}",
             "--workers", str(WORKERS), "--threads", str(THREADS), "--backlog", "512",
             "--timeout", "120"], cwd=ROOT, env=env, stdout=output, stderr=subprocess.STDOUT)
    wait_for_port(port, process, log)
    return process, port, env


@pytest.fixture(scope="module")
def site(local_server, tmp_path_factory):
    process, port, env = serve(local_server, tmp_path_factory.mktemp("codes"),
                               "tests.concurrency.control_wsgi:application")
    yield port, env
    process.terminate()
    process.wait(timeout=20)


@pytest.fixture(scope="module")
def careless_site(local_server, tmp_path_factory):
    process, port, env = serve(local_server, tmp_path_factory.mktemp("careless"),
                               "tests.concurrency.careless_codes_wsgi:application")
    yield port, env
    process.terminate()
    process.wait(timeout=20)


def service_for(env):
    store = local_store(env["DYNAMODB_ENDPOINT_URL"], table_prefix=env["DYNAMODB_TABLE_PREFIX"])
    ensure_tables(store)
    return use_test_service(store)


@pytest.fixture
def race_service(site):
    yield service_for(site[1])
    reset_services()


@pytest.fixture
def careless_service(careless_site):
    yield service_for(careless_site[1])
    reset_services()


def ask(port, event_id, body: dict):
    """One careful integrator's booking: the same body and Idempotency-Key again while the
    answer is "pending" (202 without a registration: contention, the deadline), "busy" (429) or
    "unavailable" (503), after its Retry-After, up to ``ASK_AGAIN_FOR``; a 202 in line for
    ``streams``' decision is an answer. Returns (response, text)."""
    headers = {"Content-Type": "application/json", "Idempotency-Key": uuid.uuid4().hex}
    give_up = time.monotonic() + ASK_AGAIN_FOR
    while True:
        response, text = request(port, "POST", f"/api/v1/events/{event_id}/registrations/",
                                 json.dumps(body), headers)
        # A registration in line names itself (its secret); an unknown outcome does not.
        pending = response.status == 202 and "secret" not in json.loads(text)
        if not (pending or response.status in (429, 503)) or time.monotonic() > give_up:
            return response, text
        time.sleep(min(float(response.getheader("Retry-After") or 1), 2.0))


def book(port, event_id, email, code):
    response, text = ask(port, event_id, {"name": email.split("@")[0], "email": email,
                                          "access_code": code})
    if response.status in (201, 202):  # 202: in line, decided later (streams)
        return "booked", json.loads(text)
    if response.status == 409 and json.loads(text)["type"].endswith(USED_UP):
        return "used up", None
    return f"{response.status}: {text[:200]}", None


def race(port, event_id, prefix, code="Speaker-7Q2K"):
    """``PEOPLE`` people book at once with ``code``: the tally and the booked bodies."""
    barrier = threading.Barrier(PEOPLE, timeout=60)
    outcomes = [None] * PEOPLE

    def run(n):
        barrier.wait()
        outcomes[n] = book(port, event_id, f"{prefix}{n}@example.com", code)

    threads = [threading.Thread(target=run, args=(n,)) for n in range(PEOPLE)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    return Counter(o for o, _ in outcomes), [body for o, body in outcomes if o == "booked"]


def holders(service, event_id):
    return sorted(r.email for r in service.registrations(event_id)
                  if r.access_code == "SPEAKER-7Q2K" and r.status != "rejected")


def coded_event(service, strategy):
    event = service.create_event(name=f"Code race {strategy}", capacity=100, strategy=strategy)
    service.create_access_codes(event.id, codes=["SPEAKER-7Q2K"], max_uses=MAX_USES)
    return event


@pytest.mark.parametrize("strategy", GUARDED)
def test_code_race__max_uses_3__exactly_3_hold_it_then_a_cancel_lets_one_more_in(
        site, race_service, strategy):
    port, service = site[0], race_service
    event = coded_event(service, strategy)

    tally, booked = race(port, event.id, "first")

    assert tally == {"booked": MAX_USES, "used up": PEOPLE - MAX_USES}, tally
    assert holders(service, event.id) == sorted(b["email"] for b in booked)
    assert service.registrations(event.id).__len__() == MAX_USES  # nothing else stored
    assert service.access_codes(event.id)[0].uses == MAX_USES

    service.cancel(event.id, email=booked[0]["email"])
    tally, again = race(port, event.id, "second")

    assert tally == {"booked": 1, "used up": PEOPLE - 1}, tally
    assert len(holders(service, event.id)) == MAX_USES
    assert service.access_codes(event.id)[0].uses == MAX_USES
    assert [v for v in service.audit(event.id) if v.invariant == "access_code_uses"] == []


def test_code_race__careless_control__caught_over_the_limit(careless_site, careless_service):
    port, service = careless_site[0], careless_service
    event = coded_event(service, "lock_table")

    tally, _ = race(port, event.id, "first")

    assert tally["booked"] > MAX_USES, tally
    assert len(holders(service, event.id)) > MAX_USES
    assert [v.invariant for v in service.audit(event.id)] != []


def race_people(port, event_id, emails, code=None):
    """``emails`` book at once (with ``code``): the tally of answers."""
    barrier = threading.Barrier(len(emails), timeout=60)
    outcomes = [None] * len(emails)

    def run(n):
        barrier.wait()
        response, text = ask(port, event_id, {"name": "P", "email": emails[n],
                                              **({"access_code": code} if code else {})})
        kind = json.loads(text).get("type", "") if response.status >= 400 else ""
        outcomes[n] = ("booked" if response.status in (201, 202) else
                       "full" if kind.endswith("/event-full") else f"{response.status}: {text[:200]}")

    threads = [threading.Thread(target=run, args=(n,)) for n in range(len(emails))]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    return Counter(outcomes)


def decided(service, event):
    if event.strategy == "streams":
        from booking.strategies.streams.decider import StreamDecider

        StreamDecider(service.strategy("streams")).run_pass()
    return sorted(r.email for r in service.registrations(event.id) if r.is_confirmed)


@pytest.mark.parametrize("strategy", GUARDED)
def test_reserved_race__10_seats_4_for_a_code__40_others_get_6_then_6_holders_get_4(
        site, race_service, strategy):
    """40 people without the code race for 10 seats, 4 of them reserved for the code: 6
    are booked. Then 6 holders of the code race: 4 get the reserved seats, 2 are told
    full. After ``valid_until`` the seats still reserved sell to others."""

    from django.utils import timezone
    from datetime import timedelta

    port, service = site[0], race_service
    event = service.create_event(name=f"Reserved race {strategy}", capacity=10,
                                 strategy=strategy)
    service.create_access_codes(event.id, codes=["SPEAKER-7Q2K"], max_uses=10,
                                valid_until=timezone.now() + timedelta(seconds=20),
                                reserved_seats=4)

    public = race_people(port, event.id, [f"public{n}@example.com" for n in range(40)])
    after_public = decided(service, event)
    holders = race_people(port, event.id, [f"holder{n}@example.com" for n in range(6)],
                          code="speaker-7q2k")
    everyone = decided(service, event)

    assert len(after_public) == 6, public
    if strategy != "streams":  # streams accepts everyone, and decides: 6 confirmed
        assert public == {"booked": 6, "full": 34}, public
    assert holders == {"booked": 4, "full": 2}, holders
    assert len(everyone) == 10 and sum(e.startswith("holder") for e in everyone) == 4

    # A second event: the reservation lapses unused and its seats sell to others.
    lapsing = service.create_event(name=f"Lapsing {strategy}", capacity=10, strategy=strategy)
    service.create_access_codes(lapsing.id, codes=["SPEAKER-7Q2K"], max_uses=10,
                                valid_until=timezone.now() + timedelta(seconds=3),
                                reserved_seats=4)
    race_people(port, lapsing.id, [f"early{n}@example.com" for n in range(10)])
    assert len(decided(service, lapsing)) == 6
    time.sleep(3.5)
    if strategy == "streams":  # its decider counts held seats until the worker frees them
        service.access_code_pass()
    race_people(port, lapsing.id, [f"late{n}@example.com" for n in range(10)])
    final = decided(service, lapsing)
    assert len(final) == 10 and sum(e.startswith("late") for e in final) == 4
