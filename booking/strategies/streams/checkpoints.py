"""The stream decider's per-shard checkpoints and per-decider heartbeats, apart from the
decider so the strategy and service read them (docs/streams.md#checkpoints-restarts-shards).
"""
import time
from decimal import Decimal

from booking.dynamo.access import ConditionFailed, Store
from booking.dynamo.expressions import Actions, attr
from booking.dynamo.tables import STREAM_CHECKPOINTS

HEARTBEAT_PREFIX = "decider#"
POSITION = attr("position")


def _decimal(seconds: float | None) -> Decimal | None:
    """Epoch seconds to the millisecond, as DynamoDB numbers are written."""
    return None if seconds is None else Decimal(f"{seconds:.3f}")


class Checkpoints:
    """Per-shard positions and per-decider heartbeats in one small table."""

    def __init__(self, store: Store):
        self.table = store.table(STREAM_CHECKPOINTS)

    def get(self, shard_id: str) -> dict:
        return self.table.get({"shard_id": shard_id}) or {"shard_id": shard_id}

    def advance(self, shard_id: str, sequence_number: str) -> None:
        """Record that everything up to ``sequence_number`` is decided (never backwards)."""
        try:
            position = sequence_number.zfill(40)  # compares as the number (<= 40 digits)
            self.table.update(
                {"shard_id": shard_id},
                Actions().set("sequence_number", sequence_number).set(POSITION, position)
                .set("at_", _decimal(time.time())),
                condition=POSITION.not_exists() | POSITION.lt(position))  # never backwards
        except ConditionFailed:
            pass  # another decider is further along

    def finish(self, shard_id: str) -> None:
        """The shard is closed and read to its end: its children may be read."""
        self.table.update({"shard_id": shard_id}, Actions().set("finished", True))

    def beat(self, decider_id: str, *, caught_up: bool, decided: int, now: float) -> None:
        key = {"shard_id": HEARTBEAT_PREFIX + decider_id}
        previous = (self.table.get(key) or {}).get("caught_up_at")
        self.table.put({**key, "seen_at": _decimal(now), "decided": decided,
                        "caught_up_at": _decimal(now if caught_up else previous)})

    def heartbeats(self) -> list[dict]:
        return [row for row in self.table.scan()
                if row["shard_id"].startswith(HEARTBEAT_PREFIX)]


def lag(checkpoints: Checkpoints) -> dict:
    """The deciders' state for the admin: how many report, and how long since one last
    read every shard to its current end (None: never)."""
    now = time.time()
    rows = checkpoints.heartbeats()
    live = [r for r in rows if r.get("seen_at", 0) > now - 60]
    caught = [r["caught_up_at"] for r in rows if r.get("caught_up_at")]
    return {"deciders": len(live), "seconds_behind": now - max(caught) if caught else None,
            "last_seen": max((r.get("seen_at", 0) for r in rows), default=None)}
