"""What an organizer's overview counts from an event's registrations: orders and seats, and
when each confirmed order was made (for bookings over time, docs/admin.md).

The registrations are read with the strategy's own paginated query of the event's items
(never a table scan), and at most ``limit`` of them: a larger event's tally says it is
incomplete rather than read without a bound on every page view.
"""
from collections.abc import Iterable
from dataclasses import dataclass, field
from datetime import datetime

from booking.models import CONFIRMED, PENDING, Registration

TALLY_LIMIT = 2_000  # registrations read per event and page view, at most


@dataclass(frozen=True)
class Tally:
    """``orders``/``seats``: confirmed; ``pending_orders``: still being decided;
    ``bookings``: (time, tickets) of each confirmed order, oldest first; ``complete``:
    False when reading stopped at the limit (the counts are then lower bounds)."""

    orders: int = 0
    seats: int = 0
    pending_orders: int = 0
    bookings: list[tuple[datetime, dict[str, int]]] = field(default_factory=list)
    complete: bool = True


def tally(registrations: Iterable[Registration], *, limit: int = TALLY_LIMIT) -> Tally:
    """Count up to ``limit`` registrations (read lazily, so the rest is never fetched)."""
    orders = seats = pending = read = 0
    bookings: list[tuple[datetime, dict[str, int]]] = []
    for registration in registrations:
        if read == limit:
            return Tally(orders, seats, pending, sorted(bookings, key=_at), complete=False)
        read += 1
        if registration.status == CONFIRMED:
            orders, seats = orders + 1, seats + registration.seats
            bookings.append((registration.registered_at, registration.tickets))
        elif registration.status == PENDING:
            pending += 1
    return Tally(orders, seats, pending, sorted(bookings, key=_at))


def _at(booking: tuple[datetime, dict]) -> datetime:
    return booking[0]
