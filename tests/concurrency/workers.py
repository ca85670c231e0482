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


def domain_name(error: BaseException) -> str:
    """The name of the domain error ``error`` is (``booking/errors.py``): the access layer's
    own kinds are their domain errors where raised (``booking/dynamo/errors.py``:
    ``Throttled`` is a ``BookingContention``, ``Unavailable`` a ``StoreUnavailable``, ...),
    so a race's tally does not depend on which layer noticed."""
    return next((kind.__name__ for kind in type(error).__mro__
                 if kind.__module__ == "booking.errors"), type(error).__name__)


def outcome_of(error: BaseException) -> str:
    name = domain_name(error)
    return OUTCOMES.get(name, f"error:{name}")


ASK_AGAIN_FOR = 60.0  # seconds a careful client keeps asking a pending request again


def until_decided(book, **kwargs):
    """``book(**kwargs)`` as a careful client asks: one request id, asked again with it
    while the answer is "pending, ask again" (past the request's deadline), "not known yet" or "overloaded"
    (nothing sent), for up to ``ASK_AGAIN_FOR`` seconds; then the last answer stands."""
    import uuid

    from booking.errors import OutcomeUnknown, Overloaded, StillDeciding

    request_id, give_up = uuid.uuid4().hex, time.monotonic() + ASK_AGAIN_FOR
    while True:
        try:
            return book(**kwargs, request_id=request_id)
        except (StillDeciding, Overloaded, OutcomeUnknown):  # each says: ask again, the same request
            if time.monotonic() > give_up:
                raise
            time.sleep(0.2)


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

    from tests.helpers import book_directly

    event = patiently(lambda: service.get_event(event_id))
    strategy = service.strategy(event.strategy)

    def book(event_id, *, name, email):
        # The store's failures are the service's domain errors where they are raised
        # (a strategy's extra read, like shards' marker, can meet an injected fault).
        return book_directly(strategy, service, event, Registration(
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

    def attempt(person):
        name, email = person
        try:
            if direct:
                book(event_id, name=name, email=email)
            else:
                until_decided(book, event_id=event_id, name=name, email=email)
            return email, "ok"
        except BookingError as exc:
            return email, outcome_of(exc)

    stop = (lambda result: result[1] in UNREACHABLE) if stop_when_unreachable else None
    return run_threads(people, threads, start_at, attempt, stop=stop)


def run_threads(work: list, threads: int, start_at: float, attempt, stop=None) -> list:
    """``attempt`` each of ``work`` from ``threads`` threads that start together at
    ``start_at``; return the results. ``stop(result)`` True ends that thread."""
    barrier = threading.Barrier(threads)
    lock = threading.Lock()
    pending = list(work)
    results = []

    def run():
        barrier.wait()
        time.sleep(max(0.0, start_at - time.time()))
        while True:
            with lock:
                if not pending:
                    return
                item = pending.pop()
            result = attempt(item)
            with lock:
                results.append(result)
            if stop is not None and stop(result):
                return

    with ThreadPoolExecutor(threads) as pool:
        for future in [pool.submit(run) for _ in range(threads)]:
            future.result()
    return results


def book_orders(env: dict, orders: list[tuple[str, str, str, dict]], threads: int,
                start_at: float, race_delay_ms: float = 0.0) -> list[tuple]:
    """Book each (event id, name, e-mail, tickets) through the service from ``threads``
    threads at once; return (event id, e-mail, tickets, outcome, quota named by a "full")."""
    setup_django(env)
    from booking import wiring
    from booking.errors import BookingError
    from harness.controls import control_service
    from harness.torture.worker import patiently

    service = control_service(race_delay_ms=race_delay_ms)
    wiring.install(service)
    for event_id in {order[0] for order in orders}:
        patiently(lambda: service.get_event(event_id))  # warm the client and the caches

    def attempt(order):
        event_id, name, email, tickets = order
        try:
            until_decided(service.book, event_id=event_id, name=name, email=email,
                          tickets=tickets)
            return event_id, email, tickets, "ok", None
        except BookingError as exc:
            outcome = outcome_of(exc)
            return event_id, email, tickets, outcome, getattr(exc, "quota", None)

    return run_threads(orders, threads, start_at, attempt)


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
