"""An event's cancellations, counted inside each cancellation's own write
(booking/exactly_once/cancellations.py), through the service on DynamoDB Local."""
import threading
import uuid
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from datetime import datetime, timezone
from unittest import mock

import pytest

from booking.dynamo.tables import EVENT_LOCKS
from booking.errors import InvalidBooking, StoreUnavailable
from booking.exactly_once.cancellations import (ORDERS, SEATS, SHARDS, CancellationCount,
                                                shard_key)
from booking.models import Event
from booking.service import bookings as bookings_module
from booking.service.cancellations import Cancellations, Cancelled
from tests import conformance
from tests.helpers import table
from tests.strategies.test_streams import decide_all

pytestmark = pytest.mark.usefixtures("server_store")


@pytest.fixture
def service():
    from booking.wiring import get_booking_service

    return get_booking_service()


def devconf(service, strategy, capacity=10):
    return service.create_event(
        name="DevConf", capacity=capacity, strategy=strategy, quotas={"workshop-a": 5},
        ticket_types={"conference": [], "workshop-a": ["workshop-a"]}, max_per_order=4)


def book(service, event, who, tickets):
    return service.book(event.id, name=who.title(), email=f"{who}@example.com",
                        tickets=tickets, request_id=f"book-{who}-{uuid.uuid4().hex[:8]}")


def confirm(service, event):
    """Orders on the streams strategy are decided by its decider: run it."""
    if event.strategy == "streams":
        decide_all(service)
    assert all(r.is_confirmed for r in service.registrations(event.id))


def counted(service, event) -> Cancelled:
    return service.cancellation_counts([event.id])[event.id]


@pytest.mark.parametrize("strategy", conformance.ALL)
def test_cancel__whole_repeated_and_part__each_counted_once(service, strategy):
    event = devconf(service, strategy)
    book(service, event, "ada", {"conference": 2, "workshop-a": 1})
    book(service, event, "bo", {"conference": 3})
    confirm(service, event)
    assert counted(service, event) == Cancelled(0, 0)

    first = service.cancel(event.id, email="ada@example.com", request_id="cancel-ada-1")
    assert service.cancel(event.id, email="ada@example.com", request_id="cancel-ada-1") == first
    assert counted(service, event) == Cancelled(orders=1, seats=3)

    part = dict(email="bo@example.com", tickets={"conference": 1}, request_id="cancel-bo-1")
    assert service.cancel(event.id, **part).seats == 1
    service.cancel(event.id, **part)  # a repeat of the part answers it again, counts nothing
    assert counted(service, event) == Cancelled(orders=1, seats=4)  # the order is kept

    rest = service.cancel(event.id, email="bo@example.com", request_id="cancel-bo-2")
    assert rest.seats == 2 and service.availability(event.id).confirmed == 0
    assert counted(service, event) == Cancelled(orders=2, seats=6)


def test_cancel__pending_request_withdrawn__not_a_cancellation(service):
    event = devconf(service, "streams")
    book(service, event, "ada", {"conference": 2})
    withdrawn = service.cancel(event.id, email="ada@example.com")

    assert withdrawn.status == "pending"
    assert counted(service, event) == Cancelled(0, 0)


@pytest.mark.parametrize("by_link", [False, True], ids=["read_first", "one_write"])
def test_cancel__answer_lost_then_resent__counted_once(service, by_link):
    # The first write applied and its answer was lost; the read-back fails too, so the
    # cancellation is sent again. Read first, it finds the order gone and its request row;
    # by a link's registration (one write, no read), the re-sent write is refused by its
    # own request row. Either way the answer is the first one and nothing counts twice.
    event = (service.create_event(name="Tea", capacity=5, strategy="lock_table") if by_link
             else devconf(service, "lock_table"))
    booked = book(service, event, "ada", None if by_link else {"conference": 2})
    link = dict(registration_id=booked.registration_id, registration=booked) if by_link else {}
    strategy, sent, reads = service.strategy("lock_table"), [], []
    real_cancel, real_read = strategy.cancel, service.requests.read

    def read_back_fails_once(*args, **kwargs):
        reads.append(1)
        if len(reads) == 1:
            raise StoreUnavailable()
        return real_read(*args, **kwargs)

    def applied_then_lost(*args, **kwargs):
        sent.append(1)
        answer = real_cancel(*args, **kwargs)
        if len(sent) == 1:
            raise StoreUnavailable()
        return answer

    with mock.patch.object(strategy, "cancel", applied_then_lost), \
            mock.patch.object(service.requests, "read", read_back_fails_once), \
            mock.patch.object(bookings_module, "RESEND_DELAYS", (0,)):
        removed = service.cancel(event.id, email="ada@example.com", request_id="cancel-lost",
                                 **link)

    assert len(sent) == 2 and removed.registration_id == booked.registration_id
    assert counted(service, event) == Cancelled(orders=1, seats=booked.seats)


