"""A list's counts come from counter items kept in each scan's own write: right for first
entries, re-entries, exits, conflicts and repeats, and read at a cost that does not grow
with the people booked (requests counted, not time)."""
import uuid
from datetime import datetime, timedelta, timezone

import pytest

from booking.checkin.door import COUNT_SHARDS


def nonce():
    return uuid.uuid4().hex


@pytest.fixture
def event(service):
    return service.create_event(name="Counted", capacity=200, strategy="lock_table",
                                ticket_types={"day": [], "vip": ["vip"]},
                                quotas={"vip": 50}, max_per_order=3)


def book(service, event, n, **tickets):
    return service.passes(service.book(event.id, name=f"P{n}", email=f"p{n}@example.com",
                                       tickets=tickets or {"day": 1}))


def requests_of(service, read) -> tuple[int, int]:
    """(DynamoDB requests, items they read) of ``read()``: the items stand for read
    units (each item read is at least half a unit)."""
    answers = []

    def seen(parsed, **_):
        found = parsed.get("Count", 1 if "Item" in parsed else 0)
        found += sum(len(items) for items in parsed.get("Responses", {}).values())
        answers.append(found)

    events = service.store.client.meta.events
    events.register("after-call.dynamodb", seen)
    try:
        read()
    finally:
        events.unregister("after-call.dynamodb", seen)
    return len(answers), sum(answers)


def test_counts__read_requests_do_not_grow_with_attendees(service, event):
    hall = service.create_checkin_list(event.id, name="Hall")
    vips = service.create_checkin_list(event.id, name="VIP", ticket_types=["vip"])
    for n in range(2):
        for p in book(service, event, n, day=1, vip=1):
            service.scan(hall.id, p.code, nonce=nonce())
    few = {lst.id: requests_of(service, lambda: service.checkin_list(lst.id))
           for lst in (hall, vips)}
    for n in range(2, 42):
        for p in book(service, event, n, day=1, vip=1):
            service.scan(hall.id, p.code, nonce=nonce())
    many = {lst.id: requests_of(service, lambda: service.checkin_list(lst.id))
            for lst in (hall, vips)}
    # the same requests; items read: at most the list, its counter items and the event's
    # one counted item, however many are booked (each counter item appears with its
    # first scan)
    bound = 2 + COUNT_SHARDS + 1
    assert [r for r, _ in many.values()] == [r for r, _ in few.values()], (few, many)
    assert max(r for r, _ in many.values()) <= 4
    assert max(items for _, items in many.values()) <= bound, (few, many)
    counted = service.checkin_list(hall.id)
    assert (counted.expected, counted.admitted, counted.inside) == (84, 84, 84)
    assert service.checkin_list(vips.id).expected == 42


def test_counts__reentry_exit_repeat_and_conflict(service, event):
    room = service.create_checkin_list(event.id, name="Room", allow_reentry=True,
                                       occupancy_limit=10)
    ann, bob = book(service, event, 1)[0], book(service, event, 2)[0]
    first = nonce()
    assert service.scan(room.id, ann.code, nonce=first).status == "admitted"
    assert service.scan(room.id, ann.code, nonce=first).status == "admitted"  # a repeat
    out = nonce()
    assert service.scan(room.id, ann.code, direction="exit", nonce=out).status == "exited"
    assert service.scan(room.id, ann.code, direction="exit", nonce=out).status == "exited"
    assert service.scan(room.id, ann.code, nonce=nonce()).status == "admitted"  # re-entry
    assert service.scan(room.id, ann.code, nonce=nonce()).status == "already_admitted"
    hall = service.create_checkin_list(event.id, name="Hall")
    service.scan(hall.id, bob.code, nonce=nonce())
    when = datetime.now(timezone.utc) - timedelta(minutes=1)
    batch = [{"code": bob.code, "nonce": nonce(), "scanned_at": when}]
    assert service.scan_batch(hall.id, batch)[0].conflict
    service.scan_batch(hall.id, batch)  # uploaded again: counts nothing again
    counts = service.checkin.door.counts
    assert counts(room) == {"admitted": 1, "inside": 1, "conflicts": 0}
    assert counts(hall) == {"admitted": 1, "inside": 1, "conflicts": 1}
    assert service.audit(event.id) == []
