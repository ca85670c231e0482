"""The slots strategy's freed epoch, and "full" verified by a consistent read of the seats.

Slots have no counter item to read, and the free-slot index that finds free seats is
eventually consistent: a slot freed a moment ago may be missing from it. So "full" is
verified once, and then answered from one small item:

- Every write that can make a slot free (a cancellation, whole or partial, a released
  waiting-list hold, new slots from a capacity increase, an audit repair that frees or
  creates slots) adds 1 to the event's ``epoch`` in the same transaction (``freed_ops``).
  Bookings never write it. The epoch lives in the lock table, keyed ``<event id>#freed``,
  and in ``EPOCHS - 1`` copies (``<event id>#freed-<n>``), all written by every freeing
  transaction: one item serves at most 3,000 reads a second, and a rejection reads one of
  them at random. One epoch covers the event and every further quota's slots.
- When the index shows no free slot, the booking verifies (``see``): it reads the epoch,
  then every slot of the partition with one consistent Query (boto3's paginator), keeping
  the free ones and the waiting-list holds. A free slot found there is tried; a lapsed
  hold is taken over; none is "full", and the process remembers ``Verified(epoch, until)``
  with its sold-out hint, ``until`` being the earliest expiry of a hold still holding a
  slot (a hold lapsing by time frees its slot without any write).
- Each later rejection in that process is one consistent BatchGetItem of an epoch item,
  the person's registration and the request row (``sold_out.read_first``): the epoch
  still the one verified and no hold lapsed since means no slot was freed since the
  consistent read found none, so "full" is true at the instant of that read. Otherwise the
  hint is cleared and the booking looks again.

An event stored before the epoch existed has no epoch item: it reads as epoch 0, the
first freeing write creates it (``ADD``), and the first verification creates it with 0
(``ensure_epoch``) so that a missing item afterwards means a deleted event.
"""
import random
from dataclasses import dataclass

from booking.dynamo.access import Table, TransactionCancelled
from booking.strategies.base import now_ms

EPOCHS = 4  # the epoch item and its copies: 4 x 3,000 rejections a second read from them
FOREVER = 2**62
FREED = "ADD epoch :one"


def epoch_key(event_id: str, copy: int = 0) -> dict:
    return {"event_id": f"{event_id}#freed" + (f"-{copy}" if copy else "")}


def any_epoch_key(event_id: str) -> dict:
    """The epoch item or a copy, at random: rejections spread their reads over them."""
    return epoch_key(event_id, random.randrange(EPOCHS))


def freed_ops(locks: Table, event_id: str) -> list[tuple[str, dict]]:
    """The members a freeing transaction adds: 1 more on the epoch and every copy."""
    return [("Update", locks.update_op(epoch_key(event_id, copy), FREED, values={":one": 1}))
            for copy in range(EPOCHS)]


def freed_together(strategy, event_id: str, operation: tuple[str, dict]) -> None:
    """One freeing write on its own, made a transaction with the epoch's bump. Raises
    ``TransactionCancelled`` when ``operation``'s condition fails."""
    strategy.store.transact_write([operation, *strategy.freed_ops(event_id)])


def ensure_epoch(locks: Table, event_id: str) -> int:
    """The event's epoch, read consistently from any copy (every transaction that writes
    one writes all); an event without one gets it (0, on all copies)."""
    found = locks.get(any_epoch_key(event_id))
    if found is not None:
        return int(found["epoch"])
    try:
        locks.store.transact_write([
            ("Put", locks.put_op({**epoch_key(event_id, copy), "epoch": 0},
                                 condition="attribute_not_exists(event_id)"))
            for copy in range(EPOCHS)])
    except TransactionCancelled:
        pass  # a freeing write made it meanwhile
    return int(locks.get(any_epoch_key(event_id))["epoch"])


def delete_epoch(locks: Table, event_id: str) -> None:
    for copy in range(EPOCHS):
        locks.delete(epoch_key(event_id, copy))


@dataclass(frozen=True)
class Verified:
    """A partition seen with no free slot by a consistent read, at the freed ``epoch``
    read before it; ``until``: the earliest expiry of a hold it saw still holding a slot."""

    epoch: int
    until: float

    def holds(self, epoch_item: dict, now: float) -> bool:
        """Still no free slot: no freeing write since (same epoch) and no hold lapsed."""
        return int(epoch_item["epoch"]) == self.epoch and now < self.until


@dataclass(frozen=True)
class Seen:
    """One partition's slots as a consistent read found them (``see``)."""

    epoch: int
    now: float
    free: list[int]
    lapsed: list[int]  # held slots whose hold has expired (a booking may take them over)
    until: float  # the earliest expiry of a live hold (``FOREVER``: none)

    @property
    def verified(self) -> Verified:
        return Verified(self.epoch, self.until)


def see(strategy, event_id: str, part: str) -> Seen:
    """The epoch first, then every slot of ``part`` (one consistent Query, paginated),
    filtered to the free and the held ones."""
    epoch = ensure_epoch(strategy.locks, event_id)
    now = now_ms()
    free, lapsed, until = [], [], FOREVER
    for item in strategy.slots.query(
            key_condition="event_id = :e", values={":e": part},
            projection="#slot, free_in, held_until", names={"#slot": "slot"},
            filter="attribute_exists(free_in) OR attribute_exists(held_until)"):
        if "free_in" in item:
            free.append(int(item["slot"]))
        elif item["held_until"] <= now:
            lapsed.append(int(item["slot"]))
        else:
            until = min(until, item["held_until"])
    return Seen(epoch, now, free, lapsed, until)
