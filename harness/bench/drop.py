"""The ticket drop: PEOPLE arrive for SEATS within SECONDS, under DynamoDB's capacity limits.

``bench_booking --drop 100000:10000:60 --scale 0.02`` starts its own DynamoDB Local behind
the capacity proxy (``dynamodb_local --capacity partition_wcu=1000,partition_rcu=3000,
scale=0.02``): people, seats and every partition's capacity are scaled together, so the
drop meets the same per-item ceiling on this machine that it would on DynamoDB.

Arrivals are open-loop: person ``i`` arrives at ``i / rate`` whether or not earlier ones
were answered (a pool of ``threads`` serves them; time waiting for the pool counts). Each
person is a careful client: one request id, asked again with that same id on an answer
that is not definite (contention, store unavailable, outcome unknown) until ``patience``
seconds after arriving. Per strategy, on fresh tables, in one run: seats sold, time to sell
out, answers by kind, time to a definite answer, throttles seen by botocore (the proxy's
refusals) and throttled answers that reached a person, the answers that were not definite
by kind, WCU and RCU per booking and per rejection from the proxy's accounting, the
partitions' busiest whole seconds against their limit (``peaks``; ``hottest`` is the
average over the drop, which a sell-out's seconds hide in), overbooked, unknown outcomes.

The store is warmed first: ``warmup`` people book and are refused on an event of their
own (DynamoDB Local is a JVM: its first few hundred requests run several times slower,
which a drop would otherwise count as its own first second's lag). Units per booking made
alone are measured before the drop (``probes`` people one at a time,
on seats added for them), and compared with ``sizes.py``'s estimate; units per rejection
after it (``probes`` more people against the sold-out event). The drop's units per booking
are its units less its rejections': lost races and cancelled transactions included.
"""
import json
import random
import threading
import time
import urllib.request
import uuid
from collections import Counter
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass

from booking import validation, wiring
from booking.dynamo.provision import drop_tables, ensure_tables
from booking.errors import (BookingContention, BookingError, EventFull, OutcomeUnknown,
                            Overloaded, StoreUnavailable)
from booking.dynamo.errors import caused_by_throttle
from harness.controls import control_service, local_store
from localdynamo import process as store_process

from . import sizes, stats

# Overloaded: the event cools down after a throttle, nothing was sent: ask again.
NOT_DEFINITE = (BookingContention, StoreUnavailable, OutcomeUnknown, Overloaded)


@dataclass
class DropConfig:
    people: int = 100_000
    seats: int = 10_000
    seconds: float = 60.0
    scale: float = 0.02
    strategies: tuple = ("aggregate", "lock_table", "slots", "shards")
    partition_wcu: float = 1000.0
    partition_rcu: float = 3000.0
    threads: int = 64
    patience: float = 30.0
    probes: int = 10
    warmup: int = 300  # people booking (and refused) on an event of their own first
    state_rate: bool = True  # the event states the drop's arrivals a second (unscaled)

    @property
    def scaled_people(self) -> int:
        return max(1, round(self.people * self.scale))

    @property
    def scaled_seats(self) -> int:
        return max(1, round(self.seats * self.scale))

    @property
    def expected_rate(self) -> int | None:
        """What the drop's organizer states: its arrivals a second on DynamoDB (unscaled, as
        the partitions' limits are scaled with the people)."""
        return max(1, round(self.people / self.seconds)) if self.state_rate else None

    @property
    def capacity_spec(self) -> str:
        return (f"partition_wcu={self.partition_wcu:g},partition_rcu={self.partition_rcu:g},"
                f"scale={self.scale:g},burst_s=0")

    @classmethod
    def parse(cls, text: str, **options) -> "DropConfig":
        people, seats, seconds = text.split(":")
        config = cls(people=int(people), seats=int(seats), seconds=float(seconds), **options)
        if min(config.people, config.seats, config.seconds, config.scale, config.probes) <= 0:
            raise ValueError("people, seats, seconds, scale and probes must be positive")
        if config.warmup < 0:
            raise ValueError("warmup must be 0 or more")
        return config


