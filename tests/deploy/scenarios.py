"""What each deployed process does to the tables, as runnable scenarios.

``web_scenario`` drives everything the web role covers: the public pages' and the admin's
service calls for every strategy (book, repeat, refuse, cancel, waiting list, edits,
deletes, audits and repairs), the booking worker's passes with ``--no-decider`` (e-mails
owed, waiting-list offers), ``replay_failed``, the rate limits and the stream decider's lag
as the admin shows it. ``lambda_decider_scenario`` runs the Lambda handler on a batch of
real stream records; ``worker_decider_scenario`` runs the worker's own decider (what the
web role needs extra when no Lambda decides).
"""
import json
import time
from contextlib import suppress
from datetime import datetime

from booking import errors, wiring
from booking.mail import sender as mail
from booking.mail.replay import replay_failed
from booking.waitlist import engine as waitlist_engine

STRATEGIES = ("aggregate", "lock_table", "slots", "streams", "shards")


def web_scenario(service, decide) -> None:
    """``decide()`` decides the pending streams bookings (outside what is recorded)."""
    for strategy in STRATEGIES:
        _event_lifecycle(service, strategy, decide)
    sender = wiring.mail_sender(service)
    mail.flush()
    waitlist_engine.flush()
    mail.send_owed(sender)
    service.waiting_list_pass()
    replay_failed(sender, wiring.leases(service), dry_run=False)
    counters = wiring.rate_counters()
    counters.hit("signup:scenario", window_start=0, window_seconds=600)
    counters.hits("signup:scenario", window_start=0)
    service.decider_lag()
    list(service.iter_event_ids())
    service.list_events()
    service.events_page(limit=5, search="Scenario")
    _webhooks(service)
    _checkin(service)
    _questions(service)


def _checkin(service) -> None:
    """Lists, scans (entry, exit, a repeat, a room's limit), an offline queue with a
    conflict, a partial and a whole cancellation's passes, counts, the log, the audit."""
    import uuid
    from datetime import timezone

    event = service.create_event(name="Scenario door", capacity=5, strategy="lock_table",
                                 ticket_types={"day": [], "vip": []}, max_per_order=3)
    person = service.book(event.id, name="Door", email="door@example.com",
                          tickets={"day": 2, "vip": 1})
    room = service.create_checkin_list(event.id, name="Room", occupancy_limit=1,
                                       allow_reentry=True, request_id="scenario-room")
    service.create_checkin_list(event.id, name="Room", occupancy_limit=1, allow_reentry=True,
                                request_id="scenario-room")
    codes = [p.code for p in service.passes(person)]
    nonce = uuid.uuid4().hex
    service.scan(room.id, codes[0], nonce=nonce, gate="a")
    service.scan(room.id, codes[0], nonce=nonce, gate="a")
    service.scan(room.id, codes[1], nonce=uuid.uuid4().hex)  # the room is full
    service.scan(room.id, codes[0], direction="exit", nonce=uuid.uuid4().hex)
    now = datetime.now(timezone.utc)
    service.scan_batch(room.id, [{"code": codes[2], "nonce": uuid.uuid4().hex, "gate": g,
                                  "scanned_at": now} for g in ("b", "c")])
    service.cancel(event.id, email="door@example.com", tickets={"day": 1})
    service.passes(service.find_registration(event.id, email="door@example.com"))
    service.checkin_lists(event.id)
    service.checkin_list(room.id)
    service.scan_log(room.id)
    service.checkin_conflicts(room.id)
    service.audit(event.id)
    service.cancel(event.id, email="door@example.com")


