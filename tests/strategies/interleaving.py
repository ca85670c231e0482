"""Run two bookings on two threads at once and collect how each ended."""
import threading

from booking.errors import BookingError


def book_from_two_threads(service, event_id) -> list[str]:
    """Book two different people concurrently; return "ok" or the error's class name each."""
    outcomes = []

    def book(email):
        try:
            service.book(event_id, name="X", email=email)
            outcomes.append("ok")
        except BookingError as exc:
            outcomes.append(type(exc).__name__)

    threads = [threading.Thread(target=book, args=(f"p{n}@example.com",)) for n in range(2)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    return outcomes
