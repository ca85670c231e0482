"""The door under real races, on DynamoDB Local.

- One pass scanned at three gates at once through the API (gunicorn: 3 worker processes
  x 16 threads; clients: 3 processes, one per gate, x 16 threads): exactly one
  ``admitted``, every other answer ``already_admitted`` naming the first gate, and a nonce
  sent again answers its first answer.
- A room of 10 and 40 passes entering at once: 10 admitted, 30 ``room_full``; after 3
  exits exactly 3 more get in.
- A list's counts (counter items in each scan's write): 40 passes entering at once, each
  scan sent twice, count 40 admitted and 40 inside; a read-then-count control loses
  some.
- Two offline scanners' queues holding the same pass, uploaded at once and then again:
  one admission, one conflict, nothing more on the re-upload.

Each race runs again against a read-then-write scanner (``harness/checkin_controls.py``),
which the same checks catch.
"""
import json
import multiprocessing
import os
import subprocess
import sys
import threading
import time
import uuid
from collections import Counter
from concurrent.futures import ThreadPoolExecutor
from datetime import datetime, timedelta, timezone
from pathlib import Path

import pytest

from booking.dynamo.provision import ensure_tables
from booking.wiring import get_booking_service, reset_services
from harness.checkin_controls import CARELESS, careless_counts, careless_door
from harness.controls import local_store
from tests.browser.conftest import free_port, wait_for_port
from tests.concurrency.checkin_workers import gate_scans, post_scan
from tests.conftest import use_test_service

pytestmark = pytest.mark.concurrency

ROOT = Path(__file__).resolve().parents[2]
WORKERS, THREADS, GATES = 3, 16, 3
ORGANIZER = "door-org"
SETUP = f"""
import json
from io import StringIO
from django.contrib.auth.models import User
from django.core.management import call_command
User.objects.create_user("door", is_staff=True)
call_command("create_organizer", {ORGANIZER!r}, "--member", "door:checkin", stdout=StringIO())
out = StringIO()
call_command("create_api_token", "--organizer", {ORGANIZER!r}, "--user", "door",
             "--name", "scanner", "--scope", "write", stdout=out)
print(json.dumps(out.getvalue().strip()))
"""


# --- the API race ------------------------------------------------------------------------
@pytest.fixture(scope="module")
def door_site(local_server, tmp_path_factory):
    """gunicorn serving ``checkin_wsgi`` on its own tables; a checkin member's write token (a scan is a write)."""
    from django.conf import settings

    workdir = tmp_path_factory.mktemp("door")
    env = {**os.environ, "DJANGO_SETTINGS_MODULE": "config.settings",
           "DYNAMODB_ENDPOINT_URL": local_server.url,
           "DYNAMODB_TABLE_PREFIX": f"d{uuid.uuid4().hex[:8]}-",
           "DATABASE_URL": f"sqlite:///{workdir / 'db.sqlite3'}",
           "EMAIL_URL": "dummymail://", "API_TOKEN_RATE": "off",
           "SECRET_KEY": settings.SECRET_KEY}
    for command in (["migrate", "--noinput"], ["create_tables"]):
        subprocess.run([sys.executable, "manage.py", *command], cwd=ROOT, env=env,
                       check=True, capture_output=True, timeout=300)
    made = subprocess.run([sys.executable, "manage.py", "shell", "-c", SETUP], cwd=ROOT,
                          env=env, check=True, capture_output=True, text=True, timeout=180)
    token = json.loads(made.stdout.strip().splitlines()[-1])
    port, log = free_port(), workdir / "gunicorn.log"
    with log.open("w") as output:
        process = subprocess.Popen(
            [sys.executable, "-m", "gunicorn", "tests.concurrency.checkin_wsgi:application",
             "--bind", f"127.0.0.1:{port}", "--workers", str(WORKERS),
             "--threads", str(THREADS), "--backlog", "512", "--timeout", "120"],
            cwd=ROOT, env=env, stdout=output, stderr=subprocess.STDOUT)
    wait_for_port(port, process, log)
    yield port, env, token
    process.terminate()
    process.wait(timeout=20)


