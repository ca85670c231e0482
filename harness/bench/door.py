"""The ticket drop through the door: ``bench_booking --drop P:S:T --via api|form``.

The service-level drop (``drop.py``) calls the booking service in-process. This one starts
``make serve``'s stack (``harness.serving.ProductionSite``: nginx in front of gunicorn,
``DEBUG=false``, make serve's default workers and threads) and the ``booking_worker``
against a DynamoDB Local of its own behind the capacity proxy, creates the event with
``manage.py create_event --organizer``, and sends people open-loop: person ``i`` arrives at
``i / rate``, as a new client connecting from its own loopback address (127.a.b.c: the
whole 127.0.0.0/8 is loopback on Linux), so nginx's X-Forwarded-For and the app's
per-address limits see each person as a different network.

- ``--via api``: ``POST /api/v1/events/{id}/registrations/`` with an Idempotency-Key; 201
  with ``"status": "confirmed"`` is booked, 409 ``event-full`` full; anything else (a 202
  "pending" of ``streams`` included) is asked again with the same key, after its
  Retry-After, until ``patience``. A 201 for anything but a confirmed seat is counted as
  its own answer ("201 pending"): a door that says "created" for a wait is caught.
- ``--via form``: ``GET`` the event's page (its CSRF cookie and form token), ``POST`` the
  form; 409 is full; a 303 leads to the booking's page ("Booked", or for ``streams``
  "Request received", loaded again after its Refresh until "Booked" or "No seat"); a 202
  "confirming" page is re-checked as its own form does (``checks``), anything else posted
  again with the same token until ``patience``.
- ``streams`` runs with the worker's decider (the only strategy that needs it).
- The store is warmed first, as in the service-level drop (``drop.warm_up``), and the
  event states the drop's arrivals a second (``--expected-rate``: shards' count).

After the drop the store is read: each person told "booked" must hold a confirmed seat
(``told_booked_not_confirmed``) and each drop person holding one must have been told
(``confirmed_not_told``), besides ``overbooked``.

Reported per strategy, as the service-level drop: sold out against the arrival bound,
answers by kind, time to a definite answer, the proxy's throttles and units by table;
and the door's own: requests and units by table per booking and per rejection (``probes``
people one at a time, before and after the drop), CPU seconds per person in gunicorn and
nginx (``/proc/<pid>/stat`` of their processes before and after), requests a second per
gunicorn worker, and the longest request in gunicorn's access log.
"""
import http.client
import json
import os
import random
import re
import subprocess
import sys
import tempfile
import time
import urllib.parse
import uuid
from pathlib import Path

from harness.serving import ROOT, ProductionSite

from .drop import DropConfig, capacity, open_loop, per, stats_quantile, warm_up

CLOCK_TICKS = os.sysconf("SC_CLK_TCK")
# make serve's defaults on this machine (config/gunicorn.conf.py).
DEFAULT_WORKERS = min(2 * (os.cpu_count() or 1) + 1, 9)
DEFAULT_THREADS = 8
# Gunicorn's access log: the forwarded client address, the request and its seconds.
ACCESS_FORMAT = '%({x-forwarded-for}i)s "%(r)s" %(s)s %(L)s'
_TOKEN = re.compile(r'name="token" value="([^"]+)"')
_CSRF = re.compile(r'name="csrfmiddlewaretoken" value="([^"]+)"')
_CHECKS = re.compile(r'name="checks" value="(\d+)"')
REQUEST_TIMEOUT = 15.0
IMPATIENT_TIMEOUT = 10.0  # an impatient client gives up on a request after this


def person_address(index: int) -> str:
    """Person ``index``'s own loopback address: 127.a.b.c, none of a, b, c 0 or 255, never
    127.0.0.1 (the harness's own)."""
    return (f"127.{1 + index // (254 * 254) % 254}.{1 + index // 254 % 254}."
            f"{1 + index % 254}")


# --- The processes' CPU time ------------------------------------------------------------

def _stat(pid: int) -> tuple[str, int, float, float] | None:
    """(name, parent, own CPU seconds, reaped children's CPU seconds) of ``pid``."""
    try:
        text = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return None
    name = text[text.index("(") + 1:text.rindex(")")]
    fields = text[text.rindex(")") + 2:].split()
    own = (int(fields[11]) + int(fields[12])) / CLOCK_TICKS
    children = (int(fields[13]) + int(fields[14])) / CLOCK_TICKS
    return name, int(fields[1]), own, children


