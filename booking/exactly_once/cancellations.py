"""An event's cancellations, counted inside each cancellation's own write (a rider).

A cancelled order leaves the event's registrations, so what was cancelled cannot be
counted from them afterwards. Instead every cancellation adds one member to its own
transaction: ``ADD cancelled_orders, cancelled_seats`` on one of the event's few counter
items in the event-locks table (``SHARDS`` of them, so that a busy event's cancellations,
which otherwise touch different items, do not all meet on one item). The member has no
condition: it can never refuse a cancellation. Counted in the same write as the request
row that makes the cancellation exactly once, a repeat (the same request id) is answered
from that row and counts nothing again.

What counts: a confirmed order cancelled whole is one order and its seats; a cancellation
of part of an order counts its seats only (the order is counted when its last seats go);
a request still being decided that is withdrawn counts nothing (it never held seats).
docs/admin.md#cancellations.
"""
import hashlib
from dataclasses import dataclass

from booking.dynamo.access import Table
from booking.dynamo.expressions import Actions
from booking.dynamo.expressions import Member, Refusal, Update
from booking.models import CONFIRMED, Registration

MEMBER = "cancellations"
SHARDS = 4  # counter items per event
ORDERS, SEATS = "cancelled_orders", "cancelled_seats"


def shard_key(event_id: str, shard: int) -> dict:
    """A counter item's key. The ``.`` keeps it apart from every key the strategies keep
    in the same table (``<event id>#<quota>``, ``...#<quota>#<shard>``, ``...#meta``,
    ``...#freed``): a quota's name never holds one."""
    return {"event_id": f"{event_id}#cancelled.{shard}"}


def shard_of(request_id: str) -> int:
    """The counter item a cancellation writes: spread like a random pick, but the same
    for every attempt of one request, so a re-sent write is the very same write (its
    client token would refuse one that differed)."""
    return int.from_bytes(hashlib.sha256(request_id.encode()).digest()[:4], "big") % SHARDS


@dataclass(frozen=True)
class CancellationCount:
    """A cancellation's rider: its orders and seats added to the event's counts."""

    table: Table
    request_id: str

    def members(self, answer: Registration, *, notice: bool = True) -> list[tuple[str, Member]]:
        if answer.status != CONFIRMED:
            return []  # a request withdrawn before its decision: no seat was sold
        orders = 0 if answer.part_request_id else 1
        return [(MEMBER, Update(self.table, shard_key(answer.event_id, shard_of(self.request_id)),
                                Actions().add(ORDERS, orders).add(SEATS, answer.seats)))]

    def answer(self, refusal: Refusal) -> Registration | None:
        return None  # its member has no condition
