"""The booking loop: threads book distinct people until their share of attempts is spent.

Runs in the benchmark's own process or in spawned worker processes (``run_in_process``).
Each attempt becomes a plain tuple ``(outcome, seconds, requests, writes, condition
failures)`` so results cross process boundaries cheaply.
"""
import os
import threading
import time

OK = "ok"


def person(index: int) -> tuple[str, str]:
    return f"Bench Person {index}", f"person{index}@bench.example"


def book_attempts(event_id: str, indices: list[int], threads: int, start_at: float = 0.0) -> dict:
    """Book ``indices`` from ``threads`` threads; return records and the loop's wall clock."""
    from booking.dynamo.metrics import RequestMeter
    from booking.errors import BookingError
    from booking.wiring import get_booking_service

    service = get_booking_service()
    service.get_event(event_id)  # warm the client and the strategy cache
    meter = RequestMeter().install(service.store)
    unknown_before = dict(service.unknown_outcomes)
    time.sleep(max(0.0, start_at - time.time()))  # processes start together
    pending, records, lock = list(reversed(indices)), [], threading.Lock()
    barrier = threading.Barrier(threads)

    def run():
        barrier.wait()
        while True:
            with lock:
                if not pending:
                    return
                index = pending.pop()
            name, email = person(index)
            with meter.track() as tally:
                started = time.perf_counter()
                try:
                    service.book(event_id, name=name, email=email)
                    outcome = OK
                except BookingError as refused:
                    outcome = refused.code
                seconds = time.perf_counter() - started
            with lock:
                records.append((outcome, seconds, tally.requests, tally.writes,
                                tally.condition_failures))

    workers = [threading.Thread(target=run) for _ in range(threads)]
    started = time.time()
    for worker in workers:
        worker.start()
    for worker in workers:
        worker.join()
    finished = time.time()
    meter.uninstall()
    unknown = {k: v - unknown_before.get(k, 0) for k, v in service.unknown_outcomes.items()}
    return {"records": records, "started": started, "finished": finished, "unknown": unknown}


def run_in_process(env: dict, event_id: str, indices: list[int], threads: int,
                   start_at: float) -> dict:
    """Entry point of a spawned worker process: configure Django from ``env``, then book."""
    os.environ.update(env)
    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "config.settings")
    import django

    django.setup()
    from booking import wiring
    from harness.controls import control_service

    wiring.install(control_service())
    return book_attempts(event_id, indices, threads, start_at)
