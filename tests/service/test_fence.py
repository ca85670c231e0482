"""A refusal told after a lost attempt stays true: the attempt is fenced first.

An attempt whose answer was lost (botocore timed out and sent the write again) may still be
in flight: the re-send is refused ("full"), a seat is freed, and then the first attempt
lands. The service fences the request before it tells the refusal
(``RequestLog.fence``), so the late attempt applies nothing. Here the lost attempt is held
on its way out of botocore (a read timeout raised in its place) and sent, byte for byte,
after the seat was freed, against DynamoDB Local. The control, ``UnfencedRequestLog``,
tells the refusal without the fence: the late attempt books the person told "full" (on
lock_table, slots and shards; aggregate's event version, changed by the seat taken and
freed meanwhile, refuses that late attempt by itself).
"""
import uuid

import pytest
from botocore.exceptions import ReadTimeoutError
from botocore.httpsession import URLLib3Session

from booking.errors import EventFull
from booking.wiring import get_booking_service
from harness.controls import UnfencedRequestLog
from tests.conftest import GUARDED, use_test_service

BOB = "bob@example.com"


class HeldWrite:
    """Holds the first transaction that names every one of ``markers`` on ``client``: runs
    ``meanwhile``, then fails it with a read timeout (botocore sends it again); ``send``
    delivers it late."""

    def __init__(self, client, markers: list[str], meanwhile):
        self.client, self.meanwhile = client, meanwhile
        self.markers = [marker.encode() for marker in markers]
        self.held = None
        self.unique_id = f"held-{uuid.uuid4().hex}"
        client.meta.events.register("before-send.dynamodb.TransactWriteItems", self._hold,
                                    unique_id=self.unique_id)

    def _hold(self, request, **_):
        if self.held is not None or not all(m in request.body for m in self.markers):
            return None
        self.held = request
        self.meanwhile()
        raise ReadTimeoutError(endpoint_url=request.url)

    def send(self) -> int:
        self.client.meta.events.unregister("before-send.dynamodb.TransactWriteItems",
                                           unique_id=self.unique_id)
        return URLLib3Session().send(self.held).status_code


def told_full_then_late_attempt(service, strategy):
    """Bob's booking is refused "full" after his first attempt was held; the seat is freed;
    the held attempt is delivered. Returns (Bob's answer, Bob's stored registration)."""
    event = service.create_event(name="Last seat", capacity=1, strategy=strategy)
    take_last_seat = lambda: service.book(  # noqa: E731
        event.id, name="Carol", email="carol@example.com", request_id=uuid.uuid4().hex)
    # shards: the attempt on the shard that owns the seat (a dry one's is refused anyway)
    markers = [BOB, f'{event.id}#0"'] if strategy == "shards" else [BOB]
    held = HeldWrite(service.store.client, markers, take_last_seat)
    try:
        with pytest.raises(EventFull) as told:
            service.book(event.id, name="Bob", email=BOB, request_id=uuid.uuid4().hex)
    finally:
        assert held.held is not None
        service.cancel(event.id, email="carol@example.com")
        status = held.send()
    return event, told.value, status, service.find_registration(event.id, email=BOB)


@pytest.mark.parametrize("strategy", GUARDED)
def test_full_after_a_lost_attempt__the_late_attempt_books_nothing(server_store, strategy):
    service = get_booking_service()

    event, told, status, bob = told_full_then_late_attempt(service, strategy)

    assert told.quota == "capacity"
    assert status == 400  # refused by the fence
    assert bob is None
    assert service.availability(event.id).confirmed == 0


@pytest.mark.parametrize("strategy", ("lock_table", "slots", "shards"))
def test_unfenced_control__the_late_attempt_books_the_person_told_full(server_store, strategy):
    store = get_booking_service().store
    control = use_test_service(store, requests=UnfencedRequestLog(store))

    _, told, status, bob = told_full_then_late_attempt(control, strategy)

    assert isinstance(told, EventFull) and status == 200
    assert bob is not None and bob.name == "Bob"
