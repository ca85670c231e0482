"""One person at a time through ``make serve``: the CPU a booking, a refusal and an order
of four seats cost each process, and how long the confirmation takes to go out.

    python manage.py bench_booking --alone [PEOPLE] [--strategies shards] [--via api|form] [--json]

It starts the door bench's stack (``harness/bench/door.py``: DynamoDB Local behind the
capacity proxy, nginx in front of gunicorn with make serve's workers and threads,
``DEBUG=false``, and ``manage.py booking_worker``), e-mails written as files
(``filemail://``: each confirmation is rendered with its passes' pictures and written
out, the work an SMTP server would be handed). Each process tree's CPU is read from
``/proc`` before and after each phase; people come one after another, each from a
loopback address of their own. The web tier's CPU is also shown as its parts, gunicorn and
nginx:

- ``booking``: ``--people`` people book one seat each; after each answer the run waits for
  that person's confirmation file, so the worker's sending falls in the phase too (its
  delay, from the answer to the file, is reported);
- ``order_of_4``: the same, each booking four seats (an event with a ticket type, by the API);
- ``refusal``: ``--people`` people ask for a seat on a full event by the API and are told
  "full" (a full event's page shows no form).

Every process also does some work while idle (the worker looks at the outbox every
``BOOKING_OUTBOX_INTERVAL``, gunicorn's workers beat, the JVM collects): measured alone
for a few seconds first, and shown beside each phase as ``idle`` (already inside the
phase's figure, not subtracted). A few people of each kind go through first, unmeasured,
so every process has loaded what it needs.
"""
import json
import os
import statistics
import tempfile
import time
import uuid
from pathlib import Path

from harness.serving import ProductionSite

from . import door as door_bench
from .drop import DropConfig

WARM_UP = 25  # people of each kind before measuring (every gunicorn worker warm)
IDLE_SECONDS = 5.0
MAIL_PATIENCE = 30.0


def tree_cpu(root: int) -> float:
    """CPU seconds so far of ``root`` and every process below it (with their reaped
    children's)."""
    table = {}
    for entry in os.listdir("/proc"):
        if entry.isdigit() and (found := door_bench._stat(int(entry))):
            table[int(entry)] = found
    total, frontier, seen = 0.0, [root], {root}
    while frontier:
        pid = frontier.pop()
        if pid in table:
            total += table[pid][2] + table[pid][3]
        for child, (_, parent, _, _) in table.items():
            if parent == pid and child not in seen:
                seen.add(child)
                frontier.append(child)
    return total


class Stack:
    """The processes measured: their roots' pids by name."""

    def __init__(self, **roots: int):
        self.roots = roots

    def cpu(self) -> dict:
        """Each root's tree; the web tier's also as its two parts (``gunicorn``, ``nginx``:
        ``door.tier_cpu``)."""
        found = {name: tree_cpu(pid) for name, pid in self.roots.items()}
        if "web" in self.roots:
            tier = door_bench.tier_cpu(self.roots["web"])
            found["gunicorn"], found["nginx"] = tier["gunicorn"], tier["nginx"]
        return found


def api_order(seats: int):
    """An API booking of ``seats`` seats of type ``day`` (the door bench's person, with
    tickets): "booked", "full" or what else it was told."""
    def person(door, index, arrival):
        body = json.dumps({"name": f"Fan {index}", "email": door_bench.email_of(index),
                           "tickets": {"day": seats}})
        status, _, text = door.call(door_bench.person_address(index), "POST",
                                    f"/api/v1/events/{door.event_id}/registrations/", body,
                                    {"Content-Type": "application/json",
                                     "Idempotency-Key": uuid.uuid4().hex})
        outcome = ("booked" if status == 201 else "full"
                   if status == 409 and door_bench._problem_slug(text) == "event-full"
                   else str(status))
        return {"outcome": outcome, "answered_at": time.monotonic()}
    return person


def mails(maildir: Path) -> int:
    """Bytes written so far: Django's file backend may append a message to a file it wrote
    in the same second (its name is the second and the backend's ``id``)."""
    return sum(entry.stat().st_size for entry in os.scandir(maildir))


