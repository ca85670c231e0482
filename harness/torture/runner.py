"""Set up a torture run, run its processes, watch, and gather what the checker needs.

The run gets its own embedded DynamoDB (in memory, injecting the configured faults) on a
free port, so it never touches anyone's data. Set-up and the final reads go through the
same faults, with patient retries; the server's control plane is never faulted.
"""
import os
import tempfile
import threading
import time
import uuid
from multiprocessing import get_context

from booking import wiring
from booking.dynamo.provision import ensure_tables
from booking.mail.sender import send_owed
from booking.wiring import get_booking_service, mail_sender
from harness.controls import control_service, local_store
from localdynamo import process as server_process

from . import checker, mailbox
from . import door as door_checks
from .plan import CODE
from .plan import QUESTIONS
from .worker import patiently, run_in_process

START_DELAY_SECONDS = 5.0  # spawned processes set up Django before the common start
WATCH_EVERY_SECONDS = 0.5
PATIENT_ATTEMPTS = 10  # botocore attempts for the run's own set-up and final reads


def run(config) -> dict:
    """Run the configured torture; return the report (history summary, checks, faults)."""
    server = server_process.start(*(["--faults", config.fault_spec()] if config.fault_spec()
                                    else []))
    prefix = f"torture{uuid.uuid4().hex[:8]}-"
    mail_dir = tempfile.mkdtemp(prefix="torture-mail-")
    os.environ[mailbox.MAIL_DIR_ENV] = mail_dir
    try:
        store = local_store(server.url, table_prefix=prefix, max_attempts=PATIENT_ATTEMPTS)
        with wiring.use_service(control_service(
                store=store, race_delay_ms=config.unguarded_race_delay_ms)):
            ensure_tables(store)
            events = _create_events(config)
            door = (door_checks.set_up(get_booking_service(), careless=config.careless_door,
                                       patiently=patiently) if config.door else None)
            watcher = Watcher(events).start()
            deciders = StreamDeciders(_worker_env(config, server.url, prefix), events).start()
            started = time.time()
            try:
                everything = _run_processes(config, server.url, prefix, events, door)
                records = [r for r in everything if r["operation"] != "scan"]
                scans = [r for r in everything if r["operation"] == "scan"]
            finally:
                watcher.stop()
                deciders.stop()
            finished = time.time()
            final = {e["id"]: _final_state(e["id"]) for e in events}
            door_run = None if door is None else {
                "setup": door, "records": scans,
                "final": door_checks.final_state(get_booking_service(), door, patiently)}
            owed = _send_what_is_owed()
            for event in events:  # after the rejections' e-mails, which delete theirs
                final[event["id"]]["answers"] = _answers(event["id"])
        faults = server.fault_counts()
        mails = mailbox.sent_counts(mail_dir)
    finally:
        server.stop()
    found = checker.check(records, events, final, watcher.peaks, mails=mails, owed=owed,
                          door=door_run)
    return {"events": events, "records": records, "final": final, "faults": faults,
            "peaks": watcher.peaks, "seconds": finished - started, "check": found,
            "mails": mails, "owed": owed, "decider_kills": deciders.kills, "door": door_run}


def _send_what_is_owed(passes: int = 10) -> list[str]:
    """The safety net's last pass, after every client stopped; the message ids still owed.

    Every sender has stopped, so a ``started`` send without an outcome belongs to a sender
    that died or gave up: it may be claimed at once.
    """
    sender = mail_sender(stale_seconds=0, email_backend=mailbox.COUNTING_BACKEND)
    for _ in range(passes):
        try:
            send_owed(sender)
            owed = [m["message_id"] for m in sender.outbox.pending()]
        except Exception:  # noqa: BLE001 - an injected fault; pass again
            continue
        if not owed:
            return []
    return patiently(lambda: [m["message_id"] for m in sender.outbox.pending()])


