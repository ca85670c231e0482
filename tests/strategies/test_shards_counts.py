"""An event's shards follow the arrivals a second its organizer expects: one per 400 beyond
the 8 every event has; an event stored before the count was chosen (its marker names none)
keeps reading as 8. Every path (booking, "full", availability, audit, repair, capacity
edits, deletion) follows the event's own count. The control is a shards strategy built
here that reads every event as 8 shards: on a 13-shard event it loses seats."""
import pytest

from booking.dynamo.tables import EVENT_LOCKS
from booking.errors import EventFull, InvalidBooking
from booking.strategies.shards import ShardsStrategy
from booking.strategies.shards.seats import (BOOKINGS_PER_SHARD, MAX_SHARDS, SHARDS,
                                             marker_key, shard_key)
from tests.helpers import table


class EightShards(ShardsStrategy):
    """The control: every event read as ``SHARDS`` shards, whatever its marker says."""

    def shard_counts(self, event_ids):
        return {event_id: SHARDS for event_id in event_ids}


def shard_items(event_id, upto=MAX_SHARDS + 1):
    return [table(EVENT_LOCKS).get(shard_key(event_id, n)) for n in range(upto)]


def fill(service, event, people):
    booked, refused = 0, 0
    for n in range(people):
        try:
            service.book(event.id, name=f"P{n}", email=f"p{n}@example.com")
            booked += 1
        except EventFull:
            refused += 1
    return booked, refused


@pytest.mark.parametrize("rate, shards", [(None, 8), (1, 8), (3_200, 8), (3_201, 9),
                                          (5_000, 13), (25_600, 64), (1_000_000, 64)])
def test_create__expected_rate__one_shard_per_400_beyond_8(service, rate, shards):
    event = service.create_event(name="Drop", capacity=130, strategy="shards",
                                 expected_rate=rate)

    found = shard_items(event.id)
    assert [n for n, item in enumerate(found) if item is not None] == list(range(shards))
    assert sum(item["capacity"] for item in found[:shards]) == 130
    marker = table(EVENT_LOCKS).get(marker_key(event.id))
    # An event of 8 shards is stored exactly as before the count was chosen.
    assert marker == {**marker_key(event.id), "epoch": 0,
                      **({"shards": shards} if shards != SHARDS else {})}
    assert service.get_event(event.id).expected_rate == rate
    assert BOOKINGS_PER_SHARD == 400


def test_book__thirteen_shards__every_seat_sold_then_full(service):
    event = service.create_event(name="Drop", capacity=26, strategy="shards",
                                 expected_rate=5_000)

    assert fill(service, event, 30) == (26, 4)
    availability = service.availability(event.id)
    assert (availability.capacity, availability.confirmed) == (26, 26)
    assert [item["confirmed_count"] for item in shard_items(event.id, 13)] == [2] * 13
    assert service.audit(event.id) == []


def test_control__read_as_eight_shards__seats_on_the_others_lost(service):
    event = service.create_event(name="Drop", capacity=26, strategy="shards",
                                 expected_rate=5_000)
    eight = EightShards(store=service.store)

    assert eight.availability(event).capacity == 16  # 5 shards' seats unseen


def test_another_process__reads_the_count_from_the_marker(service):
    event = service.create_event(name="Drop", capacity=26, strategy="shards",
                                 expected_rate=5_000)
    fresh = ShardsStrategy(store=service.store)  # nothing known yet, as in another process

    assert fresh.shard_count(event.id) == 13
    assert fresh.availabilities([event])[event.id].capacity == 26


def test_event_stored_before_counts__marker_without_count__eight_shards(service):
    event = service.create_event(name="Old", capacity=16, strategy="shards")
    fresh = ShardsStrategy(store=service.store)

    assert "shards" not in table(EVENT_LOCKS).get(marker_key(event.id))
    assert fresh.shard_count(event.id) == SHARDS
    assert fresh.availability(event).capacity == 16


def test_change_capacity_and_delete__every_shard(service):
    event = service.create_event(name="Drop", capacity=26, strategy="shards",
                                 expected_rate=5_000)
    fill(service, event, 3)

    service.update_event(event.id, expected_version=1, capacity=52)
    assert sum(item["capacity"] for item in shard_items(event.id, 13)) == 52
    service.delete_event(event.id)
    assert shard_items(event.id) == [None] * (MAX_SHARDS + 1)


def test_repair__marker_lost__recreated_with_the_events_count(service):
    event = service.create_event(name="Drop", capacity=26, strategy="shards",
                                 expected_rate=5_000)
    table(EVENT_LOCKS).delete(marker_key(event.id))

    service.repair(event.id)
    assert table(EVENT_LOCKS).get(marker_key(event.id))["shards"] == 13
    assert ShardsStrategy(store=service.store).availability(event).capacity == 26


def test_create__with_orders__keeps_eight_shards(service):
    event = service.create_event(name="Conf", capacity=40, strategy="shards",
                                 expected_rate=5_000, quotas={"workshop": 10},
                                 ticket_types={"conference": [], "workshop": ["workshop"]})

    assert [n for n, item in enumerate(shard_items(event.id)) if item] == list(range(SHARDS))


@pytest.mark.parametrize("bad", [0, -5, 1_000_001, "many", 2.5, True])
def test_create__bad_expected_rate__clear_error_nothing_stored(service, bad):
    before = len(service.list_events())
    with pytest.raises(InvalidBooking) as refused:
        service.create_event(name="Drop", capacity=10, strategy="shards", expected_rate=bad)

    assert refused.value.field == "expected_rate"
    assert len(service.list_events()) == before


def confirmed_by_shard(event_id, shards):
    return [int(item["confirmed_count"]) for item in shard_items(event_id, shards)]


def test_book__a_process_takes_the_shards_in_turn__each_gets_its_share(service):
    # 13 shards of 4 seats; 39 bookings from one process: 3 on every shard, none on one
    # twice its share (at random, a second's bookings crowd some shards: over the
    # partition's limit while others idle).
    event = service.create_event(name="Drop", capacity=52, strategy="shards",
                                 expected_rate=5_000)

    assert fill(service, event, 39) == (39, 0)
    assert confirmed_by_shard(event.id, 13) == [3] * 13


def test_book__control_picking_at_random__shards_crowded_unevenly(service, monkeypatch):
    # The control: each booking picks its shard at random (as before turns).
    dry = service.strategy("shards").dry
    monkeypatch.setattr(dry, "next_turn", dry.get)
    event = service.create_event(name="Drop", capacity=52, strategy="shards",
                                 expected_rate=5_000)

    assert fill(service, event, 39) == (39, 0)
    assert confirmed_by_shard(event.id, 13) != [3] * 13
