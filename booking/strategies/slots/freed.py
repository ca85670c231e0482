"""The freed epoch, which every write that can free a slot bumps, and "full" verified by a
consistent read of the slots after it (docs/strategies/slots.md, "Full from one
consistent read")."""
from __future__ import annotations

import random
from contextlib import suppress
from dataclasses import dataclass

from booking.dynamo.access import Table, TransactionCancelled
from booking.dynamo.expressions import Actions, attr, projection
from booking.dynamo.expressions import Member, Put, Update
from booking.strategies.base import now_ms
from booking.strategies.slots.seats import ABSENT, slots_of
from booking.strategies.parts import FreesSlots, SlotsParts

EPOCHS = 4  # the epoch item and its copies: 4 x 3,000 rejections a second read from them
FOREVER = 2**62
FREED = Actions().add("epoch", 1)
FREE_OR_HELD = attr("free_in").exists() | attr("held_until").exists()
SEEN = projection("slot", "free_in", "held_until")


def epoch_key(event_id: str, copy: int = 0) -> dict:
    return {"event_id": f"{event_id}#freed" + (f"-{copy}" if copy else "")}


def any_epoch_key(event_id: str) -> dict:
    """The epoch item or a copy, at random: rejections spread their reads over them."""
    return epoch_key(event_id, random.randrange(EPOCHS))


def freed_ops(strategy: SlotsParts, event_id: str) -> list[tuple[str, Member]]:
    """The members every write that frees a slot adds: 1 more on the epoch and every copy."""
    return [(f"epoch:{copy}", Update(strategy.locks, epoch_key(event_id, copy), FREED))
            for copy in range(EPOCHS)]


def freed_together(strategy: FreesSlots, event_id: str, *operations: Member) -> None:
    """Freeing writes made one transaction with the epoch's bump. Raises
    ``TransactionCancelled`` when a condition of ``operations`` fails."""
    strategy.store.transact_write([*operations, *(op for _, op in strategy.freed_ops(event_id))])


def ensure_epoch(locks: Table, event_id: str) -> int:
    """The event's epoch, read consistently from any copy (every transaction that writes
    one writes all); an event without one gets it (0, on all copies)."""
    found = locks.get(any_epoch_key(event_id))
    if found is not None:
        return int(found["epoch"])
    with suppress(TransactionCancelled):  # a freeing write made it meanwhile
        locks.store.transact_write([
            Put(locks, {**epoch_key(event_id, copy), "epoch": 0}, ABSENT)
            for copy in range(EPOCHS)])
    return int((locks.get(any_epoch_key(event_id)) or {"epoch": 0})["epoch"])  # or deleted


@dataclass(frozen=True)
class Seen:
    """One partition's slots as a consistent read found them (``see``), at the freed
    ``epoch`` read before it; with none free or lapsed, the mark of "full" verified."""

    epoch: int
    free: list[int]
    lapsed: list[int]  # held slots whose hold has expired (a booking may take them over)
    until: float  # the earliest expiry of a live hold (``FOREVER``: none)

    def holds(self, epoch_item: dict, now: float) -> bool:
        """Still no free slot: no freeing write since (same epoch) and no hold lapsed."""
        return int(epoch_item["epoch"]) == self.epoch and now < self.until


def see(strategy: SlotsParts, event_id: str, part: str, now: float | None = None) -> Seen:
    """The epoch first, then every slot of ``part`` (one consistent Query, paginated),
    filtered to the free and the held ones (lapsed at ``now``: by default, the clock's)."""
    epoch = ensure_epoch(strategy.locks, event_id)
    now = now_ms() if now is None else now
    free, lapsed, until = [], [], FOREVER
    for item in slots_of(strategy.slots, part, projection=SEEN, filter=FREE_OR_HELD):
        if "free_in" in item:
            free.append(int(item["slot"]))
        elif item["held_until"] <= now:
            lapsed.append(int(item["slot"]))
        else:
            until = min(until, item["held_until"])
    return Seen(epoch, free, lapsed, until)