def tier_cpu(root_pid: int) -> dict:
    """CPU seconds so far of ``root_pid``'s gunicorn (python) and nginx descendants, with
    the time of children their parents have reaped (a worker restarted by max_requests),
    and how many gunicorn workers are running."""
    table = {}
    for entry in os.listdir("/proc"):
        if entry.isdigit() and (found := _stat(int(entry))):
            table[int(entry)] = found
    below, frontier = set(), [root_pid]
    while frontier:
        parent = frontier.pop()
        for pid, (_, ppid, _, _) in table.items():
            if ppid == parent and pid not in below:
                below.add(pid)
                frontier.append(pid)
    totals = {"gunicorn": 0.0, "nginx": 0.0, "gunicorn_workers": 0, "nginx_processes": 0}
    for pid in below:
        name, ppid, own, children = table[pid]
        kind = "nginx" if name.startswith("nginx") else "gunicorn" if (
            name.startswith("python") or name.startswith("gunicorn")) else None
        if kind is None:
            continue
        totals[kind] += own + children
        totals["nginx_processes"] += kind == "nginx"
        if kind == "gunicorn" and table.get(ppid, ("",))[0] == name:
            totals["gunicorn_workers"] += 1
    return totals


# --- One person ---------------------------------------------------------------------------

class Polite:
    """A careful client: it waits a request out (``REQUEST_TIMEOUT``) and, before asking
    again, the answer's Retry-After when it gave one, else a short jittered backoff; it
    reloads the booking's page after its Refresh."""

    name = "polite"
    request_timeout = REQUEST_TIMEOUT

    def pause(self, asked: int, answer=None) -> None:
        retry_after = answer.headers.get("Retry-After") if answer is not None else None
        if retry_after and retry_after.isdigit():
            time.sleep(int(retry_after))
        else:
            time.sleep(random.uniform(0, min(2.0, 0.05 * 2 ** asked)))

    def refresh(self, answer) -> None:
        refresh = answer.headers.get("Refresh", "") if answer is not None else ""
        time.sleep(int(refresh) if refresh.isdigit() else 1)


class Impatient(Polite):
    """As many real clients behave: asks again within about a second whatever
    Retry-After (or a page's Refresh) says, and gives up on a request after
    ``IMPATIENT_TIMEOUT`` seconds to ask again (the same Idempotency-Key, the same form
    token): the re-asks of a request still in flight."""

    name = "impatient"
    request_timeout = IMPATIENT_TIMEOUT

    def pause(self, asked: int, answer=None) -> None:
        time.sleep(random.uniform(0.5, 1.0))

    def refresh(self, answer) -> None:
        time.sleep(random.uniform(0.5, 1.0))


CLIENTS = {"polite": Polite(), "impatient": Impatient()}


class Door:
    """The stack's address and the event, for the people; ``client`` their manners."""

    def __init__(self, port: int, event_id: str, patience: float, client: Polite = CLIENTS[
            "polite"]):
        self.port, self.event_id, self.patience = port, event_id, patience
        self.client = client

    def connect(self, address: str) -> http.client.HTTPConnection:
        return http.client.HTTPConnection("127.0.0.1", self.port,
                                          timeout=self.client.request_timeout,
                                          source_address=(address, 0))

    def call(self, address, method, path, body=None, headers=None):
        """One request on a new connection from ``address``: (status, headers, text)."""
        connection = self.connect(address)
        try:
            connection.request(method, path, body=body, headers=headers or {})
            answer = connection.getresponse()
            return answer.status, answer, answer.read().decode("utf-8", "replace")
        finally:
            connection.close()


# The page of a full event or quota (booking/templates: "This event is full.", the quota's
# data-full-quota attribute); any other 409 page is another refusal.
_FULL_PAGE = re.compile(r"event is full|data-full-quota", re.I)

