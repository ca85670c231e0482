"""Cancelling the passes a person names (``service.cancel(..., passes=...)``): exactly
those seats are given up, on every strategy, once however often it is asked; a pass used
at the door, cancelled already or of another order is refused with nothing changed."""
import uuid

import pytest

from booking.errors import InvalidBooking

ANN = "ann@example.com"


@pytest.fixture(params=["aggregate", "lock_table", "slots"])
def event(request, service):
    return service.create_event(name="Conf", capacity=50, strategy=request.param,
                                ticket_types={"conference": [], "workshop": []},
                                max_per_order=5)


def order(service, event, **tickets):
    return service.book(event.id, name="Ann", email=ANN, tickets=tickets)


def statuses(service, event):
    return [p.status for p in service.passes(service.find_registration(event.id, email=ANN))]


def test_cancel__named_pass__exactly_that_one_never_the_last(service, event):
    ann = order(service, event, conference=3)
    first = service.passes(ann)[0]
    part = service.cancel(event.id, email=ANN, registration_id=ann.registration_id,
                          passes=[first.pass_id])
    assert part.cancelled_passes == (first.pass_id,)
    assert statuses(service, event) == ["cancelled", "valid", "valid"]
    assert service.find_registration(event.id, email=ANN).tickets == {"conference": 2}
    assert service.availability(event.id).remaining == 48


def test_cancel__named_passes_again_with_one_request_id__given_up_once(service, event):
    ann = order(service, event, conference=2, workshop=2)
    passes = service.passes(ann)
    chosen = [passes[1].pass_id, passes[3].pass_id]  # a conference and a workshop
    request_id = uuid.uuid4().hex
    answers = [service.cancel(event.id, email=ANN, registration_id=ann.registration_id,
                              request_id=request_id, passes=chosen) for _ in range(2)]
    assert [sorted(a.cancelled_passes) for a in answers] == [sorted(chosen)] * 2
    assert statuses(service, event) == ["valid", "cancelled", "valid", "cancelled"]
    assert service.find_registration(event.id, email=ANN).tickets == {"conference": 1,
                                                                      "workshop": 1}
    assert service.availability(event.id).remaining == 48


def test_cancel__every_pass_left__the_whole_order(service, event):
    ann = order(service, event, conference=2)
    ids = [p.pass_id for p in service.passes(ann)]
    service.cancel(event.id, email=ANN, passes=ids[:1])
    removed = service.cancel(event.id, email=ANN, passes=ids[1:])
    assert removed.part_request_id is None
    assert service.find_registration(event.id, email=ANN) is None
    assert service.availability(event.id).remaining == 50


def test_cancel__pass_used_cancelled_or_not_the_orders__refused_nothing_changed(
        service, event):
    ann = order(service, event, conference=3)
    other = service.book(event.id, name="Bo", email="bo@example.com",
                         tickets={"conference": 1})
    lst = service.create_checkin_list(event.id, name="Door")
    passes = service.passes(ann)
    assert service.scan(lst.id, passes[2].code, nonce=uuid.uuid4().hex).status == "admitted"
    with pytest.raises(InvalidBooking, match="already used at the door"):
        service.cancel(event.id, email=ANN, passes=[passes[2].pass_id])
    service.cancel(event.id, email=ANN, passes=[passes[0].pass_id])
    for refused in ([passes[0].pass_id], [service.passes(other)[0].pass_id], ["x"], [],
                    "not a list"):
        with pytest.raises(InvalidBooking):
            service.cancel(event.id, email=ANN, passes=refused)
    assert statuses(service, event) == ["cancelled", "valid", "valid"]
    assert service.find_registration(event.id, email=ANN).tickets == {"conference": 2}
