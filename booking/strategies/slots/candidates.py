"""Free slots this process has looked up and not tried yet, each handed out once a
``seconds``: a hint its threads share, which a claim's condition checks
(docs/strategies/slots.md, "Spreading contention")."""
import threading
import time
from dataclasses import dataclass, field

LOOKUP = 32
PER_BOOKING = 2


@dataclass
class FreeSlotPool:
    seconds: float = 1.0
    pools: dict = field(default_factory=dict)  # partition -> (slot numbers, when looked up)
    handed: dict = field(default_factory=dict)  # partition -> (slots handed out, since when)
    none_seen: dict = field(default_factory=dict)  # partition -> when a lookup found none
    lock: threading.Lock = field(default_factory=threading.Lock)

    def take(self, event_id: str, found: list[int] | None = None, needed: int = 1) -> list[int]:
        """``needed`` candidates and ``PER_BOOKING - 1`` spares, none handed out lately, after
        adding ``found`` (a lookup's answer) to the pool; none while it has too few."""
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
                # Too few found were not handed out lately (to bookings that may have lost
                # them or not used them): try them all the same.
                slots, when = (fresh if len(fresh) >= needed else list(found)), now
                if found:
                    self.none_seen.pop(event_id, None)
                else:
                    self.none_seen[event_id] = now
            taken = slots[:needed + PER_BOOKING - 1] if len(slots) >= needed else []
            self.pools[event_id] = (slots[len(taken):], when)
            self.handed[event_id] = (handed | set(taken), since)
            return taken

    def recently_none(self, event_id: str) -> bool:
        return time.monotonic() - self.none_seen.get(event_id, float("-inf")) < self.seconds
