"""A re-ask's refusal stays true: the earlier askings are fenced before it is told.

Against DynamoDB Local behind the fault proxy. Bob's first asking's transaction is held in
flight past the request's deadline, and the store throttles everything meanwhile, so the
fence that would close that attempt cannot be written: the answer is "pending, ask
again" with the attempt left unfenced. Carol takes the last seat; Bob asks again with the
same request id and is refused "full"; Carol cancels; the held attempt is delivered, byte
for byte. The service fences the request before it tells the re-ask "full" (the fence
closes every attempt of the earlier askings: ``Request.generation``), so the late attempt
books nothing. The control, ``UnfencedReaskLog``, tells the re-ask's refusal without that
fence: the late attempt books the person told "full" (lock_table, slots, shards; so did
aggregate on the code before the fence, whose late attempt reads no version). ``streams``
refuses nobody at the asking: its re-ask is accepted pending, and the late attempt is
refused by the re-ask's request row.
"""
import time
import uuid

import pytest

from booking.dynamo.access import time_left
from booking.errors import EventFull, OutcomeUnknown, StillDeciding
from booking.wiring import service_from_settings
from harness.controls import UnfencedReaskLog
from localdynamo.faults import THROTTLE
from tests.conftest import GUARDED, proxied_tables
from tests.service.test_fence import HeldWrite

BOB = "bob@example.com"


@pytest.fixture
def proxied(local_server, settings):
    """The service on a fault proxy in front of DynamoDB Local, a 1 s deadline."""
    settings.BOOKING_REQUEST_DEADLINE = 1.0
    settings.BOOKING_SHED_SECONDS = 0.1
    with proxied_tables(local_server, "f") as proxied:
        yield proxied


def held_past_the_deadline(proxy, service, markers) -> HeldWrite:
    """The write naming ``markers``, held: the hold outlasts the part of the deadline
    before the fence's reserve, and the store then throttles everything, so the fence in
    the reserve cannot be written."""
    def past_the_deadline():
        time.sleep(max(0.0, time_left()) + 0.05)
        proxy.injector.script(THROTTLE, 10_000)

    return HeldWrite(service.store.client, markers, past_the_deadline)


class Counted:
    """The entry point's limits as the API runs them (``Admission``), kept in memory: each
    request id counted once, its first counting a first asking."""

    def __init__(self, counted: dict, request_id: str):
        self.counted, self.request_id, self.rows = counted, request_id, None

    def reads(self):
        return []

    def found(self, rows):
        self.rows = rows

    def asked(self):
        at = self.counted.get(self.request_id)
        return (True, at) if at is not None else (False, None)

    def count(self):
        if self.request_id in self.counted:
            return True
        self.counted[self.request_id] = time.time()
        return False


def told_full_on_a_reask(proxy, service, strategy, *, admitted=False):
    """Bob's first attempt is held past the deadline with its fence throttled away; Carol
    takes the last seat; Bob asks again and is told "full"; Carol cancels; the held attempt
    arrives. Returns (the event, Bob's two answers, the held attempt's HTTP status, Bob's seat).

    ``admitted``: Bob asks as the API's callers do, with the limits (``Counted``) run by
    the booking: the first asking is known to be the first; Dan is told "full" before
    Bob asks again, so Bob's re-ask is answered from the read the limits ride in."""
    event = service.create_event(name="Last seat", capacity=1, strategy=strategy)
    request_id, counted = uuid.uuid4().hex, {}
    markers = [BOB, f'{event.id}#0"'] if strategy == "shards" else [BOB]
    held = held_past_the_deadline(proxy, service, markers)
    first = second = None

    def bob():
        if admitted:
            return service.register(event.id, name="Bob", email=BOB, request_id=request_id,
                                    admission=Counted(counted, request_id))
        return service.book(event.id, name="Bob", email=BOB, request_id=request_id)

    try:
        try:
            bob()
        except OutcomeUnknown as pending:
            first = pending
        finally:
            proxy.injector.clear_script()
        assert held.held is not None
        time.sleep(0.2)  # the event's cool-down after the throttle
        service.book(event.id, name="Carol", email="carol@example.com")
        if admitted:
            with pytest.raises(EventFull):
                service.book(event.id, name="Dan", email="dan@example.com")
            assert service.strategy(strategy).sold_out_lately(event.id)
        try:
            bob()
        except EventFull as full:
            second = full
    finally:
        assert held.held is not None
        service.cancel(event.id, email="carol@example.com")
        status = held.send()
    return event, (first, second), status, service.find_registration(event.id, email=BOB)


@pytest.mark.parametrize("strategy,admitted", [*((s, False) for s in GUARDED),
                                               ("shards", True), ("lock_table", True)])
def test_reask_told_full__the_earlier_unfenced_attempt_books_nothing(proxied, strategy,
                                                                      admitted):
    proxy, store = proxied
    service = service_from_settings(store=store)

    event, (first, second), status, bob = told_full_on_a_reask(proxy, service, strategy,
                                                               admitted=admitted)

    assert isinstance(first, StillDeciding), first  # pending, and left unfenced
    assert isinstance(second, EventFull), second
    assert status == 400 and bob is None  # refused by the re-ask's fence
    assert service.availability(event.id).confirmed == 0


@pytest.mark.parametrize("strategy,admitted", [
    *((s, False) for s in ("aggregate", "lock_table", "slots", "shards")), ("shards", True)])
def test_control__reask_refused_without_the_fence__books_the_person_told_full(proxied,
                                                                            strategy,
                                                                            admitted):
    proxy, store = proxied
    service = service_from_settings(store=store, requests=UnfencedReaskLog(store))

    event, (first, second), status, bob = told_full_on_a_reask(proxy, service, strategy,
                                                               admitted=admitted)

    assert isinstance(first, StillDeciding) and isinstance(second, EventFull)
    assert status == 200 and bob is not None and bob.name == "Bob"