def api_person(door: Door, index: int, arrival: float) -> dict:
    """Book by the API; ask again with the same Idempotency-Key on anything not definite
    (a 202 "pending" included: ``streams`` answers it until its decider has decided)."""
    address, key, asked, statuses = person_address(index), uuid.uuid4().hex, 0, {}
    body = json.dumps({"name": f"Fan {index}", "email": email_of(index)})
    headers = {"Content-Type": "application/json", "Idempotency-Key": key}
    while True:
        asked += 1
        answer = None
        try:
            status, answer, text = door.call(address, "POST",
                                             f"/api/v1/events/{door.event_id}/registrations/",
                                             body, headers)
        except (OSError, http.client.HTTPException):
            status, text = "connection", ""
        if status == 409:  # only "event-full" is "full"; another 409 is its own answer
            status = f"409 {_problem_slug(text)}"
        if status == 201 and _json_field(text, "status") != "confirmed":
            status = f"201 {_json_field(text, 'status')}"  # "created" for what is not a seat
        statuses[str(status)] = statuses.get(str(status), 0) + 1
        if status == 201:
            return _answer("booked", arrival, asked, statuses)
        if str(status).startswith("201 "):
            return _answer(str(status), arrival, asked, statuses)
        if status == "409 event-full":
            return _answer("full", arrival, asked, statuses)
        if str(status).startswith("409 "):  # another refusal, told as its own answer
            return _answer(str(status), arrival, asked, statuses)
        if time.monotonic() - arrival >= door.patience:
            return _answer(f"gave_up:{status}", arrival, asked, statuses)
        door.client.pause(asked, answer)


def form_person(door: Door, index: int, arrival: float) -> dict:
    """Book by the form: its page, the POST, the 202 page's re-checks with the same token."""
    address, asked, statuses = person_address(index), 0, {}
    path = f"/events/{door.event_id}/"
    fields = cookie = None
    while True:
        asked += 1
        try:
            if fields is None:  # the page: its CSRF cookie and the form's token
                status, answer, page = door.call(address, "GET", path)
                statuses[f"GET {status}"] = statuses.get(f"GET {status}", 0) + 1
                token, csrf = _TOKEN.search(page), _CSRF.search(page)
                if status != 200 or not token or not csrf:
                    fields = None
                    raise LookupError(status)
                cookie = "; ".join(c.split(";", 1)[0] for c in answer.headers.get_all(
                    "Set-Cookie") or [] if c.startswith("csrftoken="))
                fields = {"csrfmiddlewaretoken": csrf[1], "token": token[1],
                          "name": f"Fan {index}", "email": email_of(index)}
            status, answer, page = door.call(
                address, "POST", path, urllib.parse.urlencode(fields),
                {"Content-Type": "application/x-www-form-urlencoded", "Cookie": cookie,
                 "Referer": f"http://127.0.0.1:{door.port}{path}"})
        except LookupError as failed:  # the page did not come (counted as "GET n")
            status, page = f"page {failed.args[0]}", ""
        except (OSError, http.client.HTTPException):
            status, page = "connection", ""
        if not str(status).startswith("page "):
            statuses[str(status)] = statuses.get(str(status), 0) + 1
        if status == 303:  # the booking's page: booked, or (streams) waiting for its turn
            return _booking_page(door, address, answer.headers["Location"], arrival, asked,
                                 statuses)
        if status == 409:  # the full page, or another refusal told as its own answer
            full = _FULL_PAGE.search(page)
            return _answer("full" if full else "409 other", arrival, asked, statuses)
        if status == 202 and (checks := _CHECKS.search(page)) and fields is not None:
            fields = {**fields, "checks": checks[1]}  # the page's own "check again"
        if time.monotonic() - arrival >= door.patience:
            return _answer(f"gave_up:{status}", arrival, asked, statuses)
        door.client.pause(asked, answer if status in (202, 429, 503) else None)


# The booking's page (templates/booking/): booked, waiting for the decision, or refused.
_PAGE_TITLE = re.compile(r"<title>\s*(Booked|Received|No seat):", re.I)


def _booking_page(door, address, location, arrival, asked, statuses) -> dict:
    """Follow the 303 to the booking's page; while it says "Request received" (a
    ``streams`` request before its decision: the page refreshes itself), load it again
    after its Refresh seconds, until booked or refused or out of patience."""
    path = urllib.parse.urlsplit(location).path
    while True:
        try:
            status, answer, page = door.call(address, "GET", path)
        except (OSError, http.client.HTTPException):
            status, answer, page = "connection", None, ""
        title = _PAGE_TITLE.search(page) if status == 200 else None
        kind = title[1].lower() if title else str(status)
        statuses[f"page {kind}"] = statuses.get(f"page {kind}", 0) + 1
        if kind == "booked":
            return _answer("booked", arrival, asked, statuses)
        if kind == "no seat":
            return _answer("full", arrival, asked, statuses)
        if time.monotonic() - arrival >= door.patience:
            return _answer(f"gave_up:page {kind}", arrival, asked, statuses)
        door.client.refresh(answer)


