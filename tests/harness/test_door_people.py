"""The door's people read their answers as a careful client would: "booked" only for a
201 whose body says confirmed (or the booking page that says so), "full" only for the
event-full problem or the refusal page, and anything else asked again. A door that says
201 for a request still waiting is caught, not counted as a booking."""
import json
import os
import time

from harness.bench import door as door_module
from harness.bench.door import Door, api_person, form_person, summarize


class Answer:
    def __init__(self, headers=None):
        self.headers = _Headers(headers or {})


class _Headers(dict):
    def get_all(self, name):
        value = self.get(name)
        return [value] if value else []


class ScriptedDoor(Door):
    """Answers each call from a script of (status, headers, text), recording the calls."""

    def __init__(self, script):
        super().__init__(port=0, event_id="e1", patience=5.0)
        self.script, self.calls = list(script), []

    def call(self, address, method, path, body=None, headers=None):
        self.calls.append((method, path, headers or {}))
        status, answer_headers, text = self.script.pop(0)
        return status, Answer(answer_headers), text


def quick(monkeypatch):
    monkeypatch.setattr(door_module.time, "sleep", lambda seconds: None)


def test_api_person__pending_then_confirmed__booked_after_asking_again(monkeypatch):
    quick(monkeypatch)
    door = ScriptedDoor([
        (202, {"Retry-After": "1"}, json.dumps({"status": "pending"})),
        (201, {}, json.dumps({"status": "confirmed"}))])
    answer = api_person(door, 7, time.monotonic())
    assert answer["outcome"] == "booked" and answer["asked"] == 2
    keys = {headers["Idempotency-Key"] for _, _, headers in door.calls}
    assert len(keys) == 1  # asked again with the same key


def test_api_person__created_for_a_request_still_waiting__caught_as_its_own_answer(monkeypatch):
    # The control: a door that answers 201 while the request only waits for its decision.
    quick(monkeypatch)
    door = ScriptedDoor([(201, {}, json.dumps({"status": "pending"}))])
    assert api_person(door, 7, time.monotonic())["outcome"] == "201 pending"


def test_api_person__full_only_from_the_event_full_problem(monkeypatch):
    quick(monkeypatch)
    full = json.dumps({"type": "https://example.test/problems/event-full"})
    door = ScriptedDoor([(429, {"Retry-After": "1"}, "{}"), (409, {}, full)])
    assert api_person(door, 7, time.monotonic())["outcome"] == "full"


PAGE = ('<form><input name="csrfmiddlewaretoken" value="c"><input name="token" value="t">'
        '</form>')


def test_form_person__follows_the_booking_page_until_decided(monkeypatch):
    quick(monkeypatch)
    door = ScriptedDoor([
        (200, {"Set-Cookie": "csrftoken=c; Path=/"}, PAGE),
        (303, {"Location": "/events/e1/booked/abc/"}, ""),
        (200, {"Refresh": "2"}, "<title>Received: Drop</title>"),
        (200, {}, "<title>No seat: Drop</title>")])
    answer = form_person(door, 3, time.monotonic())
    assert answer["outcome"] == "full"
    assert [call[0] for call in door.calls] == ["GET", "POST", "GET", "GET"]


def test_form_person__booked_page_is_booked(monkeypatch):
    quick(monkeypatch)
    door = ScriptedDoor([
        (200, {"Set-Cookie": "csrftoken=c; Path=/"}, PAGE),
        (303, {"Location": "/events/e1/booked/abc/"}, ""),
        (200, {}, "<title>Booked: Drop</title>")])
    assert form_person(door, 3, time.monotonic())["outcome"] == "booked"


