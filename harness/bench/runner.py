"""Run the booking benchmark: hot events under concurrent clients, and cost by capacity.

Every case gets its own fresh tables (prefix ``bench<hex>-``, dropped afterwards), so one
strategy's data never slows another's requests.
"""
import math
import time
import uuid
from concurrent.futures import ProcessPoolExecutor
from contextlib import contextmanager
from dataclasses import dataclass, field
from multiprocessing import get_context


from booking.dynamo.metrics import RequestMeter
from booking.dynamo.provision import drop_tables, ensure_tables
from booking import wiring
from booking.mail.sender import send_owed
from booking.wiring import mail_sender
from harness.controls import ALL_STRATEGIES, BASELINES, control_service

from . import sizes, stats
from . import streams as streams_bench
from .worker import book_attempts, person, run_in_process

STRATEGIES = {**ALL_STRATEGIES, **BASELINES}

START_DELAY_SECONDS = 5.0  # spawned processes set up Django before the common start


@dataclass
class BenchConfig:
    strategies: list[str]
    clients: list[int]
    capacity: int = 200
    attempts: int = 400
    processes: int = 1
    cost_capacities: list[int] = field(default_factory=lambda: [50, 1000, 10000])
    cost_bookings: int = 10


@contextmanager
def fresh_tables():
    """The benchmark's service on fresh tables (the same client, another prefix)."""
    store = wiring.get_store().with_prefix(f"bench{uuid.uuid4().hex[:8]}-")
    ensure_tables(store)
    try:
        with wiring.use_service(control_service(store=store)) as service:
            yield service
    finally:
        drop_tables(store)


def hot_event(config: BenchConfig, strategy: str, clients: int) -> dict:
    """Book ``attempts`` distinct people into one event from ``clients`` concurrent clients."""
    if config.capacity > STRATEGIES[strategy].max_capacity:
        return stats.unsupported(strategy, clients, config.capacity)
    with fresh_tables() as service:
        event = service.create_event(name=f"Bench {strategy}", capacity=config.capacity,
                                     strategy=strategy)
        runs = _book_everyone(config, event.id, clients, service.store.table_prefix)
        stored = len(list(service.strategy(strategy).registrations(event.id)))
        cost = sizes.booking_wcu(service.strategy(strategy), event.id)
        mail_requests = _send_confirmations(service)
    row = stats.summarize(strategy, clients, config.capacity, runs, stored, cost)
    row["mail_requests_per_booking"] = (round(mail_requests / row["booked"], 3)
                                        if row["booked"] else None)
    return row


def streams_hot_event(config: BenchConfig, clients: int) -> dict:
    """The streams strategy's hot event (``harness/bench/streams.py``)."""
    with fresh_tables() as service:
        prefix = service.store.table_prefix
        return streams_bench.hot_event(
            config, clients, lambda event_id: _book_everyone(config, event_id, clients, prefix))


def _send_confirmations(service) -> int:
    """Send every confirmation the bookings owe (one sender, a mail backend that drops
    them); return the DynamoDB requests that took: the e-mail work's own cost."""
    meter = RequestMeter().install(service.store)
    try:
        with meter.track() as tally:
            send_owed(mail_sender(service,
                                  email_backend="django.core.mail.backends.dummy.EmailBackend"))
    finally:
        meter.uninstall()
    return tally.requests


def _book_everyone(config, event_id, clients, prefix) -> list[dict]:
    indices = list(range(config.attempts))
    processes = max(1, min(config.processes, clients))
    if processes == 1:
        return [book_attempts(event_id, indices, clients)]
    env = {"DJANGO_SETTINGS_MODULE": "config.settings", "DYNAMODB_TABLE_PREFIX": prefix,
           "DYNAMODB_ENDPOINT_URL": wiring.client_config().endpoint_url}
    threads = math.ceil(clients / processes)
    start_at = time.time() + START_DELAY_SECONDS
    with ProcessPoolExecutor(processes, mp_context=get_context("spawn")) as pool:
        futures = [pool.submit(run_in_process, env, event_id, indices[p::processes], threads,
                               start_at) for p in range(processes)]
        return [f.result() for f in futures]


def capacity_cost(config: BenchConfig, strategy: str, capacity: int, meter: RequestMeter) -> dict:
    """Creation cost and per-booking cost of one event of ``capacity`` seats."""
    if capacity > STRATEGIES[strategy].max_capacity:
        return stats.unsupported(strategy, None, capacity)
    with fresh_tables() as service:
        with meter.track() as creation:
            started = time.perf_counter()
            event = service.create_event(name="Bench cost", capacity=capacity, strategy=strategy)
            create_seconds = time.perf_counter() - started
        implementation = service.strategy(strategy)
        create_wcu = sizes.creation_wcu(implementation, event.id, capacity)
        bookings = []
        for index in range(min(config.cost_bookings, capacity)):
            with meter.track() as tally:
                started = time.perf_counter()
                service.book(event.id, name=person(index)[0], email=person(index)[1])
                bookings.append((time.perf_counter() - started, tally.requests))
        return {
            "strategy": strategy, "capacity": capacity, "supported": True,
            "create_requests": creation.requests, "create_seconds": round(create_seconds, 4),
            "create_wcu": create_wcu,
            "booking_requests": sizes.mean(r for _, r in bookings),
            "booking_ms": stats.ms(sizes.mean(s for s, _ in bookings)),
            "booking_wcu": sizes.booking_wcu(implementation, event.id, capacity),
        }


def run(config: BenchConfig, step=lambda: None) -> dict:
    """The whole benchmark; ``step`` is called after each case (progress). Every case runs
    on fresh tables, through the same client (``fresh_tables``)."""
    hot, queued = [], []
    for clients in config.clients:
        for strategy in config.strategies:
            if strategy == "streams":  # its own columns: accepted now, decided later
                queued.append(streams_hot_event(config, clients))
            else:
                hot.append(hot_event(config, strategy, clients))
            step()
    stats.add_ratios(hot)
    streams_bench.add_acceptance_ratios(hot, queued)
    cost, meter = [], RequestMeter().install(wiring.get_store())  # the cases' shared client
    try:
        for capacity in config.cost_capacities:
            for strategy in config.strategies:
                cost.append(capacity_cost(config, strategy, capacity, meter))
                step()
    finally:
        meter.uninstall()
    return {"hot_event": hot, "streams": queued, "capacity_cost": cost}
