"""Shedding load before it queues: an event whose throttling just cost a person their
answer is answered "busy, try again shortly" for a moment, without a write
(docs/reliability.md).

A throttle the booking absorbed (botocore's retry went through, or a sharded event's
booking moved to another shard and got its seat or a "full") starts nothing: turning the
whole event away for it would stop a drop for a moment at every throttle of one item.

One small in-process object: per event id, the time until which its new requests are
turned away. It never says "full" (that is only ever told from the store), and it forgets
an event as soon as its cool-down is over.
"""
from collections.abc import Callable
import math
import random
import threading
import time


class CoolDown:
    """Events the store throttled in the last ``seconds``; ``clock`` is monotonic seconds."""

    def __init__(self, seconds: float, *, clock: Callable[[], float] = time.monotonic) -> None:
        self.seconds = seconds
        self.clock = clock
        self._until: dict[str, float] = {}
        self._lock = threading.Lock()

    def after(self, event_id: str, *, throttled: bool, denied: bool) -> None:
        """A booking of ``event_id`` ended: ``throttled`` if the store refused one of its
        attempts for throughput, ``denied`` if a throttle is why the person got no
        definite answer. Only such a throttle starts the cool-down."""
        if throttled and denied:
            self.throttled(event_id)

    def throttled(self, event_id: str) -> None:
        """The store throttled ``event_id``'s write just now: turn its next ones away."""
        now = self.clock()
        with self._lock:
            if len(self._until) > 1000:  # forget the events whose moment has passed
                self._until = {key: until for key, until in self._until.items() if until > now}
            self._until[event_id] = now + self.seconds

    def retry_after(self, event_id: str) -> int | None:
        """Whole seconds (jittered, at least 1) to wait before asking again while
        ``event_id`` cools down; None when it does not."""
        with self._lock:
            left = self._until.get(event_id, 0.0) - self.clock()
        if left <= 0:
            return None
        # Spread the next asks over a window as long as the cool-down, so they do not
        # all come back at the same instant.
        return max(1, math.ceil(left + random.uniform(0, self.seconds)))