def _questions(service) -> None:
    """Questions set, answers booked, read, edited, exported, cancelled, purged."""
    event = service.create_event(name="Scenario questions", capacity=3, strategy="lock_table",
                                 starts_at="2040-01-01T10:00:00+00:00")
    service.set_questions(event.id, [{"id": "diet", "label": "Diet"}], expected_version=0)
    kept = service.book(event.id, name="Q1", email="q1@example.com", answers={"diet": "Vegan"})
    service.book(event.id, name="Q2", email="q2@example.com", answers={"diet": "Fish"})
    service.edit_answers(kept, answers={"diet": "Vegetarian"},
                         expected_version=service.answers(kept).version)
    service.answers_for_event(event.id)
    service.cancel(event.id, email="q2@example.com")
    service.events.update({"event_id": event.id}, "SET starts_at = :s",
                          values={":s": "2020-01-01T10:00:00+00:00"})
    service.catalog.forget(event.id)
    service.purge_answers(event.id, after_days=1)
    service.delete_event(event.id)


def _webhooks(service) -> None:
    """Register, fan out, fail (and disable), enable, deliver, read the log, remove."""
    from booking.webhooks.delivery import RetryRule

    def public_dns(host, port):  # the receiver's name, as the internet would resolve it
        return ["93.184.215.14"]

    registry = wiring.webhook_registry(service, resolver=public_dns)
    endpoint = registry.register(url="https://hooks.example.com/scenario",
                                 events=["registration.created"])
    event = service.create_event(name="Scenario webhooks", capacity=2, strategy="lock_table")
    service.book(event.id, name="Hook", email="hook@example.com")
    mail.send_owed(wiring.mail_sender(service))
    at_once = RetryRule(base_seconds=0.001, max_seconds=0.001, disable_after_seconds=0.001)
    wiring.webhook_sender(service, post=lambda *a, **k: 500, retry=at_once,
                          resolver=public_dns).run_pass()
    registry.enable(endpoint.id)
    time.sleep(0.01)
    wiring.webhook_sender(service, post=lambda *a, **k: 204, resolver=public_dns).run_pass()
    registry.get(endpoint.id)
    registry.deliveries(endpoint.id)
    registry.remove(endpoint.id)


def _event_lifecycle(service, strategy, decide) -> None:
    event = service.create_event(name=f"Scenario {strategy}", capacity=2, strategy=strategy)
    booked = [service.book(event.id, name=f"P{n}", email=f"p{n}@example.com",
                           request_id=f"{strategy}-{n}-req") for n in range(2)]
    service.book(event.id, name="P0", email="p0@example.com", request_id=f"{strategy}-0-req")
    with suppress(errors.BookingError):
        service.book(event.id, name="P0", email="p0@example.com")  # already registered
    if strategy == "streams":
        service.place_in_line(booked[1])
        decide()  # so that the event is full
    else:
        with suppress(errors.BookingError):
            service.book(event.id, name="P9", email="p9@example.com")  # full
    service.get_event(event.id)
    service.find_registration(event.id, email="p0@example.com")
    service.availability(event.id)
    service.availabilities([event])
    service.registrations(event.id)
    service.registrations_page(event.id, limit=1)
    list(service.iter_registrations(event.id, search="p1"))
    with suppress(errors.BookingError):
        service.join_waiting_list(event.id, name="W1", email="w1@example.com")
    with suppress(errors.BookingError):
        service.join_waiting_list(event.id, name="W2", email="w2@example.com")
    with suppress(errors.BookingError):  # the web's double opt-in: ask, then the link
        service.request_to_join_waiting_list(event.id, name="W3", email="w3@example.com")
        service.confirm_waiting_list(event.id, name="W3", email="w3@example.com",
                                     request_id=f"{strategy}-ask-w3", requested_at=time.time())
    service.waiting_list(event.id)
    service.waiting_entry(event.id, email="w1@example.com")
    service.cancel(event.id, email="p0@example.com", request_id=f"{strategy}-cancel")
    if strategy == "streams":
        service.book(event.id, name="P3", email="p3@example.com")
        service.cancel(event.id, email="p3@example.com")  # withdraws a pending request
    waitlist_engine.flush()
    service.offer_seats(event.id)
    with suppress(errors.BookingError):
        service.accept_offer(event.id, email="w1@example.com")
    with suppress(errors.BookingError):
        service.leave_waiting_list(event.id, email="w2@example.com")
    with suppress(errors.BookingError):  # an organizer's removal owes its e-mail
        service.remove_from_waiting_list(event.id, email="w3@example.com")
    current = service.get_event(event.id)
    service.update_event(event.id, expected_version=current.version, capacity=3,
                         name=f"Scenario {strategy} (bigger)")
    waitlist_engine.flush()
    _access_codes(service, strategy, decide)
    service.audit(event.id)
    service.repair(event.id)
    started = service.create_event(name=f"Scenario {strategy} started", capacity=1,
                                   strategy=strategy, starts_at="2001-01-01 10:00")
    with suppress(errors.BookingError):
        service.book(started.id, name="Late", email="late@example.com")  # reads the request row
    doomed = service.create_event(name=f"Scenario {strategy} gone", capacity=1,
                                  strategy=strategy)
    service.book(doomed.id, name="Gone", email="gone@example.com")
    service.delete_event(doomed.id)


