"""Orders on shards: a quota's seats over its shards, "full" only when no shard of the quota
has room at one instant (the hasty control answers from its dry shard), marks kept true,
quotas resized and removed with the event (in-process moto)."""
import uuid
from unittest import mock

import pytest
from django.utils import timezone

from booking.dynamo.tables import EVENT_LOCKS, REGISTRATIONS
from booking.errors import EventFull, InvalidBooking, StaleEdit
from booking.models import Event, Registration
from booking.strategies.shards.orders import ShardsOrders, check_order_shape
from booking.strategies.shards.seats import SHARDS, marker_key
from harness.controls import HastyShardsStrategy, MarkingShardsStrategy
from tests.helpers import table

TYPES = {"conference": [], "workshop-a": ["workshop-a"]}


def workshop(service, capacity=40, quota=16):
    return service.create_event(name="Workshops", capacity=capacity, strategy="shards",
                                quotas={"workshop-a": quota}, ticket_types=TYPES, max_per_order=4)


def book(strategy, event, email, tickets):
    """``strategy``'s own booking of an order (no service in between)."""
    return strategy.book(event.id, order(event, email, tickets), order=event.order(tickets))


def order(event, email, tickets):
    return Registration(event_id=event.id, email=email, name=email.split("@")[0],
                        registered_at=timezone.now(), registration_id=uuid.uuid4().hex,
                        ticket_counts=tickets)


def remaining(service, event_id):
    return {name: q.remaining for name, q in service.availability(event_id).quotas.items()}


@pytest.mark.parametrize("control", [False, True])
def test_order__guessed_shard_dry__placed_where_the_quota_has_room(service, control):
    # Every try goes to the highest shard: after Ada's order it is dry in workshop-a (2 of
    # 2 seats), while the other 7 shards hold 14. "Full" would be a lie; the control says it.
    event = workshop(service)
    strategy = (HastyShardsStrategy if control else type(service.strategy("shards")))(
        store=service.store)
    tickets = {"workshop-a": 2}
    with mock.patch.object(ShardsOrders, "_pick", lambda self, candidates: max(candidates)):
        book(strategy, event, "ada@example.com", tickets)
        if control:
            with pytest.raises(EventFull) as refused:
                book(strategy, event, "bob@example.com", tickets)
            assert refused.value.quota == "workshop-a"
        else:
            book(strategy, event, "bob@example.com", tickets)

    assert remaining(service, event.id)["workshop-a"] == (14 if control else 12)  # yet "full"
    assert service.audit(event.id) == []


def test_order__more_seats_than_one_shard_holds__split_over_shards_and_freed_from_them(service):
    event = workshop(service, quota=8)  # one seat per shard of workshop-a
    service.book(event.id, name="Ada", email="ada@example.com", tickets={"workshop-a": 3})
    stored = table(REGISTRATIONS).get({"event_id": event.id, "email": "ada@example.com"})
    assert sorted(stored["shard_seats"]["workshop-a"].values()) == [1, 1, 1]

    service.cancel(event.id, email="ada@example.com", tickets={"workshop-a": 2})

    stored = table(REGISTRATIONS).get({"event_id": event.id, "email": "ada@example.com"})
    assert list(stored["shard_seats"]["workshop-a"].values()) == [1]
    assert sum(stored["shard_seats"]["capacity"].values()) == 1
    assert remaining(service, event.id) == {"capacity": 39, "workshop-a": 7}
    assert service.audit(event.id) == []


def test_order__quota_sold_out__marked_until_a_partial_cancellation_frees_a_seat(service):
    event = workshop(service, quota=2)
    service.book(event.id, name="Ada", email="ada@example.com",
                 tickets={"conference": 1, "workshop-a": 2})
    with pytest.raises(EventFull) as refused:
        service.book(event.id, name="Bob", email="bob@example.com", tickets={"workshop-a": 1})
    assert refused.value.quota == "workshop-a"
    assert "workshop-a" in table(EVENT_LOCKS).get(marker_key(event.id))["full_quotas"]

    service.cancel(event.id, email="ada@example.com", tickets={"workshop-a": 1})

    assert "full_quotas" not in table(EVENT_LOCKS).get(marker_key(event.id))
    assert service.book(event.id, name="Bob", email="bob@example.com",
                        tickets={"workshop-a": 1}).seats == 1
    assert remaining(service, event.id) == {"capacity": 37, "workshop-a": 0}


