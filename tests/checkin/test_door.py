"""The door on moto: lists, scans and their answers, re-entry, limits, cancellations."""
import uuid
from datetime import datetime, timedelta, timezone

import pytest

from booking.errors import CheckinListNotFound, InvalidBooking
from booking.checkin.passes import unb64url
from tests.helpers import forged


def nonce():
    return uuid.uuid4().hex


@pytest.fixture
def event(service):
    return service.create_event(name="Conf", capacity=50, ticket_types={"conference": [],
                                "workshop": []}, max_per_order=5)


def book(service, event, email, **tickets):
    return service.book(event.id, name=email.split("@")[0].title(), email=email,
                        tickets=tickets or {"conference": 1})


def test_an_order_of_three_seats_has_three_passes_each_naming_its_type(service, event):
    reg = book(service, event, "ann@example.com", conference=2, workshop=1)
    passes = service.passes(reg)
    assert [p.pass_id for p in passes] == [f"{reg.registration_id}-{n}" for n in (1, 2, 3)]
    assert [p.ticket_type for p in passes] == ["conference", "conference", "workshop"]
    assert [p.ticket_label for p in passes] == ["Conference", "Conference", "Workshop"]
    assert all(p.status == "valid" and p.admitted_at is None for p in passes)
    # The payload names no one (the signature is random bytes: it may spell anything).
    assert all("ann" not in unb64url(p.code.split(".")[1]).decode().lower() for p in passes)


def test_entry_once_then_already_admitted_naming_the_first_gate(service, event):
    reg = book(service, event, "ann@example.com")
    lst = service.create_checkin_list(event.id, name="Main door")
    code = service.passes(reg)[0].code
    first = service.scan(lst.id, code, nonce=nonce(), gate="north")
    assert first.status == "admitted" and first.attendee_name == "Ann"
    assert first.ticket_label == "Conference"
    again = service.scan(lst.id, code, nonce=nonce(), gate="south")
    assert again.status == "already_admitted" and again.first_gate == "north"
    assert again.first_admitted_at is not None
    assert service.passes(reg)[0].gate == "north"
    counts = service.checkin_list(lst.id)
    assert (counts.expected, counts.admitted, counts.inside, counts.conflicts) == (1, 1, 1, 0)


def test_a_repeated_nonce_answers_the_first_answer_without_a_second_effect(service, event):
    reg = book(service, event, "ann@example.com")
    lst = service.create_checkin_list(event.id, name="Hall", allow_reentry=True,
                                      occupancy_limit=5)
    code, key = service.passes(reg)[0].code, nonce()
    assert service.scan(lst.id, code, nonce=key).status == "admitted"
    out = nonce()
    assert service.scan(lst.id, code, direction="exit", nonce=out).status == "exited"
    assert service.scan(lst.id, code, nonce=key).status == "admitted"  # the first answer
    assert service.scan(lst.id, code, direction="exit", nonce=out).status == "exited"
    assert service.checkin_list(lst.id).inside == 0
    with pytest.raises(InvalidBooking):  # the nonce names another scan
        service.scan(lst.id, code, direction="exit", nonce=key)


def test_exit_without_entry_reentry_and_not_on_list(service, event):
    ann = book(service, event, "ann@example.com", workshop=1)
    strict = service.create_checkin_list(event.id, name="Talks", ticket_types=["conference"])
    loose = service.create_checkin_list(event.id, name="Workshop", allow_reentry=True)
    code = service.passes(ann)[0].code
    assert service.scan(strict.id, code, nonce=nonce()).status == "not_on_list"
    assert service.scan(loose.id, code, direction="exit", nonce=nonce()).status == "not_inside"
    assert service.scan(loose.id, code, nonce=nonce()).status == "admitted"
    assert service.scan(loose.id, code, nonce=nonce()).status == "already_admitted"
    assert service.scan(loose.id, code, direction="exit", nonce=nonce()).status == "exited"
    assert service.scan(loose.id, code, nonce=nonce()).status == "admitted"


def test_not_open_outside_the_lists_hours(service, event):
    ann = book(service, event, "ann@example.com")
    later = datetime.now(timezone.utc) + timedelta(hours=1)
    lst = service.create_checkin_list(event.id, name="Evening", opens_at=later)
    assert service.scan(lst.id, service.passes(ann)[0].code, nonce=nonce()).status == "not_open"


def test_room_full_and_exits_free_room_at_once(service, event):
    lst = service.create_checkin_list(event.id, name="Room", occupancy_limit=2)
    codes = [service.passes(book(service, event, f"p{i}@example.com"))[0].code
             for i in range(3)]
    assert [service.scan(lst.id, c, nonce=nonce()).status for c in codes] == [
        "admitted", "admitted", "room_full"]
    assert service.scan(lst.id, codes[0], direction="exit", nonce=nonce()).status == "exited"
    assert service.scan(lst.id, codes[2], nonce=nonce()).status == "admitted"
    assert service.checkin_list(lst.id).inside == 2
    assert service.audit(event.id) == []


def test_forged_altered_and_other_event_codes_are_unknown(service, event):
    other = service.create_event(name="Other", capacity=5)
    ann = book(service, event, "ann@example.com")
    bob = service.book(other.id, name="Bob", email="bob@example.com")
    lst = service.create_checkin_list(event.id, name="Door")
    code = service.passes(ann)[0].code
    for bad in (forged(code), service.passes(bob)[0].code, "hello", "BP1.e30.e30"):
        assert service.scan(lst.id, bad, nonce=nonce()).status == "unknown_code"
    assert service.checkin_list(lst.id).admitted == 0


