"""The torture run's client side, inside each spawned process: threads take random steps
(``plan.ThreadPlan``) through ``BookingService`` and record every invocation.

A record is a plain dict (it crosses the process boundary): who sent what, when it was
invoked and when it completed, and the outcome: ``ok`` (with the registration returned),
``fail`` (a definite refusal, with its code) or ``unknown`` (the request may or may not
have taken effect: contention, an unavailable store, an unresolved outcome, any other error).
"""
import os
import threading
import time

from . import door as door_scanners
from .plan import DOUBLE, Request, ThreadPlan, TortureConfig, answers

OK, FAIL, UNKNOWN = "ok", "fail", "unknown"
DEFINITE_CODES = frozenset({
    "event_full", "already_registered", "not_registered", "invalid", "event_not_found",
    "access_code_used_up"})


def invoke(service, request: Request) -> dict:
    """Send one request; return what happened as a record (without who and which step)."""
    from booking.errors import BookingError

    invoked = time.time()
    registration, code, quota = None, None, None
    try:
        if request.operation == "book":
            order, passes = answers(request)
            registration = service.book(request.event_id, name=request.name,
                                        email=request.email, request_id=request.request_id,
                                        tickets=request.tickets,
                                        access_code=request.access_code, answers=order,
                                        pass_answers=passes)
        else:
            registration = service.cancel(request.event_id, email=request.email,
                                          registration_id=request.registration_id,
                                          request_id=request.request_id,
                                          tickets=request.tickets)
        outcome = OK
    except BookingError as refused:
        code, quota = refused.code, getattr(refused, "quota", None)
        outcome = FAIL if code in DEFINITE_CODES else UNKNOWN
    except Exception as error:  # noqa: BLE001 - the history must hold every outcome
        code, outcome = f"error:{type(error).__name__}", UNKNOWN
    record = {"request_id": request.request_id, "operation": request.operation,
              "event_id": request.event_id, "email": request.email,
              "link": request.registration_id, "invoked": invoked, "completed": time.time(),
              "outcome": outcome, "code": code,
              # The order asked (book) or the part to free (cancel); None: as ever.
              "tickets": request.tickets, **({"quota": quota} if quota else {}),
              **({"access_code": request.access_code} if request.access_code else {})}
    if registration is not None:
        record.update(registration_id=registration.registration_id,
                      returned_email=registration.email,
                      returned_event=registration.event_id,
                      returned_request=registration.request_id,
                      returned_status=registration.status,
                      returned_tickets=registration.tickets,
                      # Set when a cancellation freed part of the order (its request id).
                      returned_part=registration.part_request_id)
    return record


def run_thread(service, config: TortureConfig, event_ids: list[str], process: int,
               thread: int, steps: int, order_event_ids: frozenset = frozenset()) -> list[dict]:
    plan = ThreadPlan(config, event_ids, process, thread, order_event_ids)
    records = []
    for _ in range(steps):
        kind, request = plan.next_step()
        if kind == DOUBLE:  # a double click: the same new request twice at once
            twin: list[dict] = []
            other = threading.Thread(target=lambda: twin.append(invoke(service, request)))
            other.start()
            answers = [invoke(service, request)]
            other.join()
            answers += twin
        else:
            answers = [invoke(service, request)]
        for answer in answers:
            answer.update(process=process, thread=thread, step=kind)
            plan.answered(request, answer, answer["outcome"] != UNKNOWN)
        records += answers
    return records


def run_in_process(env: dict, config: TortureConfig, event_ids: list[str], process: int,
                   steps: list[int], start_at: float,
                   order_event_ids: frozenset = frozenset(),
                   door: dict | None = None) -> list[dict]:
    """Entry point of a spawned process: configure Django from ``env``, run its threads
    (``order_event_ids``: the events whose bookings are orders)."""
    os.environ.update(env)
    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "config.settings")
    import django

    django.setup()
    service = _service(config)
    for event_id in event_ids:  # warm the client and the strategy cache
        patiently(lambda: service.get_event(event_id))
    results: list[list[dict]] = [[] for _ in steps]

    def work(thread: int):
        results[thread] = run_thread(service, config, event_ids, process, thread,
                                     steps[thread], order_event_ids)

    time.sleep(max(0.0, start_at - time.time()))
    threads = [threading.Thread(target=work, args=(n,)) for n in range(len(steps))]
    stop_mail = threading.Event()
    mailer = threading.Thread(target=send_mail_until, args=(stop_mail, config.mail_claims))
    mailer.start()
    scanned: list[list[dict]] = [[] for _ in range(door_scanners.SCANNERS if door else 0)]

    def scan(scanner: int):
        scanned[scanner] = door_scanners.scan_until(service, door, process, scanner,
                                                    config.seed, stop_mail)

    scanners = [threading.Thread(target=scan, args=(n,)) for n in range(len(scanned))]
    for each in threads + scanners:
        each.start()
    for each in threads:
        each.join()
    stop_mail.set()
    mailer.join()
    for each in scanners:
        each.join()
    return [record for records in results + scanned for record in records]


def send_mail_until(stop: threading.Event, claims: bool = True, every: float = 0.2) -> None:
    """This process's e-mail sender: every process sends the same outbox at once, so each
    e-mail is claimed against the others (the mail is counted by ``mailbox``). Without
    ``claims``: the control that sends without the atomic counter."""
    from booking.mail.sender import MailSender, send_owed
    from booking.wiring import mail_sender
    from harness.controls import CarelessMailSender

    from .mailbox import COUNTING_BACKEND

    sender = mail_sender(email_backend=COUNTING_BACKEND,
                         sender_class=MailSender if claims else CarelessMailSender)
    while not stop.wait(every):
        try:
            send_owed(sender)
        except Exception:  # noqa: BLE001 - a faulted scan; the next pass tries again
            continue


def _service(config: TortureConfig):
    """The process's service, with the controls the config asks for (the unguarded
    strategy is always there; the request log and write tokens only when switched off)."""
    from booking import wiring
    from harness.controls import control_service

    service = control_service(race_delay_ms=config.unguarded_race_delay_ms,
                              request_history=config.request_history,
                              ambiguity_checks=config.ambiguity_checks)
    if config.careless_door:
        from harness.checkin_controls import careless_door

        careless_door(service)
    if config.careless_access_codes:
        from harness.controls import with_careless_codes

        # A wide window between its read and its write: its overrun must show in a run
        # whose event fills fast (most bookings then end "full" after the read).
        with_careless_codes(service, delay_ms=50)
    wiring.install(service)
    return service


def patiently(read, attempts: int = 20):
    for attempt in range(attempts):
        try:
            return read()
        except Exception:  # noqa: BLE001 - an injected fault outlasted botocore's retries
            if attempt == attempts - 1:
                raise
            time.sleep(0.05)


def decide_until(env: dict) -> None:
    """The stream decider in its own OS process until SIGTERM (or SIGKILL).

    Stopped by a signal, not a shared ``multiprocessing.Event``: a process killed while
    waiting on one leaves its condition waiting for a wake-up that never comes."""
    os.environ.update(env)
    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "config.settings")
    import django

    django.setup()
    import signal

    from booking.wiring import stream_decider

    stop = threading.Event()
    signal.signal(signal.SIGTERM, lambda *_: stop.set())
    stream_decider().run(stop, interval=0.05)
