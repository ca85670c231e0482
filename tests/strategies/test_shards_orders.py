"""Orders on shards: a quota's seats over its shards, "full" only when no shard of the quota
has room at one instant (the hasty control answers from its dry shard), marks kept true,
quotas resized and removed with the event, the waiting list's offers holding whole orders
(in-process moto)."""
import time
import uuid
from unittest import mock

import pytest
from django.utils import timezone

from booking.dynamo.tables import EVENT_LOCKS, REGISTRATIONS
from booking.errors import EventFull, InvalidBooking, StaleEdit
from booking.models import Event, Registration
from booking.strategies.shards.capacity import check_order_shape
from booking.strategies.shards.seats import SHARDS, Hint, marker_key
from booking.waitlist import engine as waitlist_engine
from harness.controls import HastyShardsStrategy, MarkingShardsStrategy
from tests.helpers import book_directly, table

TYPES = {"conference": [], "workshop-a": ["workshop-a"]}


def workshop(service, capacity=40, quota=16):
    return service.create_event(name="Workshops", capacity=capacity, strategy="shards",
                                quotas={"workshop-a": quota}, ticket_types=TYPES, max_per_order=4)


def book(strategy, service, event, email, tickets):
    """``strategy``'s own booking of an order (no service in between)."""
    return book_directly(strategy, service, event, order(event, email, tickets), tickets)


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
    with mock.patch.object(Hint, "pick", lambda self, among: max(among)):
        book(strategy, service, event, "ada@example.com", tickets)
        if control:
            with pytest.raises(EventFull) as refused:
                book(strategy, service, event, "bob@example.com", tickets)
            assert refused.value.quota == "workshop-a"
        else:
            book(strategy, service, event, "bob@example.com", tickets)

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
        book(strategy, service, event, "bob@example.com", tickets)
    strategy.between_read_and_write = lambda: None
    if control:
        with pytest.raises(EventFull):
            book(strategy, service, event, "cy@example.com", tickets)
    else:
        book(strategy, service, event, "cy@example.com", tickets)

    assert remaining(service, event.id)["workshop-a"] == (1 if control else 0)