def _create_events(config) -> list[dict]:
    """One plain event and one order event per strategy (every booking is an order)."""
    plain = [_create_event(strategy, capacity=config.capacity) for strategy in config.strategies]
    service = get_booking_service()
    for event in plain:  # its access code: fewer uses than seats, so it runs out
        patiently(lambda: service.create_access_codes(event["id"], codes=[CODE],
                                                      max_uses=config.code_uses))
        event["code"] = {"code": CODE, "max_uses": config.code_uses}
    return plain + [_create_event(strategy, **config.order_event())
                    for strategy in config.strategies]


def _create_event(strategy: str, **shape) -> dict:
    """The event as the checker needs it: every quota's capacity, every type's quotas."""
    service = get_booking_service()
    kind = "orders" if shape.get("quotas") else "plain"
    event = patiently(lambda: service.create_event(
        name=f"Torture {strategy} {kind}", strategy=strategy, **shape))
    event = patiently(lambda: service.set_questions(event.id, QUESTIONS, expected_version=0)
                      if not service.get_event(event.id).questions_version
                      else service.get_event(event.id))
    return {"id": event.id, "strategy": strategy, "capacity": event.capacity,
            "orders": event.offers_orders, "quotas": event.quota_capacities(),
            "ticket_types": {t: list(q) for t, q in event.ticket_types.items()}}


def _worker_env(config, url: str, prefix: str) -> dict:
    return {
        "DYNAMODB_ENDPOINT_URL": url,
        "DYNAMODB_TABLE_PREFIX": prefix,
        # Outcomes are judged from the history; a log line per injected fault is noise.
        "LOG_LEVEL": "CRITICAL",
    }


def _run_processes(config, url: str, prefix: str, events: list[dict],
                   door: dict | None = None) -> list[dict]:
    env, event_ids = _worker_env(config, url, prefix), [e["id"] for e in events]
    order_event_ids = frozenset(e["id"] for e in events if e["orders"])
    shares = _split(config.ops, config.processes * config.threads)
    start_at = time.time() + START_DELAY_SECONDS
    with get_context("spawn").Pool(config.processes) as pool:
        runs = [pool.apply_async(run_in_process, (
            env, config, event_ids, process,
            shares[process * config.threads:(process + 1) * config.threads], start_at,
            order_event_ids, door))
            for process in range(config.processes)]
        return [record for each in runs for record in each.get()]