@pytest.mark.parametrize("control", [False, True])
def test_quota_mark__seat_freed_between_read_and_mark__mark_refused(service, control):
    # Bob's read finds workshop-a without a seat; Ada cancels before Bob marks it sold out.
    # The mark must be refused, or Cy is told "full" with a seat free. The control marks
    # blindly.
    event = workshop(service, quota=1)
    service.book(event.id, name="Ada", email="ada@example.com", tickets={"workshop-a": 1})
    strategy = (MarkingShardsStrategy if control else type(service.strategy("shards")))(
        store=service.store)
    strategy.between_read_and_write = lambda: service.cancel(event.id, email="ada@example.com")
    tickets = {"workshop-a": 1}

    with pytest.raises(EventFull):  # true at the instant Bob's read saw
        book(strategy, event, "bob@example.com", tickets)
    strategy.between_read_and_write = lambda: None
    if control:
        with pytest.raises(EventFull):
            book(strategy, event, "cy@example.com", tickets)
    else:
        book(strategy, event, "cy@example.com", tickets)

    assert remaining(service, event.id)["workshop-a"] == (1 if control else 0)


def test_change_capacity__quotas_resized_with_the_capacity_never_below_their_seats(service):
    event = workshop(service, quota=4)
    service.book(event.id, name="Ada", email="ada@example.com", tickets={"workshop-a": 3})
    shards = service.strategy("shards")

    shards.change_capacity(event.id, expected_version=1, capacity=30, changes={},
                           quotas={"workshop-a": 20})
    assert service.get_event(event.id).quotas == {"workshop-a": 20}
    assert remaining(service, event.id) == {"capacity": 27, "workshop-a": 17}
    assert service.audit(event.id) == []
    with pytest.raises(InvalidBooking) as below:
        shards.change_capacity(event.id, expected_version=2, capacity=30, changes={},
                               quotas={"workshop-a": 2})
    assert below.value.field == "quotas" and "3 seat(s)" in below.value.message
    with pytest.raises(InvalidBooking) as unknown:
        shards.change_capacity(event.id, expected_version=2, capacity=30, changes={},
                               quotas={"workshop-z": 2})
    assert unknown.value.field == "quotas"
    with pytest.raises(StaleEdit):
        shards.change_capacity(event.id, expected_version=1, capacity=30, changes={},
                               quotas={"workshop-a": 10})
    assert service.get_event(event.id).quotas == {"workshop-a": 20}  # nothing changed
    assert service.get_event(event.id).version == 2


def test_delete__removes_every_quota_shard_and_the_marker(service):
    event = workshop(service)
    service.book(event.id, name="Ada", email="ada@example.com", tickets={"workshop-a": 1})

    service.delete_event(event.id)

    left = [item["event_id"] for item in table(EVENT_LOCKS).scan()
            if item["event_id"].startswith(event.id)]
    assert left == []


def test_check_order_shape__bounds_the_transaction_by_quotas_not_seats():
    def event(quotas, max_per_order):
        names = [f"q{n}" for n in range(quotas)]
        return Event(id="e", name="E", capacity=10, strategy="shards", starts_at=None,
                     created_at=timezone.now(), version=1, quotas={q: 1 for q in names},
                     ticket_types={"all": names}, max_per_order=max_per_order)

    check_order_shape(event(10, 50))  # the most the model allows: 11 x 8 + 4 = 92 members
    with pytest.raises(InvalidBooking) as refused:
        check_order_shape(event(12, 50))
    assert refused.value.field == "ticket_types" and str(SHARDS) in refused.value.message
