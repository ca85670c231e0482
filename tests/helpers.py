"""Small helpers shared by tests."""
import time

from booking.wiring import get_booking_service


def table(spec):
    """``spec``'s table on the store of this process's (test) service."""
    return get_booking_service().store.table(spec)


def within_one_window(seconds: int, room: float = 10.0) -> None:
    """Wait, if need be, so that the next ``room`` seconds fall in one limit window: the
    windows are aligned to multiples of their length, and a count that spans a boundary
    starts again (the limit is right; the test's arithmetic would not be)."""
    left = seconds - time.time() % seconds
    if left < room:
        time.sleep(left + 0.1)
