"""The product's strategy registry: name -> strategy class, guarded strategies only.

Controls (the unguarded strategy) are not here: only tests and harnesses build them
(``harness/controls.py``).
"""
from .aggregate import AggregateStrategy
from .base import Strategy
from .lock_table import LockTableStrategy
from .slots import SlotsStrategy
from .streams import StreamsStrategy

STRATEGIES: dict[str, type[Strategy]] = {
    cls.name: cls for cls in (AggregateStrategy, LockTableStrategy, SlotsStrategy,
                              StreamsStrategy)
}
GUARDED = tuple(STRATEGIES)

__all__ = ["GUARDED", "STRATEGIES", "Strategy"]