@pytest.fixture
def site_service(door_site):
    _, env, _ = door_site
    store = local_store(env["DYNAMODB_ENDPOINT_URL"], table_prefix=env["DYNAMODB_TABLE_PREFIX"])
    ensure_tables(store)
    yield use_test_service(store)
    reset_services()


def race_one_pass(port, token, list_id, code) -> list[dict]:
    start_at = time.time() + 4.0  # every client process is up by then
    context = multiprocessing.get_context("spawn")
    with context.Pool(GATES) as pool:
        runs = [pool.apply_async(gate_scans, (port, token, list_id, code, f"gate-{g}",
                                              THREADS, start_at)) for g in range(GATES)]
        return [answer for run in runs for answer in run.get(timeout=240)]


def pass_race_violations(answers) -> list[str]:
    found = []
    tally = Counter(a["status"] for a in answers)
    admitted = [a for a in answers if a["status"] == "admitted"]
    if len(admitted) != 1:
        found.append(f"{len(admitted)} admitted: {dict(tally)}")
    if tally["already_admitted"] != len(answers) - 1:
        found.append(f"answers: {dict(tally)}")
    if admitted:
        first_gate = admitted[0]["sent_gate"]
        wrong = [a for a in answers if a["status"] == "already_admitted"
                 and a["first_gate"] != first_gate]
        if wrong:
            found.append(f"{len(wrong)} already_admitted name another gate than {first_gate}")
    return found


def test_one_pass_at_three_gates_through_the_api__admitted_once__control_caught(
        door_site, site_service):
    port, _, token = door_site
    service = site_service
    event = service.create_event(name="Door race", capacity=10, organizer=ORGANIZER)
    person = service.book(event.id, name="Ann Lee", email="ann@example.com")
    code = service.passes(person)[0].code
    product = service.create_checkin_list(event.id, name="Main door")
    careless = service.create_checkin_list(event.id, name=f"{CARELESS} door")

    answers = race_one_pass(port, token, product.id, code)

    assert len(answers) == GATES * THREADS
    assert pass_race_violations(answers) == []
    for first in (next(a for a in answers if a["status"] == "admitted"), answers[-1]):
        again = post_scan(port, token, product.id, {"code": code, "nonce": first["sent_nonce"],
                                                    "gate": first["sent_gate"]})
        assert {k: again[k] for k in ("status", "first_gate", "gate", "nonce")} == {
            k: first[k] for k in ("status", "first_gate", "gate", "nonce")}
    counted = service.checkin_list(product.id)
    assert (counted.admitted, counted.inside) == (1, 1)
    assert len(service.scan_log(product.id)) == GATES * THREADS
    assert service.audit(event.id) == []

    caught = race_one_pass(port, token, careless.id, code)
    assert sum(a["status"] == "admitted" for a in caught) > 1, Counter(
        a["status"] for a in caught)
    assert pass_race_violations(caught) != []


# --- the count race ------------------------------------------------------------------------
def counted_race(service, name: str) -> tuple:
    event = service.create_event(name="Count race", capacity=60)
    hall = service.create_checkin_list(event.id, name=name)
    codes = [service.passes(service.book(event.id, name=f"P {i}",
                                         email=f"p{i}@example.com"))[0].code
             for i in range(40)]
    scans = [(code, uuid.uuid4().hex) for code in codes]
    barrier = threading.Barrier(len(scans) * 2, timeout=60)

    def one(scan):
        barrier.wait()
        return service.scan(hall.id, scan[0], nonce=scan[1], gate="west").status

    with ThreadPoolExecutor(len(scans) * 2) as pool:  # each scan sent twice at once
        answers = list(pool.map(one, scans * 2))
    return event, hall, answers


