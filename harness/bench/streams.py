"""The streams strategy's benchmark case: acceptance, then decisions made in order.

Clients book distinct people into a hot event as for every strategy (each accepted
request is one provisional write). The stream decider runs as in production, in its own
OS process (spawned; stopped by a signal, never by a shared ``multiprocessing.Event``).
It is started before the clients book and killed with SIGKILL while they are still
booking: once it has reported its first decision, or at the latest once
``KILL_AT_ACCEPTED`` of the attempts are accepted. A new decider process then resumes
from the checkpoints, as after a crash (it reads again the records decided after the
last checkpoint, which their condition refuses to decide twice); once the clients have
finished, it decides until nothing is pending and is stopped with SIGTERM. The row says
how many deciders were killed, whether a kill came before the last client finished and
how long after the clients started, how many decisions the killed one had reported and
how long until its successor was ready (``decider_kills``, ``decider_killed_mid_run``,
``decider_killed_after_seconds``, ``decided_before_kill``, ``decider_down_seconds``).

Each decider process appends JSON lines to its own journal, each flushed at once, each
with the process's DynamoDB and Streams requests so far: one when it is ready, one per
request as it is sent, one per decision and one when SIGTERM stopped it. A SIGKILLed
decider can lose only what comes after its last line: the report of a decision whose
transaction committed just before the kill (the decision itself is stored, so it is
counted, a second decision would still show as a second e-mail row, and the row counts
such decisions: ``decisions_unreported``).

Reported beside acceptance: time to decision (from the booking's arrival to its
decision), decisions per second (over the span of the stored decisions, the time from
the kill to the successor's first decision included; ``successor_decisions_per_second``
leaves it out), DynamoDB and Streams requests per decision, and the checks:
overbooked, decided twice (a registration with two decision e-mails, or decided twice by
the deciders), decisions changed (a decision reported that the stored status
contradicts).
"""
import json
import math
import os
import signal
import tempfile
import threading
import time
from collections import Counter
from datetime import datetime
from multiprocessing import get_context

from . import sizes, stats

DECIDER_INTERVAL = 0.05
DRAIN_SECONDS = 300.0
READY_SECONDS = 120.0  # a spawned decider sets up Django before its first pass
KILL_AT_ACCEPTED = 0.25  # the latest SIGKILL: once this share of the attempts is accepted
WATCH_SECONDS = 0.005  # between looks at the decider's journal and the accepted count


def hot_event(config, clients, book_everyone) -> dict:
    """``book_everyone(event_id)`` runs the clients; returns the streams row."""
    from booking.wiring import get_booking_service

    service = get_booking_service()
    strategy = service.strategy("streams")
    event = service.create_event(name="Bench streams", capacity=config.capacity,
                                 strategy="streams")
    with tempfile.TemporaryDirectory(prefix="bench-deciders-") as directory:
        deciders = DeciderProcesses(_decider_env(service.store), directory)
        try:
            runs = _book_and_kill(deciders, strategy, event.id, config.attempts, book_everyone)
            _drain(deciders, strategy, event)
        finally:
            deciders.stop()
        journals = deciders.journals()
    registrations = list(strategy.registrations(event.id))
    cost = sizes.booking_wcu(strategy, event.id)
    row = stats.summarize("streams", clients, config.capacity, runs,
                          sum(r.status == "confirmed" for r in registrations), cost)
    row.update(_kill_figures(deciders.kills, runs, journals))
    row.update(_decision_figures(event, strategy, journals))
    return row


def _decider_env(store) -> dict:
    """The bench's store for a spawned decider: the same endpoint and table prefix."""
    from booking import wiring

    return {"DYNAMODB_TABLE_PREFIX": store.table_prefix,
            "DYNAMODB_ENDPOINT_URL": wiring.client_config().endpoint_url}


def _book_and_kill(deciders, strategy, event_id, attempts, book_everyone) -> list[dict]:
    """Start a decider, run the clients, and SIGKILL the decider (starting another)
    while they book."""
    deciders.start()
    deciders.wait_ready()
    booked = threading.Event()
    latest = max(1, math.ceil(attempts * KILL_AT_ACCEPTED))
    killer = threading.Thread(target=_kill_mid_run,
                              args=(deciders, strategy, event_id, latest, booked))
    killer.start()
    try:
        return book_everyone(event_id)
    finally:
        booked.set()
        killer.join()


