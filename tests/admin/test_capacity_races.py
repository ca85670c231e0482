"""Capacity edits racing live bookings, against the real embedded server (threads).

Bookers keep booking new people; an editor keeps lowering the capacity to one above the
confirmed count it just read (removing free seats that bookers are claiming) and raising
it again; a sampler checks confirmed <= capacity all along.
Nobody cancels during the run, so the confirmed count only grows: reading it before the
capacity gives a sound sample (confirmed then <= confirmed now <= capacity now).

The quota case does the same to a further quota (``workshop-a``) while orders of one or
two workshop seats book it, on every strategy that takes orders; its careless control is
a resize that checks the quota's count, then writes the new size without the condition.
"""
import random
import threading
import time
import uuid

import pytest

from tests.helpers import table
from booking.dynamo.tables import SLOTS
from booking.errors import (BookingContention, EventFull, InvalidBooking, OutcomeUnknown,
                            StaleEdit)
from booking.strategies import event_edits
from booking.strategies.quota_counts import counts_of

GUARDED = ("aggregate", "lock_table", "slots")
RUN_SECONDS = 2.0
MAX_SECONDS = 30.0  # on a loaded machine, run on until the editor has applied MIN_EDITS
MIN_EDITS = 2
QUOTA_MIN_EDITS = 6  # the quota race: three lowerings at least
BOOKERS = 3

pytestmark = pytest.mark.concurrency


