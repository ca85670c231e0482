"""Capacity edits racing live bookings, against the real embedded server (threads).

Bookers keep booking new people; an editor keeps lowering the capacity to one above the
confirmed count it just read (removing free seats that bookers are claiming) and raising
it again; a sampler checks confirmed <= capacity all along.
Nobody cancels during the run, so the confirmed count only grows: reading it before the
capacity gives a sound sample (confirmed then <= confirmed now <= capacity now).
"""
import random
import threading
import time

import pytest

from tests.helpers import table
from booking.dynamo.tables import SLOTS
from booking.errors import BookingContention, EventFull, InvalidBooking, StaleEdit

GUARDED = ("aggregate", "lock_table", "slots")
RUN_SECONDS = 2.0
BOOKERS = 3

pytestmark = pytest.mark.concurrency


class Race:
    def __init__(self, service, event_id):
        self.service, self.event_id = service, event_id
        self.deadline = time.monotonic() + RUN_SECONDS
        self.booked, self.samples, self.violations = [], 0, []
        self.edits = {"raised": 0, "lowered": 0, "stale": 0, "refused": 0}
        self.errors = []

    def running(self):
        return time.monotonic() < self.deadline and not self.errors

    def guard(self, work):
        def run():
            try:
                work()
            except Exception as exc:  # surfaced by the test, not lost in the thread
                self.errors.append(exc)
        return threading.Thread(target=run)

    def book(self, worker):
        n = 0
        while self.running():
            email = f"w{worker}-{n}@example.com"
            try:
                self.booked.append(self.service.book(self.event_id, name="Racer", email=email).email)
                n += 1
            except (EventFull, BookingContention):
                time.sleep(random.uniform(0.005, 0.02))

    def edit(self):
        lower = True
        while self.running():
            event = self.service.get_event(self.event_id)
            confirmed = self.service.availability(self.event_id).confirmed
            target = confirmed + 1 if lower else event.capacity + 4
            try:
                self.service.update_event(self.event_id, expected_version=event.version,
                                          capacity=target)
                self.edits["lowered" if lower else "raised"] += 1
                lower = not lower
            except StaleEdit:
                self.edits["stale"] += 1
            except (InvalidBooking, BookingContention):
                self.edits["refused"] += 1
                lower = not lower

    def sample(self):
        while self.running():
            confirmed = self.service.availability(self.event_id).confirmed
            capacity = self.service.get_event(self.event_id).capacity
            self.samples += 1
            if confirmed > capacity:
                self.violations.append((confirmed, capacity))


def run_race(service, strategy):
    event = service.create_event(name="Race", capacity=6, strategy=strategy)
    race = Race(service, event.id)
    if strategy == "slots":  # widen the window between listing free slots and removing them
        service.strategy(strategy).between_read_and_write = lambda: time.sleep(0.003)
    threads = [race.guard(lambda w=w: race.book(w)) for w in range(BOOKERS)]
    threads += [race.guard(race.edit), race.guard(race.sample)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(timeout=60)
    assert not race.errors, race.errors
    assert race.samples > 0 and race.edits["raised"] + race.edits["lowered"] >= 2, race.edits
    return event, race


@pytest.mark.parametrize("strategy", GUARDED)
def test_capacity_edits__racing_bookings__never_overbook_or_drop(server_store, strategy):
    from booking.wiring import get_booking_service

    service = get_booking_service()
    event, race = run_race(service, strategy)
    assert race.violations == [], race.violations

    final = service.availability(event.id)
    registered = [r.email for r in service.registrations(event.id)]
    assert final.confirmed <= final.capacity == service.get_event(event.id).capacity
    assert sorted(registered) == sorted(race.booked)  # no edit dropped a registration
    if strategy == "slots":
        slots = list(table(SLOTS).query(key_condition="event_id = :e", values={":e": event.id}))
        assert len(slots) == final.capacity
        assert sorted(s["holder"] for s in slots if "holder" in s) == sorted(registered)


def test_capacity_edits__unguarded_control__caught_overbooking(server_store):
    """The same race and checks see the control strategy exceed its capacity."""
    from booking import wiring
    from harness.controls import control_service

    service = control_service(race_delay_ms=20)
    wiring.install(service)
    event, race = run_race(service, "unguarded")

    final = service.availability(event.id)
    assert race.violations or final.confirmed > final.capacity, (race.edits, final)

