"""After a sell-out, the cool-down lets "full" through: while an event's writes are turned
away (the store throttled them a moment ago), a booking this process would answer "full"
from a consistent read (its sold-out hint is set) is answered by that read, with no write;
if the read finds a seat, the cool-down turns the booking away before any write, as
anyone else's. On DynamoDB Local, each booking's store requests counted (``RequestMeter``).

The control is a strategy that never says it lately saw the event sold out (as before):
the people who would be told "full" are turned away with the rest.
"""
import pytest

from booking.dynamo.metrics import RequestMeter
from booking.errors import EventFull, Overloaded
from booking.service.shedding import CoolDown
from booking.wiring import get_booking_service
from harness.controls import control_service
from tests.orders.test_orders import devconf


@pytest.fixture
def service(server_store):
    return get_booking_service()


def tracked(service, call):
    """(the error ``call`` raised or its result, the store requests it sent)."""
    meter = RequestMeter().install(service.store)
    try:
        with meter.track() as tally:
            try:
                result = call()
            except Exception as error:  # noqa: BLE001 - the answer under test
                result = error
    finally:
        meter.uninstall()
    return result, tally


def sold_out_then_throttled(service, strategy, **tickets):
    """An event of one seat (or an order's quota) sold, a second person refused "full"
    here (the hint), then the store's throttle: the cool-down runs."""
    if tickets:
        event = devconf(service, strategy, workshop=1)
    else:
        event = service.create_event(name="Drop", capacity=1, strategy=strategy)
    service.book(event.id, name="Ada", email="ada@example.com", **tickets)
    with pytest.raises(EventFull):
        service.book(event.id, name="Bo", email="bo@example.com", **tickets)
    service.bookings.cool_down = CoolDown(30.0)
    service.bookings.cool_down.throttled(event.id)
    return event


def book_during_cool_down(service, event, email, **tickets):
    def book():
        service.turn_away_if_busy(event.id)  # the entry point's first question
        return service.book(event.id, name="Someone", email=email, **tickets)
    return tracked(service, book)


def assert_full_from_a_read(answer, tally):
    assert isinstance(answer, EventFull), answer
    assert tally.writes == 0 and tally.operations == ["BatchGetItem"], tally.operations


PLAIN = ["aggregate", "lock_table", "slots", "shards"]
ORDERS = {"tickets": {"workshop-a": 1}}


@pytest.mark.parametrize("strategy", PLAIN)
def test_sold_out_hint__cool_down__full_from_one_read_no_write(service, strategy):
    event = sold_out_then_throttled(service, strategy)

    assert_full_from_a_read(*book_during_cool_down(service, event, "cy@example.com"))


@pytest.mark.parametrize("strategy", ["aggregate", "lock_table"])
def test_sold_out_quota_hint__cool_down__full_from_one_read_no_write(service, strategy):
    event = sold_out_then_throttled(service, strategy, **ORDERS)

    answer, tally = book_during_cool_down(service, event, "cy@example.com", **ORDERS)

    assert_full_from_a_read(answer, tally)
    assert answer.quota == "workshop-a"


def test_sold_out_hint__control_strategy_without_it__turned_away_with_the_rest(
        service, monkeypatch):
    event = sold_out_then_throttled(service, "lock_table")
    strategy = service.catalog.strategy_for(event.id)
    monkeypatch.setattr(strategy, "sold_out_lately", lambda event_id: False)

    with pytest.raises(AssertionError):
        assert_full_from_a_read(*book_during_cool_down(service, event, "cy@example.com"))


@pytest.mark.parametrize("strategy", PLAIN)
def test_sold_out_hint__seat_freed_elsewhere__read_finds_it_then_turned_away_unwritten(
        service, strategy):
    event = sold_out_then_throttled(service, strategy)
    control_service(store=service.store).cancel(event.id, email="ada@example.com")

    answer, tally = book_during_cool_down(service, event, "cy@example.com")

    assert isinstance(answer, Overloaded), answer
    assert tally.writes == 0, tally.operations
    # Once the cool-down is over, the booking writes and takes the freed seat.
    service.bookings.cool_down = None
    assert service.book(event.id, name="Cy", email="cy@example.com").is_confirmed


def test_cool_down__no_hint__turned_away_before_anything_is_sent(service):
    event = service.create_event(name="Drop", capacity=5, strategy="lock_table")
    service.recent_event(event.id)
    service.bookings.cool_down = CoolDown(30.0)
    service.bookings.cool_down.throttled(event.id)

    answer, tally = book_during_cool_down(service, event, "cy@example.com")

    assert isinstance(answer, Overloaded) and tally.requests == 0, tally.operations


def test_sold_out_hint__cancellation_still_turned_away(service):
    event = sold_out_then_throttled(service, "lock_table")

    answer, tally = tracked(service, lambda: service.cancel(event.id, email="ada@example.com"))

    assert isinstance(answer, Overloaded) and tally.requests == 0
