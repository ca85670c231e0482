"""Small helpers shared by tests."""
from booking.wiring import get_booking_service


def table(spec):
    """``spec``'s table on the store of this process's (test) service."""
    return get_booking_service().store.table(spec)