def test_summarize__told_against_stored():
    from harness.bench.drop import DropConfig

    config = DropConfig(people=3, seats=1, seconds=1, scale=1, probes=0)
    answers = [{"outcome": o, "email": f"fan{i}@drop.example", "answered_at": 1.0,
                "seconds": 0.5, "asked": 1, "statuses": {"201": 1}}
               for i, o in enumerate(["booked", "booked", "full"])]
    cpu = {"gunicorn": 0.0, "nginx": 0.0, "gunicorn_workers": 1, "nginx_processes": 1}
    probe = {"per_person": {}, "outcomes": {}}
    row = summarize(config, "streams", "api", answers, 0.0, 2.0, {"tables": {}}, "p-",
                    probe, probe, ["fan0@drop.example", "fan2@drop.example"], cpu, cpu,
                    0.1, 3)
    # fan1 was told "booked" and holds nothing; fan2 holds a seat it was told was taken.
    assert row["told_booked_not_confirmed"] == 1 and row["confirmed_not_told"] == 1
    assert row["overbooked"] == 1


def test_access_log__slowest_requests_named_by_page(tmp_path):
    from harness.bench.door import access_log

    log = tmp_path / "access.log"
    log.write_text(
        '127.1.1.1 "GET /events/0123456789abcdef0123456789abcdef/ HTTP/1.0" 200 0.020\n'
        '127.1.1.2 "POST /events/0123456789abcdef0123456789abcdef/ HTTP/1.0" 303 2.500\n'
        '127.1.1.2 "GET /events/0123456789abcdef0123456789abcdef/booked/'
        'eyJlIjoiMDEyMyJ9:1tAbCd:XyZ0123456789abcdefgh/ HTTP/1.0" 200 0.300\n')
    longest, addresses, slowest = access_log(log)
    assert longest == 2.5 and addresses == 2
    assert slowest == [["POST /events/<id>/ 303", 2.5], ["GET /events/<id>/booked/<id>/ 200", 0.3],
                       ["GET /events/<id>/ 200", 0.02]]


def test_impatient_person__asks_again_within_a_second_whatever_retry_after_says(monkeypatch):
    slept = []
    monkeypatch.setattr(door_module.time, "sleep", slept.append)
    door = ScriptedDoor([
        (503, {"Retry-After": "30"}, ""),
        (202, {"Retry-After": "5"}, json.dumps({"status": "pending"})),
        (201, {}, json.dumps({"status": "confirmed"}))])
    door.client = door_module.CLIENTS["impatient"]
    answer = api_person(door, 7, time.monotonic())
    assert answer["outcome"] == "booked" and answer["asked"] == 3
    assert len(slept) == 2 and all(0.5 <= s <= 1.0 for s in slept)  # not 30, not 5
    assert len({headers["Idempotency-Key"] for _, _, headers in door.calls}) == 1


def test_polite_person__waits_out_retry_after(monkeypatch):
    # The control: the polite client's manners, which the impatient one must not have.
    slept = []
    monkeypatch.setattr(door_module.time, "sleep", slept.append)
    door = ScriptedDoor([(503, {"Retry-After": "30"}, ""),
                         (201, {}, json.dumps({"status": "confirmed"}))])
    assert api_person(door, 7, time.monotonic())["outcome"] == "booked"
    assert slept == [30]


def test_impatient_person__gives_up_on_a_request_after_ten_seconds_same_key_again():
    # A stack whose answer never comes: the impatient client's socket gives up after
    # IMPATIENT_TIMEOUT, and it asks again with the same key.
    import socket
    import threading

    listener = socket.socket()
    listener.bind(("127.0.0.1", 0))
    listener.listen(8)
    held, stop = [], threading.Event()

    def accept():
        listener.settimeout(0.2)
        while not stop.is_set():
            try:
                held.append(listener.accept()[0])  # read nothing, answer nothing
            except OSError:
                pass
    threading.Thread(target=accept, daemon=True).start()
    door = Door(listener.getsockname()[1], "e1", patience=0.5,
                client=door_module.CLIENTS["impatient"])
    assert door.client.request_timeout == door_module.IMPATIENT_TIMEOUT == 10.0
    door.client = type("Quick", (type(door.client),), {"request_timeout": 0.2})()
    try:
        answer = api_person(door, 7, time.monotonic())
    finally:
        stop.set()
        for connection in held:
            connection.close()
        listener.close()
    assert answer["outcome"] == "gave_up:connection" and answer["asked"] >= 1
    assert answer["statuses"] == {"connection": answer["asked"]}


