"""Free slots this process has looked up and not tried yet: a hint its threads share.

A lookup reads up to ``LOOKUP`` free slots from a random point of the free-slot index; the
booking keeps ``PER_BOOKING`` of them and leaves the rest here, so the process's next
bookings start without a lookup of their own, and its threads never try the same slot at
once (each candidate is handed out once a ``seconds``, unless a lookup finds nothing
else). A candidate is only a hint: another process may
have claimed it meanwhile, which the claim's condition catches (the next one is tried).
Candidates older than ``seconds`` are dropped. A lookup that found nothing is remembered as
long, so the next one reads the index from its start at once (one query, not two).
"""
import threading
import time
from dataclasses import dataclass, field

LOOKUP = 32
PER_BOOKING = 2


@dataclass
class FreeSlotPool:
    seconds: float = 1.0
    pools: dict = field(default_factory=dict)  # event id -> (slot numbers, when looked up)
    handed: dict = field(default_factory=dict)  # event id -> (slots handed out, since when)
    none_seen: dict = field(default_factory=dict)  # event id -> when a lookup found none
    lock: threading.Lock = field(default_factory=threading.Lock)

    def take(self, event_id: str, found: list[int] | None = None) -> list[int]:
        """``PER_BOOKING`` candidates, none handed out lately, after adding ``found`` (a
        lookup's answer) to the pool."""
        now = time.monotonic()
        with self.lock:
            slots, when = self.pools.get(event_id, ([], 0.0))
            handed, since = self.handed.get(event_id, (set(), now))
            if now - since >= self.seconds:
                handed, since = set(), now
            if now - when >= self.seconds:
                slots = []
            if found is not None:
                fresh = [s for s in dict.fromkeys([*found, *slots]) if s not in handed]
                # Every free slot found was handed out lately (to bookings that may have
                # lost it or not used it): try them all the same; never "none" from here.
                slots, when = fresh or list(found), now
                if found:
                    self.none_seen.pop(event_id, None)
                else:
                    self.none_seen[event_id] = now
            taken = slots[:PER_BOOKING]
            self.pools[event_id] = (slots[PER_BOOKING:], when)
            self.handed[event_id] = (handed | set(taken), since)
            return taken

    def recently_none(self, event_id: str) -> bool:
        return time.monotonic() - self.none_seen.get(event_id, float("-inf")) < self.seconds