def email_of(index: int) -> str:
    return f"fan{index}@drop.example"


def _json_field(text: str, name: str) -> str:
    try:
        return str(json.loads(text).get(name, "?"))
    except (ValueError, AttributeError):
        return "?"


def _problem_slug(text: str) -> str:
    """The last part of a problem's ``type`` ("event-full"), or "?" for another body."""
    try:
        return str(json.loads(text).get("type", "?")).rstrip("/").rsplit("/", 1)[-1]
    except (ValueError, AttributeError):
        return "?"


def _answer(outcome, arrival, asked, statuses) -> dict:
    answered = time.monotonic()
    return {"outcome": outcome, "answered_at": answered, "seconds": answered - arrival,
            "asked": asked, "statuses": statuses}


PEOPLE = {"api": api_person, "form": form_person}


# --- The run ------------------------------------------------------------------------------

def by_table(report: dict, prefix: str) -> dict:
    """Requests, write and read units by table (prefix removed) in ``report``."""
    return {name.removeprefix(prefix): {k: t.get(k, 0) for k in (
        "requests", "write_units", "read_units", "throttles")}
            for name, t in report["tables"].items() if name.startswith(prefix)}


def difference(after: dict, before: dict, count: int) -> dict:
    """Per-person requests and units by table between two ``by_table`` readings."""
    out = {}
    for table, now in after.items():
        then = before.get(table, {})
        row = {k: per(now[k] - then.get(k, 0), count) for k in ("requests", "write_units",
                                                                 "read_units")}
        if any(row.values()):
            out[table] = row
    return out


def run_door(config: DropConfig, via: str, *, workers: int = DEFAULT_WORKERS,
             threads: int = DEFAULT_THREADS, client: str = "polite", cold: bool = False,
             step=lambda: None) -> dict:
    """Every strategy's drop through ``make serve``'s stack, one after another, on one
    store behind the capacity proxy. ``cold``: nothing warms the store or the stack before
    the drop but the stack's own start (it starts just before it); the people booked alone
    are measured after the drop, on an event of their own."""
    from localdynamo import process as store_process

    server = store_process.start("--capacity", config.capacity_spec)
    try:
        rows = []
        for strategy in config.strategies:
            rows.append(door_one(config, server, strategy, via, workers, threads,
                                 client=CLIENTS[client], cold=cold))
            step()
    finally:
        server.stop()
    return {"drop": rows, "drop_config": {
        **vars(config), "strategies": list(config.strategies), "via": via,
        "client": client, "start": "cold" if cold else "warm",
        "workers": workers, "gunicorn_threads": threads, "capacity_spec": config.capacity_spec,
        "people_scaled": config.scaled_people, "seats_scaled": config.scaled_seats}}


