"""Code that runs inside the spawned OS processes of the waiting-list races."""
import hashlib
import threading
import time
from concurrent.futures import ThreadPoolExecutor

from tests.concurrency.workers import domain_name, setup_django


def ask_id(event_id: str, email: str) -> str:
    """The request id of one person's request to join (its confirmation link's)."""
    return "ask-" + hashlib.sha256(f"{event_id}:{email}".encode()).hexdigest()[:24]


def run_tasks(env: dict, phases: list[list[tuple[str, str, str]]], threads: int,
              start_at: float, gap: float, waitlist_control: str | None = None,
              tickets: dict | None = None) -> list[tuple[str, str, str, str, str | None]]:
    """Run each phase's (event id, kind, email) tasks from ``threads`` threads, in list
    order, phase ``k`` starting at ``start_at + k * gap`` (in every process alike); return
    (event id, kind, email, outcome, registration id or None) per task.

    Kinds: ``book``, ``accept``, ``cancel``, ``join`` (an address already confirmed),
    ``ask`` (a request to join), ``confirm`` (its e-mailed link), ``leave``, ``pass`` (the
    worker's waiting-list pass), ``offer`` (offer the event's free seats, as right after a
    cancellation) and ``decide`` (a stream decider's pass). ``tickets`` (``"kind:email"``
    -> type -> quantity) gives ``book``, ``join`` and ``cancel`` an order (a ``cancel``
    with tickets cancels that part). The service includes the careless-accept controls,
    and ``waitlist_control``'s careless waiting list.
    """
    setup_django(env)
    from booking import wiring
    from booking.waitlist import engine as waitlist_engine
    from booking.strategies.streams.decider import StreamDecider
    from booking.errors import BookingError
    from harness.torture.worker import patiently
    from harness.waitlist_controls import waitlist_control_service

    service = waitlist_control_service(waitlist_control=waitlist_control)
    wiring.install(service)
    for event_id in {task[0] for phase in phases for task in phase}:
        patiently(lambda e=event_id: service.get_event(e))
    order = (tickets or {}).get
    actions = {
        "book": lambda event_id, email: service.book(event_id, name="Guest", email=email,
                                                     tickets=order(f"book:{email}")),
        "accept": lambda event_id, email: service.accept_offer(event_id, email=email),
        "cancel": lambda event_id, email: service.cancel(event_id, email=email,
                                                         tickets=order(f"cancel:{email}")),
        "join": lambda event_id, email: service.join_waiting_list(
            event_id, name="Guest", email=email, tickets=order(f"join:{email}")),
        "ask": lambda event_id, email: service.request_to_join_waiting_list(
            event_id, name="Guest", email=email, request_id=ask_id(event_id, email)),
        "confirm": lambda event_id, email: service.confirm_waiting_list(
            event_id, name="Guest", email=email, request_id=ask_id(event_id, email),
            requested_at=time.time()),
        "leave": lambda event_id, email: service.leave_waiting_list(event_id, email=email),
        "pass": lambda event_id, email: service.waiting_list_pass(),
        "offer": lambda event_id, email: service.offer_seats(event_id),
        # A stream decider's pass (several at once, as deciders may run).
        "decide": lambda event_id, email: StreamDecider(service.strategy("streams")).run_pass(),
    }
    barrier, lock = threading.Barrier(threads), threading.Lock()
    results = []

    def run(pending, begin):
        barrier.wait()
        time.sleep(max(0.0, begin - time.time()))
        while True:
            with lock:
                if not pending:
                    return
                event_id, kind, email = pending.pop(0)
            try:
                answer = actions[kind](event_id, email)
                outcome, rid = "ok", getattr(answer, "registration_id", None)
            except BookingError as exc:
                outcome, rid = domain_name(exc), None
            with lock:
                results.append((event_id, kind, email, outcome, rid))

    with ThreadPoolExecutor(threads) as pool:
        for number, tasks in enumerate(phases):
            pending = list(tasks)
            for future in [pool.submit(run, pending, start_at + number * gap)
                           for _ in range(threads)]:
                future.result()
    waitlist_engine.flush()  # offers made right after this process's cancellations
    return results
