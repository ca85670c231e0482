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


def attempt_many(env: dict, bucket: str, start_at: float, read_then_write: bool,
                 signup: str = "") -> int:
    """In a spawned process: THREADS threads x ATTEMPTS checks; return how many passed.
    ``signup`` "network" or "email": ``check_signup`` (a new submission each), every
    e-mail address different (the network's limit binds) or all the same (the address's)."""
    from tests.concurrency.workers import setup_django

    setup_django({**env, "BOOKING_SIGNUP_RATE": f"{LIMIT}/h" if signup != "email" else "off",
                  "BOOKING_SIGNUP_EMAIL_RATE": f"{LIMIT}/h"})
    from booking.entry import limits as rate_limits
    from booking.dynamo.rate_limits import RateCounters
    from booking.errors import RateLimited

    if read_then_write:  # the control: a lost update between the read and the write
        def hit(counters, bucket, *, window_start, window_seconds):
            count = counters.hits(bucket, window_start=window_start) + 1
            time.sleep(0.002)
            counters.table.put({"bucket": f"{bucket}#{window_start}", "hits": count})
            return count
        RateCounters.hit = hit

        def hit_all(counters, bucket, *, window_start, window_seconds, once, counters_,
                    unless=(), now=None):
            key = {"bucket": f"{bucket}#{window_start}"}
            item = counters.table.get(key) or {}
            if any(int(item.get(c, 0)) >= n for c, n in counters_.items()):
                return "full", next(iter(counters_))
            time.sleep(0.002)
            counters.table.put({**key, **{c: int(item.get(c, 0)) + 1 for c in counters_}})
            return "counted", None
        RateCounters.hit_all = lambda self, bucket, counters, **kw: hit_all(
            self, bucket, counters_=counters, **kw)

    allowed, lock = [0], threading.Lock()

    def run():
        for _ in range(ATTEMPTS):
            try:
                if signup:
                    email = "same@example.com" if signup == "email" else f"{uuid.uuid4()}@x.org"
                    rate_limits.check_signup(bucket, uuid.uuid4().hex, email=email)
                else:
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


def race(server, *, read_then_write=False, signup="") -> int:
    from booking.wiring import get_booking_service

    env = {"DJANGO_SETTINGS_MODULE": "config.test_settings",
           "DYNAMODB_ENDPOINT_URL": server.url,
           "DYNAMODB_TABLE_PREFIX": get_booking_service().store.table_prefix,
           "SECRET_KEY": settings.SECRET_KEY}
    bucket, start_at = uuid.uuid4().hex, time.time() + 3.0
    with multiprocessing.get_context("spawn").Pool(PROCESSES) as pool:
        runs = [pool.apply_async(attempt_many,
                                 (env, bucket, start_at, read_then_write, signup))
                for _ in range(PROCESSES)]
        return sum(run.get(timeout=240) for run in runs)


def test_limiter__processes_and_threads_one_bucket__exactly_the_limit(server_store):
    assert race(server_store) == LIMIT


def test_limiter__read_then_write_control__lets_more_through(server_store):
    assert race(server_store, read_then_write=True) > LIMIT


@pytest.mark.parametrize("binding", ["network", "email"])
def test_signup_limits__one_write_for_both__exactly_the_limit(server_store, binding):
    assert race(server_store, signup=binding) == LIMIT


@pytest.mark.parametrize("binding", ["network", "email"])
def test_signup_limits__read_then_write_control__lets_more_through(server_store, binding):
    assert race(server_store, read_then_write=True, signup=binding) > LIMIT
