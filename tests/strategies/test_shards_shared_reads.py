"""One snapshot in flight per event in a process (``seats.SharedReads``): a booking that
met a dry shard joins a snapshot started after its own refusal, never one started before
it (what that read saw may predate the refusal: a seat freed in between would be missed
and "full" told untruly). The control joins any snapshot in flight."""
import threading

import pytest

from booking.strategies.shards.seats import SharedReads


class Clock:
    def __init__(self):
        self.now = 100.0

    def __call__(self):
        return self.now


class CarelessSharedReads(SharedReads):
    """The control: joins the read in flight whenever it started."""

    def read(self, event_id, since, read):
        return super().read(event_id, float("-inf"), read)


def held_read(shared, clock, *, since_second):
    """A first read held open (started at 100), then a second booking's read with its
    refusal at ``since_second``: (results, how many reads were sent)."""
    calls, release, started = [], threading.Event(), threading.Event()

    def read():
        calls.append(1)
        if len(calls) == 1:
            started.set()
            release.wait(5)
            return "first read"
        return "own read"

    results = {}
    first = threading.Thread(target=lambda: results.update(a=shared.read("e1", 100.0, read)))
    first.start()
    assert started.wait(5)
    second = threading.Thread(target=lambda: results.update(
        b=shared.read("e1", since_second, read)))
    second.start()
    second.join(0.2)  # a joiner waits for the first read
    release.set()
    first.join(5)
    second.join(5)
    return results, len(calls)


def test_refused_before_the_read_started__joins_it__one_read_sent():
    clock = Clock()
    results, sent = held_read(SharedReads(clock=clock), clock, since_second=99.0)
    assert results == {"a": "first read", "b": "first read"} and sent == 1


def test_refused_after_the_read_started__reads_for_itself():
    clock = Clock()
    results, sent = held_read(SharedReads(clock=clock), clock, since_second=100.5)
    assert results == {"a": "first read", "b": "own read"} and sent == 2


def test_control_joining_any_read__caught_using_one_started_before_its_refusal():
    clock = Clock()
    results, sent = held_read(CarelessSharedReads(clock=clock), clock, since_second=100.5)
    assert results["b"] == "first read" and sent == 1  # what it must not do


def test_a_failed_read__not_shared():
    shared, attempts = SharedReads(clock=Clock()), []

    def failing():
        attempts.append(1)
        raise RuntimeError("store down")

    with pytest.raises(RuntimeError):
        shared.read("e1", 0.0, failing)
    assert shared.read("e1", 0.0, lambda: "fresh") == "fresh"  # nothing kept in flight
