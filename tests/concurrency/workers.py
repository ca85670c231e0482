"""Code that runs inside the spawned OS processes of the race tests."""
import os
import threading
import time
from concurrent.futures import ThreadPoolExecutor

UNREACHABLE = ("error:StoreUnavailable", "error:OutcomeUnknown")
OUTCOMES = {
    "EventFull": "full",
    "AlreadyRegistered": "already",
    "BookingContention": "contention",
}


def setup_django(env: dict) -> None:
    os.environ.update(env)
    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "config.settings")
    import django

    django.setup()


def strategy_booker(service, event_id):
    """Book through the event's strategy alone, without a request row or read-back."""
    import uuid

    from django.utils import timezone

    from booking.models import Registration

    from harness.torture.worker import patiently

    strategy = service.strategy(patiently(lambda: service.get_event(event_id)).strategy)

    def book(event_id, *, name, email):
        return strategy.book(event_id, Registration(
            event_id=event_id, email=email, name=name, registered_at=timezone.now(),
            registration_id=uuid.uuid4().hex))

    return book


def book_people(env: dict, event_id: str, people: list[tuple[str, str]], threads: int,
                start_at: float, direct: bool = False, stop_when_unreachable: bool = False,
                race_delay_ms: float = 0.0) -> list[tuple[str, str]]:
    """Book each (name, email) from ``threads`` threads at once; return (email, outcome).

    ``direct`` books through the strategy alone (e-mails must be normalized already).
    ``stop_when_unreachable``: a thread stops after its first "unavailable" or "unknown"
    answer (the crash test kills the store; each of those answers takes the service a few
    seconds of resolving).
    The process's service is the test graph: the product's strategies and the unguarded
    control, with ``race_delay_ms`` between its read and its write.
    """
    setup_django(env)
    from booking import wiring
    from booking.errors import BookingError
    from harness.controls import control_service

    service = control_service(race_delay_ms=race_delay_ms)
    wiring.install(service)
    from harness.torture.worker import patiently

    # Warm the client and the strategy cache before the race; a faulty server may need
    # more than botocore's attempts for this one read.
    patiently(lambda: service.get_event(event_id))
    book = strategy_booker(service, event_id) if direct else service.book
    barrier = threading.Barrier(threads)
    lock = threading.Lock()
    pending = list(people)
    results = []

    def run():
        barrier.wait()
        time.sleep(max(0.0, start_at - time.time()))
        while True:
            with lock:
                if not pending:
                    return
                name, email = pending.pop()
            try:
                book(event_id, name=name, email=email)
                outcome = "ok"
            except BookingError as exc:
                outcome = OUTCOMES.get(type(exc).__name__, f"error:{type(exc).__name__}")
            with lock:
                results.append((email, outcome))
            if stop_when_unreachable and outcome in UNREACHABLE:
                return

    with ThreadPoolExecutor(threads) as pool:
        for future in [pool.submit(run) for _ in range(threads)]:
            future.result()
    return results


def put_keys(url: str, table: str, keys: list[str], threads: int, start_at: float) -> list[str]:
    """Put each key with ``attribute_not_exists`` from ``threads`` threads; return the
    acknowledged keys. No retries: a thread stops at its first failure (the store is gone)."""
    import boto3
    from botocore.config import Config

    client = boto3.client("dynamodb", endpoint_url=url, region_name="us-east-1",
                          aws_access_key_id="local", aws_secret_access_key="local",
                          config=Config(retries={"total_max_attempts": 1},
                                        max_pool_connections=threads, connect_timeout=2,
                                        read_timeout=5))
    pending, acknowledged, lock = list(keys), [], threading.Lock()

    def run():
        time.sleep(max(0.0, start_at - time.time()))
        while True:
            with lock:
                if not pending:
                    return
                key = pending.pop()
            try:
                client.put_item(TableName=table, Item={"pk": {"S": key}},
                                ConditionExpression="attribute_not_exists(pk)")
            except Exception:  # noqa: BLE001 - the store is gone: this one not acknowledged
                return
            with lock:
                acknowledged.append(key)

    with ThreadPoolExecutor(threads) as pool:
        for future in [pool.submit(run) for _ in range(threads)]:
            future.result()
    return acknowledged


def run_decider(env: dict, careless: bool = False) -> None:
    """A stream decider in its own OS process until SIGTERM (or SIGKILL).

    ``careless`` runs the control that decides a registration whatever its state. Stopped
    by a signal: a process killed while waiting on a shared ``multiprocessing.Event``
    would leave it waiting for a wake-up that never comes.
    """
    import signal

    setup_django(env)
    from booking.strategies.streams.decider import StreamDecider
    from booking.strategies.streams import StreamsStrategy
    from booking.wiring import get_store
    from harness.controls import CarelessStreamsStrategy

    strategy = (CarelessStreamsStrategy if careless else StreamsStrategy)(store=get_store())
    decider = StreamDecider(strategy)
    stop = threading.Event()
    signal.signal(signal.SIGTERM, lambda *_: stop.set())
    decider.run(stop, interval=0.05)