def phase(stack, door, person, first: int, count: int, maildir: Path | None) -> dict:
    """``count`` people one after another (indexes from ``first``): outcomes, CPU ms a
    person by process, and (``maildir``) the confirmation's delay after each answer."""
    outcomes, delays = {}, []
    before, started = stack.cpu(), time.monotonic()
    for index in range(first, first + count):
        sent = mails(maildir) if maildir else 0
        answer = person(door, index, time.monotonic())
        outcomes[answer["outcome"]] = outcomes.get(answer["outcome"], 0) + 1
        if maildir is not None and answer["outcome"] == "booked":
            while mails(maildir) == sent:
                if time.monotonic() - answer["answered_at"] > MAIL_PATIENCE:
                    raise RuntimeError("no confirmation written: is the worker running?")
                time.sleep(0.002)
            delays.append(time.monotonic() - answer["answered_at"])
    after, seconds = stack.cpu(), time.monotonic() - started
    row = {"people": count, "outcomes": outcomes, "seconds": round(seconds, 2),
           "cpu_ms_per_person": {name: round((after[name] - before[name]) * 1000 / count, 2)
                                 for name in after}}
    if delays:
        row["confirmation_delay_s"] = {
            "p50": round(statistics.median(delays), 3),
            "p90": round(statistics.quantiles(delays, n=10)[-1], 3) if len(delays) > 1
            else round(delays[0], 3), "max": round(max(delays), 3)}
    return row


def idle(stack) -> dict:
    """CPU ms a second of each process doing nothing asked of it."""
    before = stack.cpu()
    time.sleep(IDLE_SECONDS)
    after = stack.cpu()
    return {name: round((after[name] - before[name]) * 1000 / IDLE_SECONDS, 2) for name in after}


def run(people: int, strategy: str, via: str, workers: int, threads: int) -> dict:
    from localdynamo import process as store_process

    config = DropConfig()
    server = store_process.start("--capacity", config.capacity_spec)
    try:
        with tempfile.TemporaryDirectory(prefix="alone-") as workdir:
            maildir = Path(workdir) / "mail"
            maildir.mkdir()
            site = ProductionSite(server.url, workdir=Path(workdir), threads=threads,
                                  WEB_CONCURRENCY=str(workers), GUNICORN_LOG_LEVEL="warning",
                                  EMAIL_URL=f"filemail:///{maildir}")
            site.start(pages=True)
            worker = None
            try:
                def event(name, capacity, *more):
                    out = site.manage_all([["create_event", "--organizer", "alone", "--name",
                                            name, "--capacity", str(capacity), "--strategy",
                                            strategy, *more, "--id-only"]])
                    return out.strip().splitlines()[-1]

                site.manage("create_organizer", "alone")
                total = people + WARM_UP
                plain, full = event("One seat", total), event("Full", 0)
                orders = event("Fours", 4 * total, "--ticket-type", "day",
                               "--max-per-order", "4")
                worker = door_bench._start_worker(site, workdir, strategy)
                stack = Stack(web=site.process.pid, store=server.process.pid,
                              worker=worker.pid)
                single = door_bench.PEOPLE[via]
                kinds = {"booking": (plain, single, maildir, 0),
                         "order_of_4": (orders, api_order(4), maildir, 10**6),
                         # A full event's page has no form: refused by the API either way.
                         "refusal": (full, door_bench.api_person, None, 2 * 10**6)}
                for name, (event_id, person, mail, offset) in kinds.items():
                    door = door_bench.Door(site.port, event_id, patience=30.0)
                    phase(stack, door, person, offset + 5 * 10**5, WARM_UP, mail)
                rows = {"idle_cpu_ms_per_s": idle(stack)}
                for name, (event_id, person, mail, offset) in kinds.items():
                    door = door_bench.Door(site.port, event_id, patience=30.0)
                    rows[name] = phase(stack, door, person, offset, people, mail)
            except RuntimeError as failed:
                log = Path(workdir) / "worker.log"
                raise RuntimeError(f"{failed}\n{log.read_text()[-3000:] if log.exists() else ''}")
            finally:
                if worker is not None:
                    worker.terminate()
                    worker.wait(timeout=30)
                site.stop()
    finally:
        server.stop()
    return {"strategy": strategy, "via": via, "workers": workers, "threads": threads,
            "capacity_spec": config.capacity_spec, **rows}


def text(result: dict) -> str:
    lines = [f"One person at a time through make serve ({result['strategy']}, "
             f"--via {result['via']}, {result['workers']} gunicorn workers x "
             f"{result['threads']} threads; {result['capacity_spec']})",
             f"idle, CPU ms a second: " + ", ".join(
                 f"{k} {v}" for k, v in result["idle_cpu_ms_per_s"].items())]
    for name in ("booking", "order_of_4", "refusal"):
        row = result[name]
        cpu = ", ".join(f"{k} {v}" for k, v in row["cpu_ms_per_person"].items())
        delay = row.get("confirmation_delay_s")
        lines.append(f"{name:<11} {row['people']} people {row['outcomes']}: CPU ms each: {cpu}"
                     + (f"; confirmation written after p50 {delay['p50']} s, p90 "
                        f"{delay['p90']} s, max {delay['max']} s" if delay else ""))
    return "\n".join(lines)