def _kill_mid_run(deciders, strategy, event_id, latest, booked) -> None:
    """Kill and replace the decider once it has decided something, or once ``latest``
    requests are accepted; not at all if the clients finish first."""
    while not booked.is_set():
        if deciders.has_decided() or strategy.registrations_table.count(
                key_condition="event_id = :e", values={":e": event_id}) >= latest:
            deciders.kill_and_replace()
            return
        booked.wait(WATCH_SECONDS)


def _drain(deciders, strategy, event) -> None:
    """Wait until the decider has decided everything (or died, or ran out of time)."""
    deadline = time.monotonic() + DRAIN_SECONDS
    while (strategy.availability(event).pending and deciders.alive()
           and time.monotonic() < deadline):
        time.sleep(0.1)


class DeciderProcesses:
    """The stream decider in its own OS process, one at a time, each with its journal in
    ``directory``; ``kills`` holds the times of the SIGKILLs that ended a live one."""

    def __init__(self, env: dict, directory: str):
        self.env, self.directory = env, directory
        self.context = get_context("spawn")
        self.paths: list[str] = []
        self.process = None
        self.kills: list[float] = []

    def start(self) -> None:
        self.paths.append(os.path.join(self.directory, f"decider-{len(self.paths)}.jsonl"))
        self.process = self.context.Process(target=decide_until_terminated,
                                            args=(self.env, self.paths[-1]), daemon=True)
        self.process.start()

    def wait_ready(self) -> None:
        """Wait for the current decider's first line: Django is set up, it starts passing."""
        deadline = time.monotonic() + READY_SECONDS
        while not any(entry.get("ready") for entry in read_journal(self.paths[-1])):
            if not self.process.is_alive() or time.monotonic() > deadline:
                raise RuntimeError("The benchmark's decider process did not start "
                                   f"(exit code {self.process.exitcode}).")
            time.sleep(0.05)

    def kill_and_replace(self) -> None:
        killed_at = time.time()
        self.process.kill()
        self.process.join()
        if self.process.exitcode == -signal.SIGKILL:
            self.kills.append(killed_at)
        self.start()

    def has_decided(self) -> bool:
        return any("decided" in entry for entry in read_journal(self.paths[-1]))

    def alive(self) -> bool:
        return self.process is not None and self.process.is_alive()

    def stop(self) -> None:
        """SIGTERM: the decider stops after its current page."""
        if self.process is None:
            return
        self.process.terminate()
        self.process.join(timeout=60)
        if self.process.is_alive():
            self.process.kill()
            self.process.join()

    def journals(self) -> list[list[dict]]:
        return [read_journal(path) for path in self.paths]


def read_journal(path: str) -> list[dict]:
    try:
        with open(path) as journal:
            lines = journal.read().splitlines()
    except FileNotFoundError:
        return []
    return [json.loads(line) for line in lines if line.endswith("}")]  # not a cut line


def decide_until_terminated(env: dict, journal_path: str) -> None:
    """Entry point of a decider process: decide the stream until SIGTERM (or SIGKILL),
    journaling to ``journal_path``. Django is set up from ``env`` first."""
    os.environ.update(env)
    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "config.settings")
    import django

    django.setup()
    from booking import wiring
    from booking.strategies.streams.decider import StreamDecider
    from harness.controls import control_service

    service = control_service()
    wiring.install(service)
    stop = threading.Event()
    signal.signal(signal.SIGTERM, lambda *_: stop.set())
    with open(journal_path, "a") as file:
        journal = Journal(file, service.store)
        decider = StreamDecider(service.strategy("streams"), on_decided=journal.decided)
        journal.write(ready=True)
        decider.run(stop, interval=DECIDER_INTERVAL)
        journal.write(stopped=True)


class Journal:
    """A decider process's JSON lines, each flushed at once, each with the process's
    requests so far; a line per request as botocore sends it (``before-send``: its own
    retries included), so a SIGKILL loses none."""

    def __init__(self, file, store):
        self.file = file
        self.requests = {"dynamodb": 0, "streams": 0}
        store.client.meta.events.register("before-send.dynamodb", self._counter("dynamodb"))
        store.streams_client.meta.events.register("before-send.dynamodbstreams",
                                                  self._counter("streams"))

    def _counter(self, key):
        def count(**kwargs):
            self.requests[key] += 1
            self.write()  # returns None: botocore sends the request
        return count

    def decided(self, outcome, registration) -> None:
        self.write(decided=registration.registration_id, outcome=outcome)

    def write(self, **entry) -> None:
        self.file.write(json.dumps({**entry, **self.requests, "at": time.time()}) + "\n")
        self.file.flush()


