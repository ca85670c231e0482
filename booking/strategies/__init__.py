"""The product's strategy registry: name -> strategy class, guarded strategies only.

Controls (the unguarded strategy) are not here: only tests and harnesses build them
(``harness/controls.py``).
"""
from booking.strategies.aggregate import AggregateStrategy
from booking.strategies.base import Strategy
from booking.strategies.lock_table import LockTableStrategy
from booking.strategies.shards import ShardsStrategy
from booking.strategies.slots import SlotsStrategy
from booking.strategies.streams import StreamsStrategy

STRATEGIES: dict[str, type[Strategy]] = {
    cls.name: cls for cls in (AggregateStrategy, LockTableStrategy, SlotsStrategy,
                              StreamsStrategy, ShardsStrategy)
}
GUARDED = tuple(STRATEGIES)

__all__ = ["GUARDED", "STRATEGIES", "Strategy"]