def test_a_cancelled_order_refuses_at_the_door(service, event):
    ann = book(service, event, "ann@example.com", conference=2)
    lst = service.create_checkin_list(event.id, name="Door")
    codes = [p.code for p in service.passes(ann)]
    removed = service.cancel(event.id, email="ann@example.com")
    assert set(removed.cancelled_passes) == {p.pass_id for p in service.passes(ann)}
    assert service.scan(lst.id, codes[0], nonce=nonce()).status == "cancelled"
    assert all(p.status == "cancelled" for p in service.passes(ann))


def test_a_partial_cancellation_cancels_unused_passes_never_one_inside(service, event):
    ann = book(service, event, "ann@example.com", conference=3)
    lst = service.create_checkin_list(event.id, name="Door")
    passes = service.passes(ann)
    # Seat 3 is inside; cancelling two seats takes the two unused ones (2 and 1).
    assert service.scan(lst.id, passes[2].code, nonce=nonce()).status == "admitted"
    part = service.cancel(event.id, email="ann@example.com", tickets={"conference": 2})
    assert sorted(part.cancelled_passes) == sorted([passes[0].pass_id, passes[1].pass_id])
    kept = service.find_registration(event.id, email="ann@example.com")
    assert [p.status for p in service.passes(kept)] == ["cancelled", "cancelled", "valid"]
    assert service.scan(lst.id, passes[0].code, nonce=nonce()).status == "cancelled"
    assert service.scan(lst.id, passes[2].code, direction="exit", nonce=nonce()).status == "exited"


def test_a_partial_cancellation_refuses_when_only_used_passes_are_left(service, event):
    ann = book(service, event, "ann@example.com", conference=1, workshop=1)
    lst = service.create_checkin_list(event.id, name="Door")
    workshop = service.passes(ann)[1]
    assert service.scan(lst.id, workshop.code, nonce=nonce()).status == "admitted"
    with pytest.raises(InvalidBooking, match="already used at the door"):
        service.cancel(event.id, email="ann@example.com", tickets={"workshop": 1})
    assert service.find_registration(event.id, email="ann@example.com").tickets == {
        "conference": 1, "workshop": 1}


def test_bad_input_is_refused_with_nothing_stored(service, event):
    with pytest.raises(InvalidBooking):
        service.create_checkin_list(event.id, name="")
    with pytest.raises(InvalidBooking):
        service.create_checkin_list(event.id, name="X", ticket_types=["nope"])
    with pytest.raises(InvalidBooking):
        service.create_checkin_list(event.id, name="X", occupancy_limit=0)
    assert service.checkin_lists(event.id) == []
    lst = service.create_checkin_list(event.id, name="Door")
    with pytest.raises(InvalidBooking):
        service.scan(lst.id, "x", nonce="short")
    with pytest.raises(InvalidBooking):
        service.scan(lst.id, "x", nonce=nonce(), direction="sideways")
    with pytest.raises(CheckinListNotFound):
        service.scan("f" * 32, "x", nonce=nonce())
    assert service.scan_log(lst.id) == []


def test_search_by_name_finds_the_passes_the_list_admits(service, event):
    book(service, event, "ann.lee@example.com", conference=1, workshop=1)
    book(service, event, "bob@example.com")
    talks = service.create_checkin_list(event.id, name="Talks", ticket_types=["conference"])
    found = service.search_passes(talks.id, "ANN")
    assert [(name, p.ticket_type) for name, p in found] == [("Ann.Lee", "conference")]
    assert service.search_passes(talks.id, "a") == []  # too short to search


def test_short_codes__a_pass_by_its_own_a_one_pass_order_by_its_reference(service, event):
    ann = service.passes(book(service, event, "ann@example.com", conference=2, workshop=1))
    bob = book(service, event, "bob@example.com")
    cy = service.passes(book(service, event, "cy@example.com", conference=2))
    lst = service.create_checkin_list(event.id, name="Hall")
    workshop = service.create_checkin_list(event.id, name="Workshop", ticket_types=["workshop"])
    assert ann[1].short_code == f"{ann[1].pass_id[:4].upper()}-{ann[1].pass_id[4:8].upper()}-2"
    typed = ann[1].short_code.lower().replace("-", " ")  # as read out: case and spaces
    first = service.scan(lst.id, typed, nonce=nonce())
    assert first.status == "admitted" and first.pass_id == ann[1].pass_id
    assert service.scan(lst.id, ann[1].short_code, nonce=nonce()).status == "already_admitted"
    assert service.scan(lst.id, bob.reference, nonce=nonce()).status == "admitted"
    # the reference of an order of three: nothing decided, its passes to pick from
    pick = service.scan(lst.id, cy[0].short_code[:9], nonce=nonce())
    assert pick.status == "choose_pass" and len(pick.choices) == 2
    assert [c[0][-1] for c in pick.choices] == ["1", "2"]
    # a list of one ticket type: the reference names the one workshop pass of Ann's three
    only = service.scan(workshop.id, ann[0].short_code[:9], nonce=nonce())
    assert only.status == "admitted" and only.pass_id == ann[2].pass_id
    assert service.checkin_list(lst.id).admitted == 2


def test_short_codes__guessed_or_another_events__unknown_nothing_admitted(service, event):
    ann = service.passes(book(service, event, "ann@example.com"))[0]
    other = service.create_event(name="Other", capacity=5)
    theirs = service.passes(service.book(other.id, name="Zed", email="zed@example.com"))[0]
    lst = service.create_checkin_list(event.id, name="Hall")
    head = ann.short_code[:9]
    wrong = ("0" if head[0] != "0" else "1") + head[1:]
    for typed in (wrong, f"{head}-2", f"{head}-0", theirs.short_code, theirs.short_code[:9]):
        assert service.scan(lst.id, typed, nonce=nonce()).status == "unknown_code", typed
    assert service.checkin_list(lst.id).admitted == 0
