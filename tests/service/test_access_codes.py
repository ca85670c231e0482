"""Access codes: a use counted inside the order's own write, on every strategy.

The contract scenarios run on moto in process against every strategy that answers at
once; streams (decided later from its stream) and the requests per booking run against
DynamoDB Local.
"""
from datetime import timedelta

import pytest
from django.utils import timezone

from booking.dynamo.metrics import RequestMeter
from booking.dynamo.tables import ACCESS_CODES, REQUESTS
from booking.errors import (AccessCodeUsedUp, EventFull, InvalidAccessCode, InvalidBooking)
from booking.service.access_codes import ALPHABET
from booking.strategies.streams.decider import StreamDecider
from tests import conformance
from tests.helpers import table

GUARDED_AT_ONCE = tuple(s for s in conformance.AT_ONCE if s != "unguarded")


@pytest.fixture(params=GUARDED_AT_ONCE)
def event(request, service):
    return service.create_event(name="Summit", capacity=10, strategy=request.param)


def book(service, event, n, code="speaker-7q2k", **kwargs):
    return service.book(event.id, name=f"P{n}", email=f"p{n}@example.com",
                        access_code=code, **kwargs)


def uses(service, event, code="SPEAKER-7Q2K"):
    return {c.code: c.uses for c in service.access_codes(event.id)}[code]


def test_create__generated_codes_use_the_unambiguous_alphabet(service, event):
    made = service.create_access_codes(event.id, count=5, max_uses=2)

    assert len({c.code for c in made}) == 5
    for code in made:
        assert set(code.code.replace("-", "")) <= set(ALPHABET)
        assert not set(code.code) & set("0O1I")
    assert sorted(c.code for c in service.access_codes(event.id)) == sorted(
        c.code for c in made)


def test_create__given_code_twice__refused_nothing_stored(service, event):
    service.create_access_codes(event.id, codes=["SPEAKER-7Q2K"])

    with pytest.raises(InvalidBooking) as refused:
        service.create_access_codes(event.id, codes=["new-one", "speaker-7q2k"])

    assert refused.value.field == "code"
    assert [c.code for c in service.access_codes(event.id)] == ["SPEAKER-7Q2K"]


@pytest.mark.parametrize("bad", [{"max_uses": 0}, {"count": 0}, {"count": 101},
                                 {"ticket_types": ["nope"]}, {"valid_until": "soon"},
                                 {"codes": ["a b"]}])
def test_create__bad_input__clear_error_nothing_stored(service, event, bad):
    with pytest.raises(InvalidBooking):
        service.create_access_codes(event.id, **bad)
    assert service.access_codes(event.id) == []


def test_book__code_case_insensitive__use_counted_with_the_order(service, event):
    service.create_access_codes(event.id, codes=["SPEAKER-7Q2K"], max_uses=2)

    booked = book(service, event, 1, code=" speaker-7q2k ")

    assert booked.access_code == "SPEAKER-7Q2K"
    assert uses(service, event) == 1
    assert [r.access_code for r in service.registrations(event.id)] == ["SPEAKER-7Q2K"]
    assert service.audit(event.id) == []


def test_book__used_up__refused_nothing_stored(service, event):
    service.create_access_codes(event.id, codes=["SPEAKER-7Q2K"], max_uses=2)
    book(service, event, 1)
    book(service, event, 2)

    with pytest.raises(AccessCodeUsedUp):
        book(service, event, 3, request_id="third-form-0001")

    assert uses(service, event) == 2
    assert len(service.registrations(event.id)) == 2
    # A request id the caller chose may be asked again: its refusal leaves only a fence
    # (no booking; the id stays free for the person's next asking).
    stored = table(REQUESTS).get({"request_id": "third-form-0001"})
    assert stored is None or ("fenced" in stored and "registration" not in stored)


@pytest.mark.parametrize("case", ["unknown", "other_event", "expired", "revoked", "type"])
def test_book__invalid_code__invalid_access_code_nothing_stored(service, event, case):
    other = service.create_event(name="Other", capacity=5, strategy=event.strategy)
    service.create_access_codes(other.id, codes=["OTHER-CODE"])
    if case == "expired":
        service.create_access_codes(event.id, codes=["SPEAKER-7Q2K"],
                                    valid_until=timezone.now() - timedelta(seconds=1))
    elif case == "type":
        typed = service.create_event(name="Typed", capacity=5, strategy=event.strategy,
                                     ticket_types={"day": [], "workshop": []}, max_per_order=2)
        service.create_access_codes(typed.id, codes=["SPEAKER-7Q2K"], ticket_types=["day"])
        event = typed
    else:
        service.create_access_codes(event.id, codes=["SPEAKER-7Q2K"])
    if case == "revoked":
        service.revoke_access_code(event.id, "speaker-7q2k")
    code = {"unknown": "NOPE-NOPE", "other_event": "OTHER-CODE"}.get(case, "SPEAKER-7Q2K")
    tickets = {"workshop": 1} if case == "type" else None

    with pytest.raises(InvalidAccessCode) as refused:
        book(service, event, 1, code=code, tickets=tickets, request_id="form-token-0001")

    assert refused.value.field == "access_code"
    assert service.registrations(event.id) == []
    assert table(REQUESTS).get({"request_id": "form-token-0001"}) is None
    assert all(c.uses == 0 for c in service.access_codes(event.id))