def _split(total: int, parts: int) -> list[int]:
    return [total // parts + (1 if n < total % parts else 0) for n in range(parts)]


def _answers(event_id: str) -> dict:
    """Every stored answers item of the event: registration id -> (answers, passes)."""
    found = patiently(lambda: get_booking_service().answers_for_event(event_id))
    return {rid: {"answers": dict(a.answers), "pass_answers": [dict(p) for p in a.pass_answers]}
            for rid, a in found.items()}


def _final_state(event_id: str) -> dict:
    """What is stored once every client has finished, read consistently."""
    service = get_booking_service()
    registrations = patiently(lambda: list(service.registrations(event_id)))
    quotas = patiently(lambda: service.availability(event_id).quotas)
    return {
        "registrations": [{"email": r.email, "registration_id": r.registration_id,
                           "request_id": r.request_id, "status": r.status,
                           "tickets": r.tickets, "access_code": r.access_code}
                          for r in registrations],
        "code_uses": {code.code: code.uses
                      for code in patiently(lambda: service.access_codes(event_id))},
        "confirmed": quotas["capacity"].confirmed,
        # Every quota's counter (the capacity's is ``confirmed``), in seats.
        "quotas": {name: quota.confirmed for name, quota in quotas.items()},
        "violations": [f"{v.invariant}: expected {v.expected}, found {v.found}"
                       + (f" ({v.detail})" if v.detail else "")
                       for v in patiently(lambda: service.audit(event_id))],
    }


class Watcher:
    """Reads every event's counts and stored registrations while the run goes on.

    Overbooking can be undone by later cancellations; the final state alone would miss
    it. ``peaks`` holds, per event, the largest capacity count seen (seats counted, and
    seats of the stored orders) and when, and under ``quotas`` the same for every quota;
    for an event with an access code, under ``code_uses`` the most uses and the most
    orders holding it seen at once.
    """

    def __init__(self, events: list[dict]):
        self.events = events
        self.event_ids = [e["id"] for e in events]
        self.peaks = {e["id"]: {"confirmed": 0, "stored": 0, "at": None, "quotas": {
            quota: {"confirmed": 0, "stored": 0, "at": None} for quota in e["quotas"]}}
            for e in events}
        self.samples = 0
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._watch, daemon=True)

    def start(self) -> "Watcher":
        self._thread.start()
        return self

    def stop(self) -> None:
        self._stop.set()
        self._thread.join(timeout=30)

    def _watch(self) -> None:
        service = get_booking_service()
        while not self._stop.wait(WATCH_EVERY_SECONDS):
            for event in self.events:
                try:
                    quotas = service.availability(event["id"]).quotas
                    stored = checker.seats_taken(event, [
                        r.tickets for r in service.registrations(event["id"]) if r.is_confirmed])
                except Exception:  # noqa: BLE001 - a faulted read; the next one will do
                    continue
                now, peak = time.time(), self.peaks[event["id"]]
                if event.get("code"):
                    self._code_peak(service, event, peak)
                for name, quota in quotas.items():
                    _raise(peak["quotas"][name], quota.confirmed, stored.get(name, 0), now)
                _raise(peak, quotas["capacity"].confirmed, stored.get("capacity", 0), now)
                self.samples += 1


    @staticmethod
    def _code_peak(service, event: dict, peak: dict) -> None:
        try:
            uses = {c.code: c.uses for c in service.access_codes(event["id"])}
            holders = sum(r.access_code == event["code"]["code"] and r.status != "rejected"
                          for r in service.registrations(event["id"]))
        except Exception:  # noqa: BLE001 - a faulted read; the next one will do
            return
        seen = peak.setdefault("code_uses", {"uses": 0, "holders": 0})
        seen["uses"] = max(seen["uses"], uses.get(event["code"]["code"], 0))
        seen["holders"] = max(seen["holders"], holders)


def _raise(peak: dict, confirmed: int, stored: int, now: float) -> None:
    if max(confirmed, stored) > max(peak["confirmed"], peak["stored"]):
        peak.update(confirmed=confirmed, stored=stored, at=now)


class StreamDeciders:
    """The stream decider for the run's ``streams`` events, as in production: its own OS
    process, killed (SIGKILL) once while clients book and started again; once they have
    stopped, decided to the end in this process (what the restarted worker would do).
    """

    KILL_AFTER_SECONDS = START_DELAY_SECONDS + 2.0

    def __init__(self, env: dict, events: list[dict]):
        self.env = env
        self.event_ids = [e["id"] for e in events if e["strategy"] == "streams"]
        self.context = get_context("spawn")
        self.process = None
        self.killer = None
        self.kills = 0

    def start(self) -> "StreamDeciders":
        if self.event_ids:
            self.process = self._spawn()
            self.killer = threading.Timer(self.KILL_AFTER_SECONDS, self._kill_and_restart)
            self.killer.start()
        return self

    def _spawn(self):
        from .worker import decide_until

        process = self.context.Process(target=decide_until, args=(self.env,))
        process.start()
        return process

    def _kill_and_restart(self) -> None:
        self.process.kill()
        self.process.join()
        self.kills += 1
        self.process = self._spawn()

    def stop(self) -> None:
        if not self.event_ids:
            return
        self.killer.cancel()
        self.killer.join()
        self.process.terminate()  # SIGTERM: it stops after its current page
        self.process.join(timeout=60)
        if self.process.is_alive():
            self.process.kill()
            self.process.join()
        self._drain()

    def _drain(self, passes: int = 200) -> None:
        from booking.strategies.streams.decider import StreamDecider

        service = get_booking_service()
        decider = StreamDecider(service.strategy("streams"))
        for _ in range(passes):
            try:
                decider.run_pass()
                if not any(service.availability(e).pending for e in self.event_ids):
                    return
            except Exception:  # noqa: BLE001 - an injected fault; pass again
                continue