def run_drop(config: DropConfig, step=lambda: None) -> dict:
    """Every strategy's drop, one after another, on one store behind the capacity proxy."""
    server = store_process.start("--capacity", config.capacity_spec)
    try:
        rows = []
        for strategy in config.strategies:
            rows.append(drop_one(config, server, strategy))
            step()
    finally:
        server.stop()
    return {"drop": rows, "drop_config": {**vars(config), "strategies": list(config.strategies),
                                          "capacity_spec": config.capacity_spec,
                                          "expected_rate": config.expected_rate,
                                          "people_scaled": config.scaled_people,
                                          "seats_scaled": config.scaled_seats}}


def capacity(server, reset: bool = False) -> dict:
    if reset:
        request = urllib.request.Request(f"{server.url}/_localdynamo/capacity/reset",
                                         method="POST")
        urllib.request.urlopen(request, timeout=30).close()
    return server.capacity()


def units(report: dict, prefix: str) -> tuple[float, float, int]:
    """Write units, read units and throttles consumed in the tables named ``prefix*``."""
    tables = [t for name, t in report["tables"].items() if name.startswith(prefix)]
    return (sum(t["write_units"] for t in tables), sum(t["read_units"] for t in tables),
            sum(t["throttles"] for t in tables))


def drop_one(config: DropConfig, server, strategy: str) -> dict:
    prefix = f"drop{uuid.uuid4().hex[:8]}-"
    store = local_store(server.url, table_prefix=prefix,
                        max_pool_connections=config.threads + 8)
    ensure_tables(store)
    try:
        with wiring.use_service(control_service(store=store)) as service:
            warm_up(config, service, strategy)
            event = service.create_event(name=f"Drop {strategy}", strategy=strategy,
                                         expected_rate=config.expected_rate,
                                         capacity=config.scaled_seats + config.probes)
            alone = probe_bookings(config, service, event.id, server, prefix)
            estimate = sizes.booking_wcu(service.strategy(strategy), event.id)  # those alone
            capacity(server, reset=True)
            answers, started, ended = arrivals(config, service, event.id)
            during = capacity(server)
            probes = probe_rejections(config, service, event.id, server, prefix)
            implementation = service.strategy(strategy)
            stored = len(list(implementation.registrations(event.id)))
            unknown = sum(service.unknown_outcomes.values())
            shards = (implementation.shard_count(event.id)
                      if hasattr(implementation, "shard_count") else None)
    finally:
        drop_tables(store)
    return {**summarize(config, strategy, answers, started, ended, during, prefix, probes,
                        stored, estimate, unknown, alone), "shards": shards}


def arrivals(config: DropConfig, service, event_id: str):
    """Open-loop arrivals at the drop's rate; every person's answer."""
    return open_loop(config, lambda index, arrival: careful_person(
        service, event_id, index, arrival, config.patience))


def open_loop(config: DropConfig, person):
    """``person(index, arrival)`` for each of the drop's people, the i-th started at
    ``i / rate`` whether or not earlier ones were answered (a pool of ``config.threads``
    serves them; time waiting for the pool counts). Returns (answers, started, ended)."""
    rate = config.scaled_people / config.seconds
    answers, lock = [], threading.Lock()
    started = time.monotonic()

    def one(index):
        answer = person(index, started + index / rate)
        with lock:
            answers.append(answer)

    with ThreadPoolExecutor(config.threads) as pool:
        for index in range(config.scaled_people):
            time.sleep(max(0.0, started + index / rate - time.monotonic()))
            pool.submit(one, index)
    return answers, started, time.monotonic()


def careful_person(service, event_id: str, index: int, arrival: float, patience: float) -> dict:
    """Book once; ask again with the same request id on any answer that is not definite."""
    request_id, not_definite, throttled, asked = uuid.uuid4().hex, 0, 0, 0
    kinds = Counter()  # the not definite answers by code
    while True:
        asked += 1
        try:
            service.book(event_id, name=f"Fan {index}", email=f"fan{index}@drop.example",
                         request_id=request_id)
            outcome = "booked"
        except EventFull:
            outcome = "full"
        except NOT_DEFINITE as exc:
            not_definite += 1
            kinds[exc.code] += 1
            throttled += was_throttled(exc)
            if time.monotonic() - arrival < patience:
                time.sleep(random.uniform(0, min(2.0, 0.05 * 2 ** asked)))
                continue
            outcome = f"gave_up:{exc.code}"
        except BookingError as exc:
            outcome = exc.code
        answered = time.monotonic()
        return {"outcome": outcome, "answered_at": answered, "seconds": answered - arrival,
                "asked": asked, "not_definite": not_definite, "throttled": throttled,
                "kinds": kinds}