def test_book__code_for_a_type__unlocks_it_and_code_only_type_needs_a_code(service, event):
    typed = service.create_event(name="Typed", capacity=5, strategy=event.strategy,
                                 ticket_types={"day": [], "speaker": []},
                                 code_only_types=["speaker"])
    service.create_access_codes(typed.id, codes=["SPEAKER-7Q2K"], ticket_types=["speaker"])

    with pytest.raises(InvalidAccessCode):
        book(service, typed, 1, code=None, tickets={"speaker": 1})
    book(service, typed, 2, code=None, tickets={"day": 1})
    booked = book(service, typed, 3, tickets={"speaker": 1})

    assert booked.tickets == {"speaker": 1}
    assert uses(service, typed) == 1


def test_book__repeated_submission__one_use(service, event):
    service.create_access_codes(event.id, codes=["SPEAKER-7Q2K"], max_uses=1)
    first = book(service, event, 1, request_id="form-token-0001")

    assert book(service, event, 1, request_id="form-token-0001") == first
    assert uses(service, event) == 1


def test_book__event_full__no_use_taken(service, event):
    small = service.create_event(name="Small", capacity=1, strategy=event.strategy)
    service.create_access_codes(small.id, codes=["SPEAKER-7Q2K"], max_uses=5)
    book(service, small, 1)

    with pytest.raises(EventFull):
        book(service, small, 2)
    assert uses(service, small) == 1


def test_cancel__gives_the_use_back_in_its_write(service, event):
    service.create_access_codes(event.id, codes=["SPEAKER-7Q2K"], max_uses=1)
    book(service, event, 1)
    with pytest.raises(AccessCodeUsedUp):
        book(service, event, 2)

    service.cancel(event.id, email="p1@example.com")

    assert uses(service, event) == 0
    book(service, event, 2)
    assert uses(service, event) == 1
    assert service.audit(event.id) == []


def test_cancel__through_the_link_registration__gives_the_use_back(service, event):
    from booking import links

    service.create_access_codes(event.id, codes=["SPEAKER-7Q2K"], max_uses=1)
    booked = book(service, event, 1)
    ref = links.read_registration_token(
        links.registration_token(booked, salt=links.CANCEL_SALT), salt=links.CANCEL_SALT)

    service.cancel(event.id, email=ref.email, registration_id=ref.registration_id,
                   registration=ref.registration)

    assert uses(service, event) == 0


def test_cancel__part_of_an_order__keeps_the_use(service, event):
    typed = service.create_event(name="Typed", capacity=5, strategy=event.strategy,
                                 ticket_types={"day": []}, max_per_order=3)
    service.create_access_codes(typed.id, codes=["SPEAKER-7Q2K"], max_uses=1)
    book(service, typed, 1, tickets={"day": 2})

    service.cancel(typed.id, email="p1@example.com", tickets={"day": 1})

    assert uses(service, typed) == 1
    assert service.audit(typed.id) == []


def test_audit__uses_not_matching_orders__reported_and_repair_fixes_the_count(service, event):
    service.create_access_codes(event.id, codes=["SPEAKER-7Q2K"], max_uses=3)
    book(service, event, 1)
    table(ACCESS_CODES).update({"event_id": event.id, "code": "SPEAKER-7Q2K"},
                               "SET uses = :n", values={":n": 3})

    found = service.audit(event.id)
    assert [v.invariant for v in found] == ["access_code_uses"]

    report = service.repair(event.id)
    assert report.remaining == []
    assert uses(service, event) == 1


def test_revoke__unknown_code__invalid_access_code(service, event):
    with pytest.raises(InvalidAccessCode):
        service.revoke_access_code(event.id, "NOPE-NOPE")


# --- against DynamoDB Local: streams, and the requests a booking costs -------------------
@pytest.fixture
def local_service(server_store):
    from booking.wiring import get_booking_service

    return get_booking_service()


def decide_all(service):
    outcomes, caught_up = StreamDecider(service.strategy("streams")).run_pass()
    assert caught_up
    return outcomes


def test_streams__use_taken_at_acceptance__rejection_gives_it_back(local_service):
    service = local_service
    event = service.create_event(name="Queue", capacity=1, strategy="streams")
    service.create_access_codes(event.id, codes=["SPEAKER-7Q2K"], max_uses=3)
    book(service, event, 1)
    book(service, event, 2)
    assert uses(service, event) == 2  # taken when accepted, before any decision

    assert decide_all(service) == {"confirmed": 1, "rejected": 1}

    assert uses(service, event) == 1
    assert service.audit(event.id) == []


def test_streams__used_up_at_acceptance__refused_nothing_stored(local_service):
    service = local_service
    event = service.create_event(name="Queue", capacity=5, strategy="streams")
    service.create_access_codes(event.id, codes=["SPEAKER-7Q2K"], max_uses=1)
    book(service, event, 1)

    with pytest.raises(AccessCodeUsedUp):
        book(service, event, 2)
    service.cancel(event.id, email="p1@example.com")  # withdrawn while pending
    assert uses(service, event) == 0