def test_counts_under_forty_entries_at_once_each_sent_twice__control_caught(server_store):
    service = get_booking_service()
    event, hall, answers = counted_race(service, "Main hall")
    assert answers == ["admitted"] * 80  # a repeat answers its first answer
    counted = service.checkin_list(hall.id)
    assert (counted.admitted, counted.inside, counted.conflicts) == (40, 40, 0)
    assert service.audit(event.id) == []

    careless_counts(service, race_delay_ms=50)
    event, careless, _ = counted_race(service, f"{CARELESS} hall")
    caught = service.checkin_list(careless.id)
    assert caught.admitted < 40, caught
    assert any(v.invariant == "checkin_counts" for v in service.audit(event.id))


# --- the occupancy race --------------------------------------------------------------------
def enter_all(service, list_id, codes, *, direction="entry") -> list[str]:
    barrier = threading.Barrier(len(codes), timeout=60)

    def one(code):
        barrier.wait()
        return service.scan(list_id, code, direction=direction, nonce=uuid.uuid4().hex,
                            gate="east").status

    with ThreadPoolExecutor(len(codes)) as pool:
        return list(pool.map(one, codes))


def occupancy(service, careless: bool):
    event = service.create_event(name="Room race", capacity=60)
    name = f"{CARELESS} room" if careless else "Workshop room"
    room = service.create_checkin_list(event.id, name=name, occupancy_limit=10,
                                       allow_reentry=True)
    codes = [service.passes(service.book(event.id, name=f"P {i}",
                                         email=f"p{i}@example.com"))[0].code
             for i in range(40)]
    return event, room, codes


def test_a_room_of_ten_and_forty_passes__ten_in_then_three_for_three_exits__control_caught(
        server_store):
    service = get_booking_service()
    event, room, codes = occupancy(service, careless=False)

    first = enter_all(service, room.id, codes)

    assert Counter(first) == {"admitted": 10, "room_full": 30}
    inside = [c for c, s in zip(codes, first) if s == "admitted"]
    waiting = [c for c, s in zip(codes, first) if s == "room_full"]
    assert enter_all(service, room.id, inside[:3], direction="exit") == ["exited"] * 3
    second = enter_all(service, room.id, waiting)
    assert Counter(second) == {"admitted": 3, "room_full": 27}
    counted = service.checkin_list(room.id)
    assert counted.inside == 10
    assert service.audit(event.id) == []

    careless_door(service, race_delay_ms=50)
    _, careless_room, careless_codes = occupancy(service, careless=True)
    caught = enter_all(service, careless_room.id, careless_codes)
    assert caught.count("admitted") > 10, Counter(caught)


# --- offline batches ---------------------------------------------------------------------------
def upload_together(service, list_id, batches) -> list[list]:
    barrier = threading.Barrier(len(batches), timeout=60)

    def one(batch):
        barrier.wait()
        return service.scan_batch(list_id, batch)

    with ThreadPoolExecutor(len(batches)) as pool:
        return list(pool.map(one, batches))


def test_two_offline_queues_with_one_pass__one_admission_one_conflict__reupload_changes_nothing(
        server_store):
    service = get_booking_service()
    event = service.create_event(name="Offline", capacity=10)
    ann = service.passes(service.book(event.id, name="Ann", email="ann@example.com"))[0]
    others = [service.passes(service.book(event.id, name=f"P{i}", email=f"p{i}@example.com"))[0]
              for i in range(4)]
    hall = service.create_checkin_list(event.id, name="Hall")
    now = datetime.now(timezone.utc)

    def queue(gate, minutes, extra):
        scans = [{"code": ann.code, "nonce": uuid.uuid4().hex, "gate": gate,
                  "scanned_at": now - timedelta(minutes=minutes)}]
        return scans + [{"code": p.code, "nonce": uuid.uuid4().hex, "gate": gate,
                         "scanned_at": now - timedelta(minutes=minutes, seconds=i + 1)}
                        for i, p in enumerate(extra)]

    batches = [queue("north", 10, others[:2]), queue("south", 8, others[2:])]
    first = upload_together(service, hall.id, batches)
    ann_answers = sorted((answers[0].status, answers[0].conflict) for answers in first)
    assert ann_answers == [("admitted", False), ("already_admitted", True)]
    assert [r.status for answers in first for r in answers[1:]] == ["admitted"] * 4
    [conflict] = service.checkin_conflicts(hall.id)
    assert conflict.pass_id == ann.pass_id
    assert {conflict.first_gate, conflict.second_gate} == {"north", "south"}
    log = len(service.scan_log(hall.id))

    again = upload_together(service, hall.id, batches)

    assert [[r.status for r in a] for a in again] == [[r.status for r in a] for a in first]
    counted = service.checkin_list(hall.id)
    assert (counted.admitted, counted.conflicts, counted.inside) == (5, 1, 5)
    assert len(service.scan_log(hall.id)) == log
    assert service.audit(event.id) == []