# Whether a throttle (botocore's spent retries, or a transaction cancelled for
# ``ThrottlingError``) caused an error, through its causes: the cool-down's own test.
was_throttled = caused_by_throttle


def warm_up(config: DropConfig, service, strategy: str) -> None:
    """``config.warmup`` people on an event of their own, a quarter of them refused, from a
    few threads at once: the store's code paths run warm before the drop. On shards with
    the most shards whatever the drop's strategy, so its partitions' limits (scaled) hold
    nobody up: the warm-up is the store's, not the strategy's."""
    if not config.warmup:
        return
    seats = max(1, config.warmup * 3 // 4)
    event = service.create_event(name=f"Warm-up {strategy}", strategy="shards", capacity=seats,
                                 expected_rate=validation.MAX_EXPECTED_RATE)

    def one(index):
        try:
            service.book(event.id, name=f"Warm {index}", email=f"warm{index}@drop.example")
        except BookingError:
            pass  # full, or busy: either warms the same paths

    with ThreadPoolExecutor(8) as pool:
        list(pool.map(one, range(config.warmup)))


def probe_bookings(config, service, event_id, server, prefix) -> dict:
    """Units per booking made alone: ``probes`` people, one at a time, before the drop
    (the event has that many seats more than the drop's)."""
    before = units(capacity(server), prefix)
    for index in range(config.probes):
        service.book(event_id, name=f"Early {index}", email=f"early{index}@drop.example")
    after = units(capacity(server), prefix)
    return {"write_units": after[0] - before[0], "read_units": after[1] - before[1]}


def probe_rejections(config, service, event_id, server, prefix) -> dict:
    """Units per rejection: ``probes`` more people, one at a time, if the event is full."""
    before = units(capacity(server), prefix)
    refused = 0
    for index in range(config.probes):
        try:
            service.book(event_id, name=f"Late {index}", email=f"late{index}@drop.example")
            return {"rejections": 0}  # not sold out: a probe would take a seat
        except EventFull:
            refused += 1
        except BookingError:
            pass
    after = units(capacity(server), prefix)
    return {"rejections": refused, "write_units": after[0] - before[0],
            "read_units": after[1] - before[1]}


def per(total, count):
    return round(total / count, 2) if count else None


def summarize(config, strategy, answers, started, ended, report, prefix, probes, stored,
              estimate, unknown, alone) -> dict:
    outcomes = {}
    for answer in answers:
        outcomes[answer["outcome"]] = outcomes.get(answer["outcome"], 0) + 1
    booked, full = outcomes.get("booked", 0), outcomes.get("full", 0)
    sold_at = sorted(a["answered_at"] - started for a in answers if a["outcome"] == "booked")
    definite = sorted(a["seconds"] for a in answers if a["outcome"] in ("booked", "full"))
    write_units, read_units, throttles = units(report, prefix)
    wcu_reject = per(probes.get("write_units", 0), probes["rejections"])
    rcu_reject = per(probes.get("read_units", 0), probes["rejections"])
    hottest = next((h for h in report["hottest"] if h["table"].startswith(prefix)), None)
    limit = report["limits"]["write_units_per_second" if hottest and hottest["kind"] == "write"
                             else "read_units_per_second"]
    return {
        "strategy": strategy, "people": len(answers), "seats": config.scaled_seats,
        "sold": booked, "sold_out_s": round(sold_at[-1], 2) if booked >= config.scaled_seats else None,
        "booked": booked, "full": full,
        "other": {k: v for k, v in outcomes.items() if k not in ("booked", "full")},
        "answer_p50_s": stats_quantile(definite, 0.5), "answer_p99_s": stats_quantile(definite, 0.99),
        "answer_max_s": round(definite[-1], 2) if definite else None,
        "throttles_botocore": throttles,
        # Answers that were not definite because a throttle caused them (the strategy's
        # and botocore's retries spent), and all answers that were not definite.
        "throttles_to_people": sum(a["throttled"] for a in answers),
        "not_definite_answers": sum(a["not_definite"] for a in answers),
        "not_definite_by_kind": dict(sum((a["kinds"] for a in answers), Counter())),
        "asked_per_person": per(sum(a["asked"] for a in answers), len(answers)),
        "wcu_per_booking": per(write_units - full * (wcu_reject or 0), booked),
        "rcu_per_booking": per(read_units - full * (rcu_reject or 0), booked),
        "wcu_per_rejection": wcu_reject, "rcu_per_rejection": rcu_reject,
        "wcu_per_booking_alone": per(alone["write_units"], config.probes),
        "rcu_per_booking_alone": per(alone["read_units"], config.probes),
        "wcu_per_booking_estimate": per(estimate.get("mean") or 0, 1),
        "hottest": hottest and {"table": hottest["table"].removeprefix(prefix),
                                "partition": hottest["partition"], "kind": hottest["kind"],
                                "units_per_second": round(hottest["units"] / max(
                                    report["seconds"], 1e-9), 2),
                                "limit_per_second": limit},
        "peaks": peaks(report, prefix),
        "overbooked": max(0, stored - config.scaled_seats - config.probes),
        "unknown_outcomes": unknown,
        "drop_seconds": round(ended - started, 2),
        "timeline": [round(t, 3) for t in sold_at],
    }


def peaks(report: dict, prefix: str, count: int = 5) -> list[dict]:
    """The drop's partitions (of its tables) by their busiest whole second against the
    limit: table, partition, kind, second (since the drop opened), units, limit, share."""
    return [{"table": p["table"].removeprefix(prefix), "partition": p["partition"],
             "kind": p["kind"], "second": p["second"], "units": round(p["units"], 2),
             "limit_per_second": p["limit_per_second"],
             "share_of_limit": round(p["share_of_limit"], 3)}
            for p in report.get("peaks", []) if p["table"].startswith(prefix)][:count]


def stats_quantile(values, q):
    value = stats.percentile(values, q)
    return None if value is None else round(value, 2)


def text(results: dict) -> str:
    """A table, one row per strategy."""
    config = results["drop_config"]
    lines = [f"Ticket drop: {config['people_scaled']} people for {config['seats_scaled']} seats "
             f"within {config['seconds']:g} s (--drop {config['people']}:{config['seats']}:"
             f"{config['seconds']:g} --scale {config['scale']:g}), capacity "
             f"{config['capacity_spec']}, patience {config['patience']:g} s, "
             f"{config['threads']} threads"]
    columns = ("strategy", "shards", "sold", "sold_out_s", "booked", "full", "other", "answer_p50_s",
               "answer_p99_s", "answer_max_s", "throttles_botocore", "throttles_to_people",
               "not_definite_answers", "not_definite_by_kind",
               "wcu_per_booking", "rcu_per_booking", "wcu_per_booking_alone",
               "wcu_per_booking_estimate", "rcu_per_booking_alone",
               "wcu_per_rejection", "rcu_per_rejection", "overbooked", "unknown_outcomes")
    for row in results["drop"]:
        lines.append("  ".join(f"{c}={json.dumps(row[c])}" for c in columns))
        hot = row["hottest"]
        if hot:
            lines.append(f"    hottest on average over the drop: {hot['table']} "
                         f"{hot['partition']} ({hot['kind']}) {hot['units_per_second']} units/s, "
                         f"limit {hot['limit_per_second']:g}")
        for peak in row["peaks"][:3]:
            lines.append(f"    peak second: {peak['table']} {peak['partition']} ({peak['kind']}) "
                         f"{peak['units']:g} units in second {peak['second']}, limit "
                         f"{peak['limit_per_second']:g} ({peak['share_of_limit']:.0%})")
    return "\n".join(lines) + "\n"


def chart(results: dict, path: str) -> None:
    """Seats sold over time, per strategy."""
    import matplotlib

    matplotlib.use("Agg")
    from matplotlib import pyplot

    figure, axis = pyplot.subplots(figsize=(8, 4.5))
    for row in results["drop"]:
        times = row["timeline"]
        axis.step([0, *times], range(len(times) + 1), where="post", label=row["strategy"])
    axis.set_xlabel("seconds since the drop opened")
    axis.set_ylabel("seats sold")
    config = results["drop_config"]
    axis.set_title(f"Ticket drop: {config['people_scaled']} people, {config['seats_scaled']} "
                   f"seats, {config['seconds']:g} s, capacity scale {config['scale']:g}")
    axis.legend()
    figure.tight_layout()
    figure.savefig(path, dpi=110)
    pyplot.close(figure)