def door_one(config: DropConfig, server, strategy: str, via: str, workers: int,
             threads: int, *, client: Polite = CLIENTS["polite"], cold: bool = False) -> dict:
    with tempfile.TemporaryDirectory(prefix="door-") as workdir:
        site = ProductionSite(
            server.url, workdir=Path(workdir), threads=threads,
            WEB_CONCURRENCY=str(workers), GUNICORN_LOG_LEVEL="warning",
            GUNICORN_CMD_ARGS=f"--access-logformat '{ACCESS_FORMAT}'",
            BOOKING_WORKER_INTERVAL="0.5")
        prefix = site.table_prefix
        rate = ["--expected-rate", str(config.expected_rate)] if config.expected_rate else []

        def event(name, seats):
            return ["create_event", "--organizer", "drop", "--name", name, "--capacity",
                    str(seats), "--strategy", strategy, *rate, "--id-only"]

        worker = None
        if cold:  # the tables and events first, then the stack, then at once the drop
            site.prepare(pages=True)
            made = site.manage_all([["create_organizer", "drop"],
                                    event(f"Drop {strategy}", config.scaled_seats),
                                    event(f"Alone {strategy}", config.probes)])
            *_, event_id, alone_id = made.strip().splitlines()
            # The worker starts with the stack (it warms while the web workers do); the
            # site's front door opens once they are warm (scripts/serve.sh), then the drop.
            worker = _start_worker(site, workdir, strategy)
            try:
                site.start(pages=True, prepared=True)
            except BaseException:
                worker.kill()
                raise
        else:
            site.start(pages=True)
            event_id = alone_id = site.manage_all([["create_organizer", "drop"], event(
                f"Drop {strategy}", config.scaled_seats + config.probes)]).strip(
                ).splitlines()[-1]
        try:
            if not cold:
                warm_store(config, server, prefix, strategy)
                worker = _start_worker(site, workdir, strategy)
            door = Door(site.port, event_id, config.patience, client)
            person = PEOPLE[via]
            if not cold:
                alone = probe(server, prefix, door, person, config.probes, "Early", 10**6)
            capacity(server, reset=True)
            cpu_before, started = tier_cpu(site.process.pid), time.monotonic()
            answers, _, ended = open_loop(config, lambda index, arrival: {
                **person(door, index, arrival), "email": email_of(index)})
            cpu_after, during = tier_cpu(site.process.pid), capacity(server)
            rejected = probe(server, prefix, door, person, config.probes, "Late", 2 * 10**6)
            if cold:
                alone = probe(server, prefix, Door(site.port, alone_id, config.patience,
                                                   client), person, config.probes, "Early",
                              10**6)
            stored = stored_emails(server, prefix, event_id)
            longest, addresses, slowest = access_log(Path(workdir) / "access.log")
        finally:
            if worker is not None:
                worker.terminate()
                try:
                    worker.wait(timeout=30)
                except subprocess.TimeoutExpired:  # a loaded machine: its figures are taken
                    worker.kill()
                    worker.wait()
            site.stop()
    return summarize(config, strategy, via, answers, started, ended, during, prefix, alone,
                     rejected, stored, cpu_before, cpu_after, longest, addresses, slowest,
                     alone_apart=cold)


def warm_store(config: DropConfig, server, prefix: str, strategy: str) -> None:
    """The service-level drop's warm-up (``drop.warm_up``) on the site's tables, from this
    process: the store runs warm before the drop, as it does in the service-level drop."""
    from booking import wiring
    from harness.controls import control_service, local_store

    store = local_store(server.url, table_prefix=prefix, max_pool_connections=16)
    with wiring.use_service(control_service(store=store)) as service:
        warm_up(config, service, strategy)


def stored_emails(server, prefix: str, event_id: str) -> list[str]:
    """The e-mails holding a confirmed seat once the drop is over, read from this process
    on the site's tables."""
    from booking import wiring
    from harness.controls import control_service, local_store

    store = local_store(server.url, table_prefix=prefix)
    with wiring.use_service(control_service(store=store)) as service:
        return sorted(r.email for r in service.iter_registrations(event_id) if r.is_confirmed)


def _start_worker(site, workdir, strategy):
    """``booking_worker`` in the site's environment, which sends what the web processes
    left and, for ``streams``, decides the requests in arrival order."""
    log = (Path(workdir) / "worker.log").open("w")
    decider = [] if strategy == "streams" else ["--no-decider"]
    return subprocess.Popen([sys.executable, "manage.py", "booking_worker", *decider],
                            cwd=ROOT, env=site.env, stdout=log, stderr=subprocess.STDOUT)


def probe(server, prefix, door, person, count, label, offset) -> dict:
    """``count`` people one at a time (indexes from ``offset``): their outcomes, and the
    requests and units by table each cost."""
    before = by_table(capacity(server), prefix)
    outcomes = {}
    for index in range(offset, offset + count):
        answer = person(door, index, time.monotonic())
        outcomes[answer["outcome"]] = outcomes.get(answer["outcome"], 0) + 1
    after = by_table(capacity(server), prefix)
    return {"outcomes": outcomes, "per_person": difference(after, before, count)}