# --- a partial cancellation against a scan of the pass it chose ---------------------------------
def cancel_against_scan(service, trials: int) -> list[tuple[str, str]]:
    """Each trial: an order of two seats, a list; at once, an entry scan of seat 2 (the
    one a cancellation of one seat chooses) and that cancellation, which always succeeds
    (after a lost race it cancels seat 1). (scan answer, pass 2's status after)."""
    from booking.errors import BookingError

    event = service.create_event(name="Cancel race", capacity=2 * trials,
                                 ticket_types={"day": []}, max_per_order=2)
    door = service.create_checkin_list(event.id, name="Door")
    found = []
    for n in range(trials):
        email = f"pair{n}@example.com"
        order = service.book(event.id, name=f"Pair {n}", email=email, tickets={"day": 2})
        second = service.passes(order)[1]
        barrier = threading.Barrier(2, timeout=30)

        def scan():
            barrier.wait()
            return service.scan(door.id, second.code, nonce=uuid.uuid4().hex).status

        def cancel():
            barrier.wait()
            try:
                return service.cancel(event.id, email=email, tickets={"day": 1})
            except BookingError as refused:
                return refused

        with ThreadPoolExecutor(2) as pool:
            scanned, cancelled = pool.submit(scan), pool.submit(cancel)
            status, answer = scanned.result(), cancelled.result()
        kept = service.find_registration(event.id, email=email)
        states = {p.pass_id: p.status for p in service.passes(kept)}
        assert not isinstance(answer, BookingError), answer  # it chose the unused seat
        found.append((status, states[second.pass_id]))
    return found


def scan_between_read_and_write(service) -> tuple[str, str, tuple]:
    """A partial cancellation reads the order's door item (which passes are unused), then
    seat 2 is scanned in, then the cancellation writes: (the scan's answer, seat 2's status
    after, the passes the cancellation says it cancelled)."""
    event = service.create_event(name="Interleaved", capacity=2, ticket_types={"day": []},
                                 max_per_order=2)
    door = service.create_checkin_list(event.id, name="Door")
    order = service.book(event.id, name="Pair", email="pair@example.com", tickets={"day": 2})
    second = service.passes(order)[1]
    reads, scanned = service.checkin.door.order_item, []

    def read_then_scan(registration_id):
        item = reads(registration_id)
        if not scanned:  # the first read: the door lets seat 2 in before the write
            scanned.append(service.scan(door.id, second.code, nonce=uuid.uuid4().hex).status)
        return item

    service.checkin.door.order_item = read_then_scan
    try:
        answer = service.cancel(event.id, email="pair@example.com", tickets={"day": 1})
    finally:
        service.checkin.door.order_item = reads
    kept = service.find_registration(event.id, email="pair@example.com")
    status = {p.pass_id: p.status for p in service.passes(kept)}[second.pass_id]
    return scanned[0], status, answer.cancelled_passes


def test_a_partial_cancellation_never_cancels_a_pass_let_in__control_caught(server_store):
    from harness.checkin_controls import careless_cancellations

    service = get_booking_service()
    outcomes = cancel_against_scan(service, trials=12)  # at once, as it comes
    assert ("admitted", "cancelled") not in outcomes, outcomes

    scanned, status, cancelled = scan_between_read_and_write(service)
    assert (scanned, status) == ("admitted", "valid")
    assert len(cancelled) == 1 and cancelled[0].endswith("-1")  # it chose seat 1 again
    careless_cancellations(service)
    assert scan_between_read_and_write(service)[:2] == ("admitted", "cancelled")