class Race:
    def __init__(self, service, event_id, quota=None):
        self.service, self.event_id, self.quota = service, event_id, quota
        self.min_edits = MIN_EDITS if quota is None else QUOTA_MIN_EDITS
        # Orders fill a quota faster than the editor comes back: raise it by more, lower
        # it halfway to its confirmed seats, and book at a human pace, so that it mostly
        # has free seats for the editor to remove while orders claim them.
        self.raise_by = 4 if quota is None else 20
        self.pause = 0 if quota is None else 0.03
        started = time.monotonic()
        self.deadline, self.last_call = started + RUN_SECONDS, started + MAX_SECONDS
        self.booked, self.samples, self.violations = [], 0, []
        self.edits = {"raised": 0, "lowered": 0, "stale": 0, "refused": 0}
        self.errors = []

    def running(self):
        now, applied = time.monotonic(), self.edits["raised"] + self.edits["lowered"]
        more = applied < self.min_edits and not self.violations and now < self.last_call
        return not self.errors and (now < self.deadline or more)

    def lowered(self, confirmed, size):
        """The size a lowering edit asks for: one above the confirmed seats (the quota
        race: halfway there)."""
        return confirmed + (1 if self.quota is None else max(1, (size - confirmed) // 2))

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
                self.booked.append(self._book(email))
                n += 1
                time.sleep(random.uniform(0, 2 * self.pause))
            except (EventFull, BookingContention):
                time.sleep(random.uniform(0.005, 0.02))

    def _book(self, email):
        tickets = None if self.quota is None else {self.quota: random.choice((1, 2))}
        order = self._ask(email, tickets)
        if tickets and order.status == "pending":  # streams: the booker decides its order
            if self.service.strategy("streams").decide(order) != "confirmed":
                raise EventFull()
        return order.email

    def _ask(self, email, tickets):
        """One booking, asked again with its request id while the answer is "pending" (a
        loaded machine's deadline), as a careful client does, for up to 30 s."""
        request_id, give_up = uuid.uuid4().hex, time.monotonic() + 30
        while True:
            try:
                return self.service.book(self.event_id, name="Racer", email=email,
                                         request_id=request_id, tickets=tickets)
            except OutcomeUnknown:
                if time.monotonic() > give_up:
                    raise
                time.sleep(0.2)

    def _read(self):
        """(confirmed, size) of the raced quota, the confirmed count read first."""
        if self.quota is None:
            confirmed = self.service.availability(self.event_id).confirmed
            return confirmed, self.service.get_event(self.event_id).capacity
        confirmed = self.service.availability(self.event_id).quotas[self.quota].confirmed
        return confirmed, self.service.get_event(self.event_id).quotas[self.quota]

    def edit(self):
        lower = True
        while self.running():
            event = self.service.get_event(self.event_id)
            confirmed, size = self._read()
            target = self.lowered(confirmed, size) if lower else size + self.raise_by
            edit = {"capacity": target} if self.quota is None else {"quotas": {self.quota: target}}
            try:
                self.service.update_event(self.event_id, expected_version=event.version, **edit)
                self.edits["lowered" if lower else "raised"] += 1
                lower = not lower
            except StaleEdit:
                self.edits["stale"] += 1
            except (InvalidBooking, BookingContention):
                self.edits["refused"] += 1
                lower = not lower

    def sample(self):
        while self.running():
            confirmed, capacity = self._read()
            self.samples += 1
            if confirmed > capacity:
                self.violations.append((confirmed, capacity))


def run_race(service, strategy, quota=None):
    if quota is None:
        event = service.create_event(name="Race", capacity=6, strategy=strategy)
    else:  # the capacity never binds: only the quota does
        event = service.create_event(name="Race", capacity=400, strategy=strategy,
                                     quotas={quota: 20}, ticket_types={quota: [quota]},
                                     max_per_order=2)
    race = Race(service, event.id, quota)
    if strategy == "slots":  # widen the window between listing free slots and removing them
        service.strategy(strategy).between_read_and_write = lambda: time.sleep(0.003)
    threads = [race.guard(lambda w=w: race.book(w)) for w in range(BOOKERS)]
    threads += [race.guard(race.edit), race.guard(race.sample)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(timeout=60)
    assert not race.errors, race.errors
    applied = race.edits["raised"] + race.edits["lowered"]
    assert race.samples > 0 and (applied >= race.min_edits or race.violations), race.edits
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
    # Up to three races: on a machine so loaded that the threads run one after another,
    # one race can leave the control's window unused.
    for _ in range(3):
        event, race = run_race(service, "unguarded")
        final = service.availability(event.id)
        if race.violations or final.confirmed > final.capacity:
            break
    assert race.violations or final.confirmed > final.capacity, (race.edits, final)



ORDER_STRATEGIES = ("aggregate", "lock_table", "slots", "streams")


@pytest.mark.parametrize("strategy", ORDER_STRATEGIES)
def test_quota_edits__racing_orders__never_below_confirmed_nor_overbooked(server_store, strategy):
    from booking.wiring import get_booking_service

    service = get_booking_service()
    event, race = run_race(service, strategy, quota="workshop-a")
    assert race.violations == [], race.violations

    final = service.availability(event.id).quotas["workshop-a"]
    orders = [r for r in service.registrations(event.id) if r.status == "confirmed"]
    assert final.capacity == service.get_event(event.id).quotas["workshop-a"]
    assert final.confirmed == sum(r.tickets["workshop-a"] for r in orders) <= final.capacity
    assert sorted(r.email for r in orders) == sorted(race.booked)  # none dropped
    assert service.audit(event.id) == []
    if strategy == "slots":
        slots = list(table(SLOTS).query(key_condition="event_id = :e",
                                        values={":e": f"{event.id}#workshop-a"}))
        assert len(slots) == final.capacity
        assert sum(1 for s in slots if "holder" in s) == final.confirmed


def careless_resize(strategy):
    """aggregate's ``change_capacity`` that checks each quota's count, then writes the new
    sizes at the read version without the count in its condition (the control); its
    lowering write comes once orders have taken more seats than the new size since its check
    (within 10 s), as a slow editor's would, and it answers half a second later."""
    def taken(event_id):
        return strategy.events.get({"event_id": event_id}, projection="quota_counts")["quota_counts"]

    def change_capacity(event, *, expected_version, capacity, changes, quotas=None):
        event_id = event.id
        counts = counts_of(strategy.events.get({"event_id": event_id}))
        for quota, size in (quotas or {}).items():
            if counts[quota][1] > size:
                raise event_edits.below_taken(quota, counts[quota][1])
        lowering = any(size < counts[quota][0] for quota, size in (quotas or {}).items())
        late = time.monotonic() + (10.0 if lowering else 0)  # bookings land meanwhile
        while time.monotonic() < late and not any(
                taken(event_id).get(quota, 0) > size for quota, size in (quotas or {}).items()):
            time.sleep(0.05)
        update = event_edits.event_update(expected_version=expected_version, capacity=capacity,
                                          changes=changes, quotas=quotas)
        strategy.events.update({"event_id": event_id}, update.expression, **update.kwargs())
        time.sleep(0.5)  # and it is as slow to come back
    return change_capacity


def test_quota_edits__careless_resize_control__caught_below_confirmed(server_store, monkeypatch):
    """The same race and checks see a resize without the count condition shrink the quota
    below what it has confirmed."""
    from booking.wiring import get_booking_service

    service = get_booking_service()
    aggregate = service.strategy("aggregate")
    monkeypatch.setattr(aggregate, "change_capacity", careless_resize(aggregate))
    event, race = run_race(service, "aggregate", quota="workshop-a")

    final = service.availability(event.id).quotas["workshop-a"]
    assert race.violations or final.confirmed > final.capacity, (race.edits, final)
