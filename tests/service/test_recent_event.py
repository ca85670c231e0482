"""The event as remembered for the pages and answers of a busy event (``recent_event``):
read once per ``RECENT_EVENT_SECONDS`` per process, an edit by another process seen within
that bound, this process's own edit at once, and never its seats."""
import time

from django.urls import reverse

from booking.dynamo.metrics import RequestMeter
from booking.service.catalog import RECENT_EVENT_SECONDS
from harness.controls import control_service


def other_process(service):
    """Another web process: its own service (and catalog) on the same store."""
    return control_service(store=service.store)


def seen_after_edit(service, read) -> tuple[str, str]:
    """The name ``read(event_id, now)`` gives just after another process's edit, and past
    the bound."""
    event = service.create_event(name="Launch", capacity=5, strategy="lock_table")
    read(event.id, time.monotonic())
    read_at = time.monotonic()
    other_process(service).update_event(event.id, expected_version=event.version,
                                        name="Launch (moved)")
    return (read(event.id, read_at + 0.1).name,
            read(event.id, read_at + RECENT_EVENT_SECONDS + 0.01).name)


def test_recent_event__another_process_edits__seen_within_the_bound(service):
    within, past = seen_after_edit(
        service, lambda event_id, now: service.catalog.recent_event(event_id, now=now))

    assert (within, past) == ("Launch", "Launch (moved)")


def test_recent_event__remembered_forever_control__edit_never_seen(service):
    # The control: the event as remembered for orders (its types never change), with no
    # bound, used for the page: the edit is never seen.
    within, past = seen_after_edit(
        service, lambda event_id, now: service.catalog.event_for(event_id))

    assert past == "Launch"


def test_recent_event__own_edit__seen_at_once(service):
    event = service.create_event(name="Launch", capacity=5, strategy="lock_table")
    service.recent_event(event.id)

    service.update_event(event.id, expected_version=event.version, name="Renamed")

    assert service.recent_event(event.id).name == "Renamed"


def test_recent_event__within_the_bound__no_read(service):
    event = service.create_event(name="Launch", capacity=5, strategy="lock_table")
    service.recent_event(event.id)
    meter = RequestMeter().install(service.store)
    try:
        with meter.track() as tally:
            for _ in range(5):
                service.recent_event(event.id)
    finally:
        meter.uninstall()
    assert tally.operations.count("GetItem") == 0


def test_event_page__seats_remembered_a_second_not_as_long_as_the_event(client, service):
    # A count may be shown again for RECENT_SEATS_SECONDS (never a "full":
    # tests/web/test_event_page_busy.py); after that the seats are read again, while
    # the event itself is still remembered.
    from booking.service.bookings import RECENT_SEATS_SECONDS

    event = service.create_event(name="Launch", capacity=2, strategy="lock_table")
    page = reverse("booking:event_detail", args=[event.id])
    service.bookings.clock = lambda: 1000.0
    assert "This event is full" not in client.get(page).content.decode()
    other = other_process(service)
    other.book(event.id, name="Ann", email="ann@example.com")
    other.book(event.id, name="Bob", email="bob@example.com")
    service.bookings.clock = lambda: 1000.0 + RECENT_SEATS_SECONDS

    html = client.get(page).content.decode()  # within the bound: the event remembered

    assert "This event is full" in html
