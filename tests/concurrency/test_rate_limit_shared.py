"""The rate limiter under a real race: several OS processes, many threads each, one bucket
on the embedded DynamoDB. Exactly the limit gets through, because each count is one atomic
`ADD`. A control that reads the count and writes it back (what a per-process or
read-then-write counter does) lets more through, which proves the check can fail."""
import multiprocessing
import threading
import time
import uuid

import pytest
from django.conf import settings

pytestmark = pytest.mark.concurrency

PROCESSES, THREADS, ATTEMPTS = 3, 8, 10
LIMIT = 50


def attempt_many(env: dict, bucket: str, start_at: float, read_then_write: bool) -> int:
    """In a spawned process: THREADS threads x ATTEMPTS checks; return how many passed."""
    from tests.concurrency.workers import setup_django

    setup_django({**env, "BOOKING_SIGNUP_RATE": f"{LIMIT}/h"})
    from booking.web import rate_limits
    from booking.dynamo.rate_limits import RateCounters
    from booking.errors import RateLimited

    if read_then_write:  # the control: a lost update between the read and the write
        def hit(counters, bucket, *, window_start, window_seconds):
            count = counters.hits(bucket, window_start=window_start) + 1
            time.sleep(0.002)
            counters.table.put({"bucket": f"{bucket}#{window_start}", "hits": count})
            return count
        RateCounters.hit = hit

    allowed, lock = [0], threading.Lock()

    def run():
        for _ in range(ATTEMPTS):
            try:
                rate_limits.check(rate_limits.SIGNUP, bucket)
            except RateLimited:
                continue
            with lock:
                allowed[0] += 1

    time.sleep(max(0.0, start_at - time.time()))
    threads = [threading.Thread(target=run) for _ in range(THREADS)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    return allowed[0]


def race(server, *, read_then_write=False) -> int:
    from booking.wiring import get_booking_service

    env = {"DJANGO_SETTINGS_MODULE": "config.test_settings",
           "DYNAMODB_ENDPOINT_URL": server.url,
           "DYNAMODB_TABLE_PREFIX": get_booking_service().store.table_prefix,
           "SECRET_KEY": settings.SECRET_KEY}
    bucket, start_at = uuid.uuid4().hex, time.time() + 3.0
    with multiprocessing.get_context("spawn").Pool(PROCESSES) as pool:
        runs = [pool.apply_async(attempt_many, (env, bucket, start_at, read_then_write))
                for _ in range(PROCESSES)]
        return sum(run.get(timeout=240) for run in runs)


def test_limiter__processes_and_threads_one_bucket__exactly_the_limit(server_store):
    assert race(server_store) == LIMIT


def test_limiter__read_then_write_control__lets_more_through(server_store):
    assert race(server_store, read_then_write=True) > LIMIT
