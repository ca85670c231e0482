"""Strategy registry: name -> strategy class."""
from .aggregate import AggregateStrategy
from .base import Strategy
from .lock_table import LockTableStrategy
from .slots import SlotsStrategy
from .unguarded import UnguardedStrategy

STRATEGIES: dict[str, type[Strategy]] = {
    cls.name: cls
    for cls in (AggregateStrategy, LockTableStrategy, SlotsStrategy, UnguardedStrategy)
}
GUARDED = tuple(name for name, cls in STRATEGIES.items() if cls.guarded)

__all__ = ["GUARDED", "STRATEGIES", "Strategy"]