@pytest.mark.parametrize("strategy", ("aggregate", "lock_table", "shards"))
def test_book__with_a_code_one_request__without_as_before(local_service, strategy):
    service = local_service
    event = service.create_event(name="Tea", capacity=5, strategy=strategy)
    service.create_access_codes(event.id, codes=["SPEAKER-7Q2K"], max_uses=1)
    meter = RequestMeter().install(service.store)
    try:
        with meter.track() as plain:
            service.book(event.id, name="Ann", email="ann@example.com")
        with meter.track() as coded:
            book(service, event, 1)
        with meter.track() as used_up:
            with pytest.raises(AccessCodeUsedUp):
                book(service, event, 2)
    finally:
        meter.uninstall()

    assert plain.operations == coded.operations == used_up.operations == [
        "TransactWriteItems"]


# --- reserved seats ---------------------------------------------------------------------
RESERVING = tuple(s for s in conformance.ALL if s != "unguarded")  # strategies with holds


def book_all(service, event, people, code=None):
    """Book each of ``people`` (e-mail prefixes): the tally of outcomes."""
    from collections import Counter

    tally = Counter()
    for person in people:
        try:
            service.book(event.id, name=person, email=f"{person}@example.com",
                         access_code=code)
            tally["booked"] += 1
        except EventFull:
            tally["full"] += 1
    return tally


def confirmed(service, event):
    """The confirmed registrations' e-mails (streams: once its decider has decided)."""
    if event.strategy == "streams":
        decide_all(service)
    return sorted(r.email for r in service.registrations(event.id) if r.is_confirmed)


@pytest.mark.parametrize("strategy", RESERVING)
def test_reserved__4_of_10_held__others_get_6_holders_4_then_lapsed_seats_sell(
        local_service, strategy):
    service = local_service
    event = service.create_event(name="Reserved", capacity=10, strategy=strategy)
    until = timezone.now() + timedelta(seconds=4)
    service.create_access_codes(event.id, codes=["SPEAKER-7Q2K"], max_uses=10,
                                valid_until=until, reserved_seats=4)
    assert service.availability(event.id).held == 4

    public = book_all(service, event, [f"public{n}" for n in range(40)])
    public_booked = confirmed(service, event)
    holders = book_all(service, event, [f"holder{n}" for n in range(6)], code="speaker-7q2k")
    everyone = confirmed(service, event)

    if strategy == "streams":
        assert len(public_booked) == 6  # accepted pending, decided: 6 confirmed
    else:
        assert public == {"booked": 6, "full": 34}
        assert holders == {"booked": 4, "full": 2}
    assert len(everyone) == 10
    assert sum(e.startswith("holder") for e in everyone) == 4
    assert uses(service, event) == 4
    assert service.audit(event.id) == []


@pytest.mark.parametrize("strategy", RESERVING)
def test_reserved__unused_after_valid_until__sold_to_others(local_service, strategy):
    import time

    service = local_service
    event = service.create_event(name="Lapse", capacity=3, strategy=strategy)
    service.create_access_codes(event.id, codes=["SPEAKER-7Q2K"], max_uses=5,
                                valid_until=timezone.now() + timedelta(seconds=2),
                                reserved_seats=2)
    book_all(service, event, ["a1", "a2", "a3"])
    assert len(confirmed(service, event)) == 1
    book_all(service, event, ["h1"], code="SPEAKER-7Q2K")
    assert len(confirmed(service, event)) == 2

    time.sleep(2.5)  # the code, and its seat still reserved, lapse
    if strategy == "streams":  # its decider counts held seats until the worker frees them
        assert service.access_code_pass() == {"reservations_released": 1}
    with pytest.raises(InvalidAccessCode):
        book(service, event, 9)
    book_all(service, event, ["late1", "late2"])

    final = confirmed(service, event)
    assert len(final) == 3 and "late1@example.com" in final


@pytest.mark.parametrize("strategy", ("aggregate", "lock_table"))
def test_reserved__revoked__seats_return_to_sale(local_service, strategy):
    service = local_service
    event = service.create_event(name="Revoke", capacity=2, strategy=strategy)
    service.create_access_codes(event.id, codes=["SPEAKER-7Q2K"], reserved_seats=2)
    assert book_all(service, event, ["a1"]) == {"full": 1}

    service.revoke_access_code(event.id, "SPEAKER-7Q2K")

    assert book_all(service, event, ["a1", "a2"]) == {"booked": 2}


def test_reserved__more_than_free__refused_nothing_stored(local_service):
    service = local_service
    event = service.create_event(name="Small", capacity=2, strategy="lock_table")
    with pytest.raises(InvalidBooking) as refused:
        service.create_access_codes(event.id, codes=["A-CODE", "B-CODE"], reserved_seats=2)

    assert refused.value.field == "reserved_seats"
    assert service.access_codes(event.id) == []
    assert service.availability(event.id).held == 0
