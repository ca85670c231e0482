"""What an order costs, counted on the wire (botocore's before-send hook): the figures of
docs/orders.md and docs/benchmarks.md. In-process moto: the count, not the speed."""
import pytest

from booking.dynamo.metrics import RequestMeter
from booking.errors import EventFull
from tests.orders.test_orders import decide_pending, devconf

# strategy -> operations of: an order, a refused order, part of an order cancelled, the
# rest cancelled (streams: accepting the order; its decision is the decider's).
# Passes at the door (docs/checkin.md): part of an order cancelled also reads the order
# (the passes' layout) and its door item before the write (which unused passes to cancel),
# and the door item after (which it cancelled); the rest cancelled reads the door item
# after (``at_the_door`` adds them to each strategy's figures below).


def at_the_door(figures: tuple) -> tuple:
    book, refused, part, rest = figures
    return (book, refused, ["GetItem", *part[:-1], "GetItem", part[-1], "GetItem"],
            [*rest, "GetItem"])


EXPECTED = {
    "aggregate": (["TransactWriteItems"], ["TransactWriteItems"],
                  ["GetItem", "TransactWriteItems"], ["GetItem", "TransactWriteItems"]),
    "lock_table": (["TransactWriteItems"], ["TransactWriteItems"],
                   ["GetItem", "TransactWriteItems"], ["GetItem", "TransactWriteItems"]),
    # One free-slot index query per quota the order touches (a second one when the random
    # starting point leaves too few after it), then one transaction. Refused: workshop-a's
    # index shows no free slot, so its freed epoch is read (this event's first
    # verification puts it at 0, once) and its slot items themselves, then one batch read
    # (the next refusal is one batch read: below).
    "slots": (["Query", "Query", "TransactWriteItems"],
              ["Query", "Query", "GetItem", "TransactWriteItems", "GetItem", "Query",
               "BatchGetItem"],
              ["GetItem", "TransactWriteItems"], ["GetItem", "TransactWriteItems"]),
    # The order's guessed shards in one transaction; a refused shard, then the marker, one
    # read of the touched quotas' shards at one instant (workshop-a has no seat: "full")
    # and its sold-out mark on the marker and its copies, in one transaction (the next
    # refusal is one batch read: below).
    "shards": (["TransactWriteItems"],
               ["TransactWriteItems", "GetItem", "TransactGetItems", "TransactWriteItems"],
               ["GetItem", "TransactWriteItems"], ["GetItem", "TransactWriteItems"]),
    "streams": (["TransactWriteItems"], ["TransactWriteItems"],
                ["GetItem", "TransactWriteItems"], ["GetItem", "TransactWriteItems"]),
}


EXPECTED = {strategy: at_the_door(figures) for strategy, figures in EXPECTED.items()}


@pytest.mark.parametrize("strategy", sorted(EXPECTED))
def test_requests_per_order_rejection_and_cancellation(service, strategy):
    event = devconf(service, strategy, workshop=1)
    meter = RequestMeter().install(service.store)
    seen = []
    try:
        with meter.track() as booked:
            service.book(event.id, name="Ada", email="ada@example.com",
                         tickets={"conference": 2, "workshop-a": 1})
        seen.append(booked.operations)
        if strategy == "streams":
            with meter.track() as decided:
                decide_pending(service, event.id)
        with meter.track() as refused:
            try:
                service.book(event.id, name="Bob", email="bob@example.com",
                             tickets={"conference": 1, "workshop-a": 1})
            except EventFull:
                pass
        seen.append(refused.operations)
        if strategy in ("aggregate", "lock_table", "shards", "slots"):  # one read answers
            # the next (shards: workshop-a is marked sold out; the others: this process was
            # refused; slots: it verified workshop-a sold out at the freed epoch)
            with meter.track() as marked, pytest.raises(EventFull):
                service.book(event.id, name="Cy", email="cy@example.com",
                             tickets={"workshop-a": 1})
            assert marked.operations == ["BatchGetItem"]
        with meter.track() as part:
            service.cancel(event.id, email="ada@example.com", tickets={"conference": 1})
        seen.append(part.operations)
        with meter.track() as rest:
            service.cancel(event.id, email="ada@example.com")
        seen.append(rest.operations)
    finally:
        meter.uninstall()
    if strategy == "slots":  # two quotas: two lookups, up to four with unlucky starts
        # (the refusal: one more, the consistent read of workshop-a's slot items)
        assert 2 <= seen[0].count("Query") <= 4 and 3 <= seen[1].count("Query") <= 5, seen
        seen = [[op for op in ops if op != "Query"] for ops in seen]
        expected = [[op for op in ops if op != "Query"] for ops in EXPECTED[strategy]]
        assert seen == expected
        return
    assert tuple(seen) == EXPECTED[strategy]
    if strategy == "streams":  # the decision: a read of the event item, then one write
        assert decided.operations == ["Query", "GetItem", "TransactWriteItems"]