def test_summarize__told_full_holding_a_seat_counted_person_by_person():
    now = time.monotonic()
    answers = [{"outcome": "full", "email": "a@x", "answered_at": now, "seconds": 1.0,
                "asked": 2, "statuses": {"409 event-full": 1, "503": 1}},
               {"outcome": "booked", "email": "b@x", "answered_at": now, "seconds": 0.5,
                "asked": 1, "statuses": {"201": 1}}]
    from harness.bench.drop import DropConfig
    config = DropConfig(people=2, seats=1, seconds=10, scale=1, probes=1)
    empty = {"tables": {}}
    cpu = {"gunicorn": 0.0, "nginx": 0.0, "gunicorn_workers": 1, "nginx_processes": 1}
    row = summarize(config, "shards", "api", answers, now - 2, now, empty, "p-",
                    {"per_person": {}, "outcomes": {}}, {"per_person": {}, "outcomes": {}},
                    ["a@x"], cpu, cpu, 1.0, 2, alone_apart=True)
    assert row["told_full_confirmed"] == 1 and row["confirmed_not_told"] == 1
    assert row["told_booked_not_confirmed"] == 1 and row["reasks"] == 1
    assert row["first_10s"]["people"] == 2 and row["after_10s"]["people"] == 0


class TimingOutDoor(ScriptedDoor):
    """A ``None`` in the script is a request the client gave up on (its timeout)."""

    def call(self, address, method, path, body=None, headers=None):
        if self.script and self.script[0] is None:
            self.script.pop(0)
            self.calls.append((method, path, headers or {}, body))
            raise TimeoutError("timed out")
        self.calls.append((method, path, headers or {}, body))
        status, answer_headers, text = self.script.pop(0)
        return status, Answer(answer_headers), text


def test_impatient_form_person__posts_again_with_the_same_token_after_giving_up(monkeypatch):
    slept = []
    monkeypatch.setattr(door_module.time, "sleep", slept.append)
    door = TimingOutDoor([
        (200, {"Set-Cookie": "csrftoken=c; Path=/"}, PAGE),
        None,  # the POST's answer did not come within the client's timeout
        (303, {"Location": "/events/e1/booked/abc/"}, ""),
        (200, {"Refresh": "3"}, "<title>Received: Drop</title>"),
        (200, {}, "<title>Booked: Drop</title>")])
    door.client = door_module.CLIENTS["impatient"]
    answer = form_person(door, 3, time.monotonic())
    assert answer["outcome"] == "booked"
    posts = [call[3] for call in door.calls if call[0] == "POST"]
    assert len(posts) == 2 and posts[0] == posts[1]  # the same form token, asked again
    assert [call[0] for call in door.calls] == ["GET", "POST", "POST", "GET", "GET"]
    assert all(0.5 <= s <= 1.0 for s in slept)  # not the page's Refresh of 3 s


def test_alone_stack__web_tier_also_read_as_its_gunicorn_and_nginx_parts():
    import subprocess
    import sys

    from harness.bench.alone import Stack

    burn = subprocess.Popen([sys.executable, "-c", "import time\nend = time.process_time() + 0.3\n"
                             "while time.process_time() < end: pass\nimport sys; sys.stdin.read()"],
                            stdin=subprocess.PIPE)
    try:
        stack = Stack(web=os.getpid())
        deadline = time.monotonic() + 30
        while (found := stack.cpu())["gunicorn"] < 0.3 and time.monotonic() < deadline:
            time.sleep(0.05)
        # A python child is counted as gunicorn (the app's processes), none as nginx; the
        # web tree holds both (this process's own CPU too).
        assert found["gunicorn"] >= 0.3 and found["nginx"] == 0.0
        assert found["web"] >= found["gunicorn"]
    finally:
        burn.communicate(b"")
