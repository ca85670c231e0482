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


def book_directly(strategy, service, event, registration, tickets=None):
    """``strategy.book`` as the service calls it, without the service around it: the
    order of ``tickets`` (None: one seat of the event's only type) and the riders of the
    registration's request (no request row when it names no request)."""
    from booking.exactly_once.request_log import Request
    from booking.exactly_once.riders import Riders

    order = event.order(tickets or {next(iter(event.ticket_types)): 1})
    return strategy.book(event, registration, order,
                         Riders(service.requests, Request.booking(registration)))


def hold_as_the_waiting_list(strategy, event, email, order, *, until, now):
    """Hold ``order``'s seats as the waiting list does: again with the refusal's evidence,
    read by name (at most 5 attempts); returns the hold's ``ref``."""
    from booking.dynamo.access import TransactionCancelled
    from booking.dynamo.expressions import Members

    refused = None
    for _ in range(5):
        named, ref = strategy.hold_ops(event, email, order, until=until, now=now,
                                       refused=refused)
        members = Members(named)
        try:
            strategy.store.transact_write(members.operations)
            return ref
        except TransactionCancelled as cancelled:
            refused = members.refusal(cancelled)
    raise AssertionError("no hold after 5 attempts")


def forged(code: str) -> str:
    """``code`` with one character of its signature changed: never the same code (a change
    of its last characters may only touch base64's unused bits and decode to the same)."""
    at = len(code) - 10
    return code[:at] + ("B" if code[at] == "A" else "A") + code[at + 1:]
