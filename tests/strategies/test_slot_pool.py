"""The slots strategy's free-slot pool (``booking/strategies/slots/candidates.py``): one
lookup's free slots serve the next bookings of the process while the pool lasts."""
from booking.strategies.slots.candidates import PER_BOOKING, FreeSlotPool


class Clock:
    def __init__(self):
        self.now = 100.0

    def __call__(self):
        return self.now


def test_pool__one_lookup_serves_the_next_bookings_until_it_lapses(monkeypatch):
    clock = Clock()
    monkeypatch.setattr("booking.strategies.slots.candidates.time.monotonic", clock)
    pool = FreeSlotPool(seconds=1.0)

    first = pool.take("e1", found=list(range(10)))
    second, third = pool.take("e1"), pool.take("e1")

    assert len(first) == len(second) == len(third) == PER_BOOKING
    assert len(set(first) | set(second) | set(third)) == 3 * PER_BOOKING  # none twice
    clock.now += 1.0  # the pool lapses: the next booking looks up again
    assert pool.take("e1") == []
    assert pool.take("e2") == []  # another event has its own pool


def test_pool__an_order_takes_its_seats_and_a_spare__or_none_while_too_few(monkeypatch):
    clock = Clock()
    monkeypatch.setattr("booking.strategies.slots.candidates.time.monotonic", clock)
    pool = FreeSlotPool(seconds=1.0)

    three = pool.take("e1#workshop", found=list(range(6)), needed=3)
    assert len(three) == 3 + PER_BOOKING - 1 and len(set(three)) == len(three)
    left = 6 - len(three)
    assert pool.take("e1#workshop", needed=left + 1) == []  # too few: none handed out
    assert len(pool.take("e1#workshop", needed=left)) == left  # still there for a smaller one