def test_counts__several_events_one_read__deleted_event_forgets_its_count(service):
    tea, talk = devconf(service, "aggregate"), devconf(service, "slots")
    book(service, tea, "ada", {"conference": 1})
    service.cancel(tea.id, email="ada@example.com")

    assert service.cancellation_counts([tea.id, talk.id, tea.id]) == {
        tea.id: Cancelled(1, 1), talk.id: Cancelled(0, 0)}
    service.delete_event(tea.id)
    assert all(table(EVENT_LOCKS).get(shard_key(tea.id, n)) is None for n in range(SHARDS))


def test_cancel__largest_order_slots_allows__every_rider_fits_in_one_write(service):
    # slots writes one member per seat and quota: the largest order it accepts, cancelled
    # whole with every rider a cancellation can carry (its passes, its code's use given
    # back, its answers' removal, its count), still fits DynamoDB's 100 members.
    most = next(n for n in range(50, 0, -1) if fits(service, n))
    event = service.create_event(name="Big", capacity=100, strategy="slots",
                                 quotas={"ws": 50}, ticket_types={"w": ["ws"]},
                                 max_per_order=most)
    service.set_questions(event.id, [{"id": "diet", "label": "Diet"}], expected_version=0)
    service.create_access_codes(event.id, codes=["BIG-ORDER"], max_uses=1)
    service.book(event.id, name="Ada", email="ada@example.com", tickets={"w": most},
                 access_code="BIG-ORDER")

    assert service.cancel(event.id, email="ada@example.com").seats == most
    assert counted(service, event) == Cancelled(orders=1, seats=most)
    assert service.access_codes(event.id)[0].uses == 0


def fits(service, max_per_order) -> bool:
    try:
        service.strategy("slots").check_order_shape(Event(
            id="e", name="E", capacity=100, strategy="slots", starts_at=None,
            created_at=datetime.now(timezone.utc), version=1, quotas={"ws": 50}, ticket_types={"w": ["ws"]}, max_per_order=max_per_order))
    except InvalidBooking:
        return False
    return True


# --- many cancellations at once --------------------------------------------------------
class ReadTogether:
    """Holds each caller until every one of ``parties`` has read (or a moment passed)."""

    def __init__(self, parties: int):
        self.left, self.condition = parties, threading.Condition()

    def wait(self):
        with self.condition:
            self.left -= 1
            self.condition.notify_all()
            self.condition.wait_for(lambda: self.left <= 0, timeout=5)


@dataclass(frozen=True)
class CarelessCount(CancellationCount):
    """The control: reads the count, then writes it plus one, without a condition (the
    read-modify-write a counter must not be), all readers reading before any writes."""

    together: ReadTogether | None = None

    def members(self, answer, *, notice=True):
        key = shard_key(answer.event_id, 0)
        item = self.table.get(key) or {}
        if self.together is not None:
            self.together.wait()
        return [("cancellations", ("Update", self.table.update_op(
            key, f"SET {ORDERS} = :orders, {SEATS} = :seats",
            values={":orders": int(item.get(ORDERS, 0)) + 1,
                    ":seats": int(item.get(SEATS, 0)) + answer.seats})))]


class CarelessCancellations(Cancellations):
    def __init__(self, store, together):
        super().__init__(store)
        self.together = together

    def rider(self, request_id):
        return CarelessCount(self.table, request_id, self.together)


@pytest.mark.parametrize("careless", [False, True], ids=["rider", "careless_control"])
@pytest.mark.parametrize("strategy", ["slots", "shards"])
def test_many_threads_cancel_orders_of_one_event__count_exact(service, strategy, careless):
    people = 16
    event = devconf(service, strategy, capacity=2 * people)
    for n in range(people):
        book(service, event, f"p{n:02d}", {"conference": 2})
    if careless:  # the control: the same check must see the lost counts
        service.cancellations = CarelessCancellations(service.store, ReadTogether(people))
    start = threading.Barrier(people)

    def cancel(n):
        start.wait(timeout=10)
        return service.cancel(event.id, email=f"p{n:02d}@example.com",
                              request_id=f"cancel-{event.id}-{n}")

    with ThreadPoolExecutor(people) as pool:
        removed = list(pool.map(cancel, range(people)))

    assert service.availability(event.id).confirmed == 0
    assert sum(r.seats for r in removed) == 2 * people
    exact = counted(service, event) == Cancelled(orders=people, seats=2 * people)
    assert exact is not careless
    if not careless:  # the counts were spread over the event's counter items
        used = [n for n in range(SHARDS) if table(EVENT_LOCKS).get(shard_key(event.id, n))]
        assert len(used) > 1