def _kill_figures(kills: list[float], runs: list[dict], journals: list[list[dict]]) -> dict:
    """How many deciders were killed, whether a kill came while the clients booked, and
    the last decider's own decision rate (from its first decision to its last).
    Decider ``n`` was killed at ``kills[n]`` and replaced by decider ``n + 1``."""
    started = min(r["started"] for r in runs)
    finished = max(r["finished"] for r in runs)
    ready = [next((e["at"] for e in entries if e.get("ready")), None) for entries in journals]
    replaced = bool(kills) and len(ready) > 1 and ready[1] is not None
    last = [e["at"] for e in journals[-1] if "decided" in e]  # the last decider's decisions
    span = last[-1] - last[0] if len(last) > 1 else None
    return {
        "decider_processes": len(journals),
        "decider_kills": len(kills),
        "decider_killed_mid_run": any(started <= at < finished for at in kills),
        "decider_killed_after_seconds": round(kills[0] - started, 3) if kills else None,
        "decided_before_kill": sum("decided" in e for e in journals[0]) if kills else None,
        "decider_down_seconds": round(ready[1] - kills[0], 2) if replaced else None,
        "successor_decisions_per_second": round(len(last) / span, 1) if span else None,
    }


def _decision_figures(event, strategy, journals) -> dict:
    from booking.exactly_once.outbox import Outbox

    items = list(strategy.registrations_table.query(key_condition="event_id = :e",
                                                    values={":e": event.id}))
    stored = {i["registration_id"]: i.get("status") for i in items}
    decided = [i for i in items if i.get("status") in ("confirmed", "rejected")]
    waits = [i["decided_at"] - datetime.fromisoformat(i["registered_at"]).timestamp()
             for i in decided]
    times = [i["decided_at"] for i in decided]
    # Each decision owes one e-mail: two rows for one registration is a second decision.
    mails = Counter(row["registration_id"] for row in Outbox(strategy.store).pending()
                    if row["event_id"] == event.id)
    made, requests = _reported(journals)
    times_decided = Counter(rid for rid, _ in made)
    twice = len({rid for rid, n in mails.items() if n > 1}
                | {rid for rid, n in times_decided.items() if n > 1})
    changed = sum(1 for rid, outcome in made if stored.get(rid) != outcome)
    span = max(times) - min(times) if len(times) > 1 else None
    count = len(decided)
    return {
        "decisions": count,
        "confirmed": sum(i["status"] == "confirmed" for i in decided),
        "rejected": sum(i["status"] == "rejected" for i in decided),
        "still_pending": len(items) - count,
        "decision_p50_ms": stats.ms(stats.percentile(waits, 0.50)),
        "decision_p99_ms": stats.ms(stats.percentile(waits, 0.99)),
        "decisions_per_second": round(count / span, 1) if span else None,
        "decider_requests_per_decision": round(requests / count, 3) if count else None,
        "decided_twice": twice,
        "decisions_changed": changed,
        # Stored decisions no decider reported: committed just before a SIGKILL.
        "decisions_unreported": len({i["registration_id"] for i in decided}
                                    - set(times_decided)),
    }


def _reported(journals: list[list[dict]]) -> tuple[list[tuple[str, str]], int]:
    """The decisions the deciders reported, and their requests (DynamoDB and Streams):
    each journal's last line holds its process's totals."""
    made = [(e["decided"], e["outcome"]) for entries in journals for e in entries
            if "decided" in e]
    requests = sum(entries[-1]["dynamodb"] + entries[-1]["streams"]
                   for entries in journals if entries)
    return made, requests


def add_acceptance_ratios(hot: list[dict], streams_rows: list[dict]) -> None:
    """``answers_ratio_to_lock_table``: answered attempts per second (accepted for
    streams; booked or refused as full for lock_table), same client count, same run."""
    lock = {r["clients"]: r for r in hot if r["strategy"] == "lock_table" and r["supported"]}
    for row in streams_rows:
        base = lock.get(row["clients"])
        rate = row["attempts"] / row["seconds"] if row.get("seconds") else None
        base_rate = base["attempts"] / base["seconds"] if base and base["seconds"] else None
        row["answers_per_second"] = round(rate, 2) if rate else None
        row["answers_ratio_to_lock_table"] = (round(rate / base_rate, 2)
                                              if rate and base_rate else None)
