"""``RetryPolicy`` lives in ``booking/strategies/base.py``; this name stays importable for
``booking/wiring.py`` (owned by the web/wiring work) until it imports it from there."""
from booking.strategies.base import RetryPolicy

__all__ = ["RetryPolicy"]