def _access_codes(service, strategy, decide) -> None:
    """Codes created, used, refused, given back, listed, revoked; seats reserved for one."""
    event = service.create_event(name=f"Scenario {strategy} codes", capacity=3,
                                 strategy=strategy)
    service.create_access_codes(event.id, codes=["SCENARIO-CODE"], max_uses=1)
    service.create_access_codes(event.id, count=1, reserved_seats=1)
    service.book(event.id, name="C1", email="c1@example.com", access_code="scenario-code")
    with suppress(errors.BookingError):
        service.book(event.id, name="C2", email="c2@example.com", access_code="scenario-code")
    service.cancel(event.id, email="c1@example.com")
    listed = service.access_codes(event.id)
    reserved = next(code for code in listed if code.code != "SCENARIO-CODE")
    with suppress(errors.BookingError):
        service.book(event.id, name="C3", email="c3@example.com", access_code=reserved.code)
    service.access_code_unlocks(event.id, "SCENARIO-CODE")
    service.revoke_access_code(event.id, "SCENARIO-CODE")
    service.access_code_pass()
    if strategy == "streams":
        decide()
    service.audit(event.id)
    service.repair(event.id)
    service.delete_event(event.id)


def stream_records(service) -> list[dict]:
    """The registrations stream's records as a Lambda event carries them (JSON-safe)."""
    store = service.store
    arn = store.call("describe_table", TableName=f"{store.table_prefix}stream_registrations"
                     )["Table"]["LatestStreamArn"]
    streams = store.streams_client
    records = []
    for shard in streams.describe_stream(StreamArn=arn)["StreamDescription"]["Shards"]:
        position = streams.get_shard_iterator(StreamArn=arn, ShardId=shard["ShardId"],
                                              ShardIteratorType="TRIM_HORIZON")["ShardIterator"]
        while position:
            page = streams.get_records(ShardIterator=position)
            records += page["Records"]
            position = page.get("NextShardIterator") if page["Records"] else None
    return json.loads(json.dumps(records, default=_epoch))


def _epoch(value):
    if isinstance(value, datetime):
        return value.timestamp()
    raise TypeError(value)


def lambda_decider_scenario(service, records) -> dict:
    from booking import lambda_handler

    lambda_handler._lambda_decider = None
    with wiring.use_service(service):
        answer = lambda_handler.handler({"Records": records}, None)
        again = lambda_handler.handler({"Records": records}, None)
    assert answer == again == {"batchItemFailures": []}
    return answer


def book_pending(service, people=3, capacity=2):
    event = service.create_event(name="Scenario decider", capacity=capacity,
                                 strategy="streams")
    service.create_access_codes(event.id, codes=["DECIDER-CODE"], max_uses=people)
    for n in range(people):  # the last is rejected: its code's use goes back with it
        service.book(event.id, name=f"D{n}", email=f"d{n}@example.com",
                     access_code="DECIDER-CODE" if n == people - 1 else None)
    return event