def access_log(path: Path) -> tuple[float | None, int, list]:
    """The longest request time in gunicorn's access log, the distinct client addresses it
    saw (X-Forwarded-For), and its ``SLOWEST`` slowest requests (method, path with ids
    and tokens shown as ``<id>``, status, seconds): which pages took the time."""
    longest, addresses, timed = None, set(), []
    if not path.exists():
        return None, 0, []
    for line in path.read_text(errors="replace").splitlines():
        parts = line.rsplit(" ", 2)
        try:
            seconds = float(parts[-1])
        except (ValueError, IndexError):
            continue
        longest = seconds if longest is None else max(longest, seconds)
        addresses.add(line.split(" ", 1)[0])
        request = line.split('"')[1] if line.count('"') >= 2 else "?"
        timed.append((seconds, f"{_shape(request)} {parts[-2]}"))
    slowest = [[what, round(seconds, 2)] for seconds, what in sorted(timed, reverse=True)[:SLOWEST]]
    return longest, len(addresses), slowest


SLOWEST = 5
_ID = re.compile(r"/[0-9a-f]{32}/|/[A-Za-z0-9_:.=-]{20,}/")


def _shape(request: str) -> str:
    """``POST /events/<id>/``: a request line without its protocol, ids and tokens."""
    method, _, rest = request.partition(" ")
    path = rest.rsplit(" ", 1)[0].split("?", 1)[0]
    while _ID.search(path):
        path = _ID.sub("/<id>/", path, count=1)
    return f"{method} {path}"


FIRST_SECONDS = 10.0  # "the first seconds" of a drop, against the rest


def arrived_in(answers, started, first: bool) -> list:
    """The answers of people who arrived within the drop's first ``FIRST_SECONDS``
    (``first``), or after them."""
    return [a for a in answers
            if (a["answered_at"] - a["seconds"] - started < FIRST_SECONDS) == first]


def answer_times(answers) -> dict:
    """People, those answered definitely, and the time to that answer (p50, p99, mean)."""
    definite = sorted(a["seconds"] for a in answers if a["outcome"] in ("booked", "full"))
    return {"people": len(answers), "definite": len(definite),
            "p50_s": stats_quantile(definite, 0.5), "p99_s": stats_quantile(definite, 0.99),
            "mean_s": round(sum(definite) / len(definite), 3) if definite else None}


# Written after the answer (the e-mail, its history and webhooks, the decider's position and
# a rejected request's answers): not a cost of asking.
AFTER_ANSWER = frozenset({"outbox", "request_history", "webhook_deliveries", "answers",
                          "stream_checkpoints"})


def reask_write_units(tables: dict, alone: dict, rejected: dict, booked: int,
                      full: int) -> dict:
    """Write units by table beyond what the drop's first asks cost: the drop's units less
    ``booked`` bookings and ``full`` rejections at their cost alone (measured one at a
    time): what lost races, retries and re-asks of the same request wrote. Only the
    tables a booking's answer writes: the e-mail's and the decider's (``AFTER_ANSWER``)
    are written after it, on their own clock, so they are left out."""
    out = {}
    for table, row in tables.items():
        if table in AFTER_ANSWER:
            continue
        first = (booked * alone.get(table, {}).get("write_units", 0)
                 + full * rejected.get(table, {}).get("write_units", 0))
        extra = row["write_units"] - (first or 0)
        if round(extra, 1):
            out[table] = round(extra, 1)
    return out


