"""After a sell-out, the streams decider rejects a page from one consistent read of the
event: no write on the event item (the hot item confirmations write)."""
import pytest

from booking.strategies.streams.decider import StreamDecider
from harness.controls import StaleFullStreamsStrategy

pytestmark = pytest.mark.usefixtures("server_store")


@pytest.fixture
def service():
    from booking.wiring import get_booking_service

    return get_booking_service()


class EventTableCalls:
    """The requests this process's client sends that name the events table: (operation,
    consistent read?) for reads, (operation, item kinds) for transactions touching it."""

    def __init__(self, store, events_table):
        self.events_table, self.calls, self.transactions = events_table, [], 0
        self._events = store.client.meta.events
        self._events.register("before-parameter-build.dynamodb", self._record, unique_id="event-calls")

    def _record(self, params=None, model=None, **kwargs):
        if model.name == "TransactWriteItems":
            self.transactions += 1
            kinds = [kind for op in params["TransactItems"] for kind, body in op.items()
                     if body["TableName"] == self.events_table]
            if kinds:
                self.calls.append((model.name, kinds))
        elif params.get("TableName") == self.events_table:
            self.calls.append((model.name, params.get("ConsistentRead", False)))

    def close(self):
        self._events.unregister("before-parameter-build.dynamodb", unique_id="event-calls")


def sold_out(service, decider):
    """Capacity 1: Ann confirmed, Bo rejected (the decider's first rejection, by a write)."""
    event = service.create_event(name="Queue", capacity=1, strategy="streams")
    for name in ("Ann", "Bo"):
        service.book(event.id, name=name, email=f"{name.lower()}@example.com")
    assert decider.run_pass() == ({"confirmed": 1, "rejected": 1}, True)
    return event


def test_decide__page_after_the_sell_out__rejected_from_one_read_no_event_write(service):
    strategy = service.strategy("streams")
    decider = StreamDecider(strategy)
    event = sold_out(service, decider)
    people = [f"p{n}@example.com" for n in range(6)]
    for email in people:
        service.book(event.id, name="P", email=email)

    calls = EventTableCalls(service.store, strategy.events.name)
    try:
        outcomes = decider.run_pass()
    finally:
        calls.close()

    assert outcomes == ({"rejected": 6}, True)
    assert calls.calls == [("GetItem", True)]  # one consistent read, nothing written there
    assert calls.transactions == 6  # each rejection: its registration and its e-mail
    assert {service.find_registration(event.id, email=e).status for e in people} == {"rejected"}


def cancellation_between_pages(service, strategy):
    """Sold out, a page rejected from a read; Ann cancels, then Eve asks: Eve's status."""
    decider = StreamDecider(strategy)
    event = sold_out(service, decider)
    for name in ("Cy", "Dee"):
        service.book(event.id, name=name, email=f"{name.lower()}@example.com")
    assert decider.run_pass() == ({"rejected": 2}, True)
    service.cancel(event.id, email="ann@example.com")
    service.book(event.id, name="Eve", email="eve@example.com")
    decider.run_pass()
    return service.find_registration(event.id, email="eve@example.com").status


def test_decide__seat_freed_between_two_pages__next_page_reads_again_and_confirms(service):
    assert cancellation_between_pages(service, service.strategy("streams")) == "confirmed"


def test_control__read_full_kept_across_pages__refuses_the_freed_seat(service):
    stale = StaleFullStreamsStrategy(store=service.store)

    assert cancellation_between_pages(service, stale) == "rejected"


def test_decide__one_by_one__each_its_own_read(service):
    # decide() (the harness, one Lambda record at a time) is a page of one: it reads.
    strategy = service.strategy("streams")
    event = sold_out(service, StreamDecider(strategy))
    for email in ("cy@example.com", "dee@example.com"):
        service.book(event.id, name="P", email=email)
    pending = [service.find_registration(event.id, email=e)
               for e in ("cy@example.com", "dee@example.com")]

    calls = EventTableCalls(service.store, strategy.events.name)
    try:
        outcomes = [strategy.decide(registration) for registration in pending]
    finally:
        calls.close()

    assert outcomes == ["rejected", "rejected"]
    assert calls.calls == [("GetItem", True), ("GetItem", True)]
