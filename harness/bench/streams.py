"""The streams strategy's benchmark case: acceptance, then decisions made in order.

Clients book distinct people into a hot event as for every strategy (each accepted
request is one provisional write); a stream decider runs on a thread in this process and
is restarted mid-run (a new decider resuming from the checkpoints, as after a crash).
Reported beside acceptance: time to decision (from the booking's arrival to its
decision), decisions per second, DynamoDB and Streams requests per decision, and the
checks: overbooked, decided twice (a registration with two decision e-mails, or
decided twice by the deciders), decisions changed (a decision reported that the stored
status contradicts).
"""
import threading
import time
from collections import Counter
from datetime import datetime

from booking.decider import StreamDecider
from booking.dynamo.metrics import RequestMeter
from booking.wiring import get_booking_service

from . import sizes, stats

DECIDER_INTERVAL = 0.05
DRAIN_SECONDS = 300.0


class _Decisions:
    """What the deciders reported, and their requests (DynamoDB and Streams)."""

    def __init__(self, store):
        self.made = Counter()  # (registration id, outcome) -> times
        self.lock = threading.Lock()
        self.meter = RequestMeter().install(store)
        self.streams_requests = 0
        self._hook = f"bench-streams-{id(self)}"
        self._streams_client = store.streams_client
        self._streams_client.meta.events.register(
            "before-send.dynamodbstreams", self._count, unique_id=self._hook)
        self.dynamo_requests = 0

    def _count(self, **kwargs):
        with self.lock:
            self.streams_requests += 1

    def record(self, outcome, registration):
        with self.lock:
            self.made[(registration.registration_id, outcome)] += 1

    def run(self, decider, stop):
        with self.meter.track() as tally:
            decider.run(stop, interval=DECIDER_INTERVAL)
        with self.lock:
            self.dynamo_requests += tally.requests

    def close(self):
        self.meter.uninstall()
        self._streams_client.meta.events.unregister("before-send.dynamodbstreams",
                                                    unique_id=self._hook)


def _start(strategy, decisions):
    stop = threading.Event()
    decider = StreamDecider(strategy, on_decided=decisions.record)
    thread = threading.Thread(target=decisions.run, args=(decider, stop), daemon=True)
    thread.start()
    return stop, thread


def hot_event(config, clients, book_everyone) -> dict:
    """``book_everyone(event_id)`` runs the clients; returns the streams row."""
    service = get_booking_service()
    strategy = service.strategy("streams")
    event = service.create_event(name="Bench streams", capacity=config.capacity,
                                 strategy="streams")
    decisions = _Decisions(service.store)
    try:
        stop, thread = _start(strategy, decisions)
        runs = book_everyone(event.id)
        stop.set()  # restart mid-run: a new decider resumes from the checkpoints
        thread.join()
        stop, thread = _start(strategy, decisions)
        deadline = time.monotonic() + DRAIN_SECONDS
        while strategy.availability(event.id).pending and time.monotonic() < deadline:
            time.sleep(0.1)
        stop.set()
        thread.join()
    finally:
        decisions.close()
    registrations = list(strategy.registrations(event.id))
    cost = sizes.booking_wcu(strategy, event.id)
    row = stats.summarize("streams", clients, config.capacity, runs,
                          sum(r.status == "confirmed" for r in registrations), cost)
    row.update(_decision_figures(event, strategy, decisions))
    return row


def _decision_figures(event, strategy, decisions) -> dict:
    from booking.outbox import Outbox

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
    made = Counter(rid for rid, _ in decisions.made)
    twice = len({rid for rid, n in mails.items() if n > 1}
                | {rid for rid, n in made.items() if n > 1})
    changed = sum(1 for (rid, outcome) in decisions.made if stored.get(rid) != outcome)
    span = max(times) - min(times) if len(times) > 1 else None
    count = len(decided)
    requests = decisions.dynamo_requests + decisions.streams_requests
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
    }


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