def summarize(config, strategy, via, answers, started, ended, report, prefix, alone,
              rejected, stored, cpu_before, cpu_after, longest, addresses,
              slowest=(), alone_apart: bool = False) -> dict:
    outcomes, statuses = {}, {}
    for answer in answers:
        outcomes[answer["outcome"]] = outcomes.get(answer["outcome"], 0) + 1
        for status, n in answer["statuses"].items():
            statuses[status] = statuses.get(status, 0) + n
    booked, full = outcomes.get("booked", 0), outcomes.get("full", 0)
    sold_at = sorted(a["answered_at"] - started for a in answers if a["outcome"] == "booked")
    definite = sorted(a["seconds"] for a in answers if a["outcome"] in ("booked", "full"))
    tables = by_table(report, prefix)
    seconds = max(ended - started, 1e-9)
    # What each person was told against what the store holds once the drop is over.
    confirmed = set(stored)
    told_booked = {a["email"] for a in answers if a["outcome"] == "booked"}
    told_full = {a["email"] for a in answers if a["outcome"] == "full"}
    bound = config.seconds * config.scaled_seats / config.scaled_people
    drop_people = {a["email"] for a in answers}
    requests = sum(statuses.values())
    workers = max(cpu_after["gunicorn_workers"], 1)
    people = max(len(answers), 1)
    return {
        "strategy": strategy, "via": via, "people": len(answers), "seats": config.scaled_seats,
        "sold_out_s": round(sold_at[-1], 2) if booked >= config.scaled_seats else None,
        "arrival_bound_s": round(config.seconds * config.scaled_seats / config.scaled_people, 2),
        "booked": booked, "full": full,
        "not_definite": len(answers) - booked - full,
        "other": {k: v for k, v in outcomes.items() if k not in ("booked", "full")},
        "answer_p50_s": stats_quantile(definite, 0.5),
        "answer_p99_s": stats_quantile(definite, 0.99),
        "answer_max_s": round(definite[-1], 2) if definite else None,
        "statuses": statuses, "asked_per_person": per(requests, len(answers)),
        "proxy_throttles": sum(t["throttles"] for t in tables.values()),
        "write_units_by_table": {t: round(v["write_units"], 1) for t, v in tables.items()},
        "read_units_by_table": {t: round(v["read_units"], 1) for t, v in tables.items()},
        "requests_by_table": {t: v["requests"] for t, v in tables.items()},
        "per_booking_alone": alone["per_person"], "probe_bookings": alone["outcomes"],
        "per_rejection": rejected["per_person"], "probe_rejections": rejected["outcomes"],
        "gunicorn_cpu_s_per_person": round(
            (cpu_after["gunicorn"] - cpu_before["gunicorn"]) / people, 4),
        "nginx_cpu_s_per_person": round((cpu_after["nginx"] - cpu_before["nginx"]) / people, 4),
        "gunicorn_workers": cpu_after["gunicorn_workers"],
        "nginx_processes": cpu_after["nginx_processes"],
        "requests_per_second_per_worker": round(requests / seconds / workers, 2),
        "longest_request_s": longest, "slowest_requests": list(slowest),
        "client_addresses_seen": addresses,
        "overbooked": max(0, len(confirmed) - config.scaled_seats - (
            0 if alone_apart else config.probes)),
        "confirmed_stored": len(confirmed),
        "told_booked_not_confirmed": len(told_booked - confirmed),
        "confirmed_not_told": len((confirmed & drop_people) - told_booked),
        # Person by person: told "full" and holding a seat all the same.
        "told_full_confirmed": len(told_full & confirmed),
        "sold_out_x_bound": round(sold_at[-1] / bound, 2) if (
            booked >= config.scaled_seats and bound) else None,
        "first_10s": answer_times(arrived_in(answers, started, True)),
        "after_10s": answer_times(arrived_in(answers, started, False)),
        "reasks": requests - len(answers),
        "reask_write_units_by_table": reask_write_units(
            tables, alone["per_person"], rejected["per_person"], booked, full),
        "drop_seconds": round(seconds, 2),
        "timeline": [round(t, 3) for t in sold_at],
    }


def text(results: dict) -> str:
    config = results["drop_config"]
    lines = [f"Ticket drop through the door (--via {config['via']}): {config['people_scaled']} "
             f"people for {config['seats_scaled']} seats within {config['seconds']:g} s "
             f"(--drop {config['people']}:{config['seats']}:{config['seconds']:g} --scale "
             f"{config['scale']:g}), --client {config.get('client', 'polite')}, started "
             f"{config.get('start', 'warm')}, capacity {config['capacity_spec']}, patience "
             f"{config['patience']:g} s, {config['workers']} gunicorn workers x "
             f"{config['gunicorn_threads']} threads"]
    columns = ("strategy", "sold_out_s", "arrival_bound_s", "sold_out_x_bound", "booked",
               "full", "not_definite",
               "answer_p50_s", "answer_p99_s", "answer_max_s", "proxy_throttles",
               "asked_per_person", "gunicorn_cpu_s_per_person", "nginx_cpu_s_per_person",
               "requests_per_second_per_worker", "longest_request_s", "client_addresses_seen",
               "overbooked", "told_booked_not_confirmed", "confirmed_not_told",
               "told_full_confirmed", "reasks")
    for row in results["drop"]:
        lines.append("  ".join(f"{c}={json.dumps(row[c])}" for c in columns))
        for name in ("first_10s", "after_10s", "statuses", "slowest_requests",
                     "write_units_by_table", "reask_write_units_by_table", "requests_by_table",
                     "per_booking_alone", "per_rejection"):
            lines.append(f"    {name}: {json.dumps(row[name])}")
    return "\n".join(lines) + "\n"