def test_change_capacity__quotas_resized_with_the_capacity_never_below_their_seats(service):
    event = workshop(service, quota=4)
    service.book(event.id, name="Ada", email="ada@example.com", tickets={"workshop-a": 3})
    shards = service.strategy("shards")

    shards.change_capacity(event, expected_version=1, capacity=30, changes={},
                           quotas={"workshop-a": 20})
    assert service.get_event(event.id).quotas == {"workshop-a": 20}
    assert remaining(service, event.id) == {"capacity": 27, "workshop-a": 17}
    assert service.audit(event.id) == []
    with pytest.raises(InvalidBooking) as below:
        shards.change_capacity(event, expected_version=2, capacity=30, changes={},
                               quotas={"workshop-a": 2})
    assert below.value.field == "quotas" and "3 seats are" in below.value.message
    with pytest.raises(InvalidBooking) as unknown:
        shards.change_capacity(event, expected_version=2, capacity=30, changes={},
                               quotas={"workshop-z": 2})
    assert unknown.value.field == "quotas"
    with pytest.raises(StaleEdit):
        shards.change_capacity(event, expected_version=1, capacity=30, changes={},
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


# --- the waiting list's holds of orders (shards/holds.py) ---------------------------------
def offered(service, event, email, tickets):
    """``email`` joins the line for ``tickets``; the next cancellation offers them."""
    service.join_waiting_list(event.id, name=email.split("@")[0].title(), email=email,
                              tickets=tickets)


def seats_of(service, event_id):
    """Quota -> (confirmed, held)."""
    return {name: (q.confirmed, q.held) for name, q in service.availability(event_id).quotas.items()}


def holding(event_id, quota, email):
    """Each shard of ``quota`` with ``email``'s hold: its number -> the seats it stores."""
    found = {}
    for n in range(SHARDS):
        key = {"event_id": f"{event_id}#{n}" if quota == "capacity" else f"{event_id}#{quota}#{n}"}
        shard = table(EVENT_LOCKS).get(key)
        if email in shard.get("holds", {}):
            found[n] = shard["hold_seats"][email]
    return found


def test_order_hold__several_seats_on_one_shard__counted_by_audit_repair_and_edits(service):
    # Every shard holds 2 seats of the capacity and 2 of workshop-a; each order takes one
    # whole shard of each, so Cy's offer holds 2 seats on one shard of each quota.
    event = workshop(service, capacity=16, quota=16)
    for n in range(8):
        service.book(event.id, name=f"P{n}", email=f"p{n}@example.com", tickets={"workshop-a": 2})
    offered(service, event, "cy@example.com", {"workshop-a": 2})

    service.cancel(event.id, email="p3@example.com")
    waitlist_engine.flush()

    assert list(holding(event.id, "workshop-a", "cy@example.com").values()) == [{"workshop-a": 2}]
    assert list(holding(event.id, "capacity", "cy@example.com").values()) == [{"capacity": 2}]
    assert seats_of(service, event.id) == {"capacity": (14, 2), "workshop-a": (14, 2)}
    assert service.audit(event.id) == []
    (held,) = holding(event.id, "workshop-a", "cy@example.com")
    table(EVENT_LOCKS).update({"event_id": f"{event.id}#workshop-a#{held}"},
                              "SET confirmed_count = :n", values={":n": 0})
    assert [v.invariant for v in service.audit(event.id)] == ["quota_counter_matches_orders"]
    service.repair(event.id)
    assert service.audit(event.id) == []
    assert seats_of(service, event.id) == {"capacity": (14, 2), "workshop-a": (14, 2)}

    shards = service.strategy("shards")
    with pytest.raises(InvalidBooking) as below:  # 14 booked and 2 held
        shards.change_capacity(event, expected_version=1, capacity=16, changes={},
                               quotas={"workshop-a": 15})
    assert "16 seats are" in below.value.message
    shards.change_capacity(event, expected_version=1, capacity=18, changes={},
                           quotas={"workshop-a": 18})
    assert seats_of(service, event.id) == {"capacity": (14, 2), "workshop-a": (14, 2)}
    assert service.accept_offer(event.id, email="cy@example.com").tickets == {"workshop-a": 2}
    assert seats_of(service, event.id) == {"capacity": (16, 0), "workshop-a": (16, 0)}
    assert service.audit(event.id) == []


def cy_waits_behind_a_full_event(service):
    """Four seats, two of them the workshop's: Ada holds both workshop seats, Bob two
    conference seats, and Cy waits for one of each (`offered`)."""
    event = workshop(service, capacity=4, quota=2)
    service.book(event.id, name="Ada", email="ada@example.com", tickets={"workshop-a": 2})
    service.book(event.id, name="Bob", email="bob@example.com", tickets={"conference": 2})
    offered(service, event, "cy@example.com", {"conference": 1, "workshop-a": 1})
    return event


def test_order_hold__declined_after_a_sold_out_mark__mark_cleared_and_the_seats_booked(service):
    # Eve's "full" is true while Cy's offer holds the last seats, and marks the event sold
    # out until Cy's offer would lapse. Cy declines: the release must clear that mark in
    # its own transaction, or Eve is told "full" with seats free.
    event = cy_waits_behind_a_full_event(service)
    service.cancel(event.id, email="ada@example.com")
    waitlist_engine.flush()
    with pytest.raises(EventFull):
        service.book(event.id, name="Eve", email="eve@example.com", tickets={"conference": 1})
    assert table(EVENT_LOCKS).get(marker_key(event.id))["full_until"] > time.time() * 1000

    service.leave_waiting_list(event.id, email="cy@example.com")
    waitlist_engine.flush()

    assert "full_until" not in table(EVENT_LOCKS).get(marker_key(event.id))
    assert service.book(event.id, name="Eve", email="eve@example.com",
                        tickets={"conference": 1}).seats == 1
    assert seats_of(service, event.id) == {"capacity": (3, 0), "workshop-a": (0, 0)}
    assert service.audit(event.id) == []


def test_order_hold__lapsed__never_taken_over__released_whole_with_the_marker_bumped(service):
    event = cy_waits_behind_a_full_event(service)
    waitlist, clock = service.waitlist.engine, [time.time() * 1000 - 120_000]
    waitlist.clock, waitlist.offer_seconds = (lambda: round(clock[0])), 60
    service.cancel(event.id, email="ada@example.com")  # Cy's offer lapsed a minute ago
    waitlist_engine.flush()

    with pytest.raises(EventFull):  # its seats are nobody's until it is released
        service.book(event.id, name="Eve", email="eve@example.com", tickets={"conference": 1})
    epoch = table(EVENT_LOCKS).get(marker_key(event.id))["epoch"]
    clock[0] = time.time() * 1000
    assert service.waiting_list_pass() == {"offers_expired": 1}

    assert table(EVENT_LOCKS).get(marker_key(event.id))["epoch"] == epoch + 1
    assert holding(event.id, "capacity", "cy@example.com") == {}
    assert holding(event.id, "workshop-a", "cy@example.com") == {}
    assert seats_of(service, event.id) == {"capacity": (2, 0), "workshop-a": (0, 0)}
    assert service.book(event.id, name="Eve", email="eve@example.com",
                        tickets={"conference": 2}).seats == 2
    assert service.audit(event.id) == []


def test_order_hold__shards_without_the_map__given_it_before_the_hold(service):
    # Shards provisioned before offers held orders (or recreated by a repair) have no
    # ``hold_seats``: the offer makes sure of it on the shards it holds seats on.
    event = workshop(service, capacity=4, quota=2)
    service.book(event.id, name="Ada", email="ada@example.com", tickets={"workshop-a": 2})
    service.book(event.id, name="Bob", email="bob@example.com", tickets={"conference": 2})
    for item in table(EVENT_LOCKS).scan():
        if item["event_id"].startswith(f"{event.id}#") and "hold_seats" in item:
            table(EVENT_LOCKS).update({"event_id": item["event_id"]}, "REMOVE hold_seats")
    offered(service, event, "cy@example.com", {"conference": 1, "workshop-a": 1})

    service.cancel(event.id, email="ada@example.com")
    waitlist_engine.flush()

    assert seats_of(service, event.id) == {"capacity": (2, 2), "workshop-a": (0, 1)}
    assert service.accept_offer(event.id, email="cy@example.com").seats == 2
    assert service.audit(event.id) == []
