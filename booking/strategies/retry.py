"""Bounded retries with exponential backoff and full jitter."""
import random
import time
from dataclasses import dataclass

from booking.errors import BookingContention


@dataclass(frozen=True)
class RetryPolicy:
    max_attempts: int = 10
    base_delay: float = 0.01
    max_delay: float = 0.5

    def attempts(self):
        """Yield attempt numbers, sleeping before each retry; raise when all are spent."""
        for attempt in range(self.max_attempts):
            if attempt:
                time.sleep(random.uniform(0, min(self.max_delay, self.base_delay * 2**attempt)))
            yield attempt
        raise BookingContention()
