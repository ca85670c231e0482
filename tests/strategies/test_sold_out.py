""""Full" from a read (booking/strategies/sold_out.py): once a process was refused "full",
its next rejections read instead of writing, and the read, never the hint, decides."""
import time
import uuid
from unittest import mock

import pytest
from django.utils import timezone

from booking.dynamo.metrics import RequestMeter
from booking.errors import AlreadyRegistered, EventFull
from booking.models import Registration
from booking.strategies.base import now_ms
from harness.controls import HINT_TRUSTING
from tests.helpers import book_directly
from tests.orders.test_orders import devconf

READ_FIRST = ("aggregate", "lock_table", "slots")


def registration(event_id, email, request_id=None):
    return Registration(event_id=event_id, email=email, name=email.split("@")[0],
                        registered_at=timezone.now(), registration_id=uuid.uuid4().hex,
                        request_id=request_id or uuid.uuid4().hex)


def own_process(service, name, control=False):
    """A strategy of its own (another process's hints) on the service's tables."""
    return (HINT_TRUSTING[name] if control else type(service.strategy(name)))(store=service.store)


@pytest.mark.parametrize("strategy", READ_FIRST)
def test_book__sold_out_seen__next_rejection_is_one_read_no_write(service, strategy):
    event = service.create_event(name="Tea", capacity=1, strategy=strategy)
    hinted = own_process(service, strategy)
    book_directly(hinted, service, event, registration(event.id, "ada@example.com"))
    with pytest.raises(EventFull):  # the refused write: this process now reads first
        book_directly(hinted, service, event, registration(event.id, "bob@example.com"))

    meter = RequestMeter().install(service.store)
    try:
        with meter.track() as rejection, pytest.raises(EventFull):
            book_directly(hinted, service, event, registration(event.id, "cy@example.com"))
    finally:
        meter.uninstall()

    assert rejection.operations == ["BatchGetItem"]
    assert service.availability(event.id).confirmed == 1


@pytest.mark.parametrize("strategy", READ_FIRST)
@pytest.mark.parametrize("control", [False, True])
def test_book__sold_out_hint_then_seat_freed_elsewhere__books_not_full(service, strategy,
                                                                         control):
    # Sell out and be refused in one process (its hint is set); another process cancels a
    # seat; the hinted process must read, see the seat and book it. The control trusts its
    # hint and tells Cy "full" while a seat is free.
    event = service.create_event(name="Tea", capacity=1, strategy=strategy)
    hinted = own_process(service, strategy, control)
    book_directly(hinted, service, event, registration(event.id, "ada@example.com"))
    with pytest.raises(EventFull):
        book_directly(hinted, service, event, registration(event.id, "bob@example.com"))
    service.cancel(event.id, email="ada@example.com")  # the service: another process

    if control:
        with pytest.raises(EventFull):
            book_directly(hinted, service, event, registration(event.id, "cy@example.com"))
        assert service.availability(event.id).remaining == 1  # "full" with room
    else:
        assert book_directly(hinted, service, event, registration(event.id, "cy@example.com")).email == \
            "cy@example.com"
        assert service.availability(event.id).confirmed == 1
        with pytest.raises(EventFull):  # the read cleared the hint: the write refuses again
            book_directly(hinted, service, event, registration(event.id, "dee@example.com"))


@pytest.mark.parametrize("strategy", READ_FIRST)
def test_book__hinted__repeat_and_registered_person_answered_as_the_write_would(service,
                                                                                 strategy):
    event = service.create_event(name="Tea", capacity=1, strategy=strategy)
    hinted = own_process(service, strategy)
    ada = registration(event.id, "ada@example.com", request_id="ada-form-0001")
    booked = book_directly(hinted, service, event, ada)
    with pytest.raises(EventFull):
        book_directly(hinted, service, event, registration(event.id, "bob@example.com"))

    with mock.patch.object(service.store, "transact_write") as write:
        assert book_directly(hinted, service, event, ada) == booked  # the request row answers the repeat
        with pytest.raises(AlreadyRegistered):
            book_directly(hinted, service, event, registration(event.id, "ada@example.com"))
    write.assert_not_called()


HOLD_MS = 2000


@pytest.mark.parametrize("strategy", READ_FIRST)
def test_book__hinted_and_a_hold_lapsed__read_counts_it_free_and_the_write_takes_it(
        service, strategy):
    event = service.create_event(name="Tea", capacity=1, strategy=strategy)
    hinted = own_process(service, strategy)
    now = now_ms()
    # The hold lasts long enough for the refusal below on a loaded machine (300 ms did
    # not, once), and the test waits for it to lapse.
    until = now + HOLD_MS
    holds, _ = hinted.hold_ops(event, "held@example.com", event.order({"admission": 1}),
                               until=until, now=now)
    service.store.transact_write([op for _, op in holds])
    with pytest.raises(EventFull):  # the hold is live: full, and the hint is set
        book_directly(hinted, service, event, registration(event.id, "bob@example.com"))

    time.sleep(max(until + 100 - now_ms(), 0) / 1000)
    assert book_directly(hinted, service, event, registration(event.id, "cy@example.com")).email == \
        "cy@example.com"
    assert service.availability(event.id).confirmed == 1


@pytest.mark.parametrize("strategy", READ_FIRST)
def test_order__quota_sold_out_seen__next_refusal_reads_and_a_freed_seat_is_booked(service,
                                                                                   strategy):
    event = devconf(service, strategy, workshop=1)
    service.book(event.id, name="Ada", email="ada@example.com", tickets={"workshop-a": 1})
    with pytest.raises(EventFull) as refused:
        service.book(event.id, name="Bob", email="bob@example.com", tickets={"workshop-a": 1})
    assert refused.value.quota == "workshop-a"

    meter = RequestMeter().install(service.store)
    try:
        with meter.track() as rejection, pytest.raises(EventFull) as again:
            service.book(event.id, name="Cy", email="cy@example.com",
                         tickets={"conference": 1, "workshop-a": 1})
    finally:
        meter.uninstall()
    assert rejection.operations == ["BatchGetItem"] and again.value.quota == "workshop-a"
    # Another quota has room: an order drawing only on it is written as ever.
    service.book(event.id, name="Dee", email="dee@example.com", tickets={"workshop-b": 1})

    service.cancel(event.id, email="ada@example.com")
    assert service.book(event.id, name="Eve", email="eve@example.com",
                        tickets={"workshop-a": 1}).tickets == {"workshop-a": 1}
