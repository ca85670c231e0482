"""Shards' waiting-list holds of one seat: the write checks the shard's capacity as stored,
as a booking's take does, never a capacity as read that an edit may have made stale."""
from booking.dynamo.tables import EVENT_LOCKS
from booking.dynamo.expressions import Members
from tests.helpers import table

T = 1_000_000_000_000  # an epoch in milliseconds; holds never read the real clock here


def test_one_seat_hold__shard_shrunk_after_the_read_but_still_free__held(service):
    # 16 seats over 8 shards: the hold's shard was read with 2 seats, then an edit leaves
    # it 1, still free. Checked against the capacity as read (2) the hold would be refused.
    event = service.create_event(name="Drop", capacity=16, strategy="shards")
    strategy = service.strategy("shards")
    members, ref = strategy.hold_ops(event, "a@example.com", event.order({"admission": 1}),
                                     until=T + 100, now=T)
    key = {"event_id": f"{event.id}#{ref['shard']}"}
    table(EVENT_LOCKS).update(key, "SET #capacity = :one", names={"#capacity": "capacity"},
                              values={":one": 1})

    strategy.store.transact_write(Members(members).operations)

    assert table(EVENT_LOCKS).get(key)["holds"] == {"a@example.com": T + 100}
    assert strategy.holds(event.id) == {"a@example.com": T + 100}
