"""Exactly-once requests: the request row inside each strategy's own write.

Every strategy, the unguarded control included, runs the same scenarios on moto in
process; the fault cases (lost answers, an unknown outcome) run against the embedded
server with scripted faults.
"""
import threading
import uuid
from unittest import mock

import pytest

from booking.service import bookings as bookings_module
from booking.service import BookingService
from booking.dynamo.metrics import RequestMeter
from tests.helpers import table
from booking.dynamo.tables import REGISTRATIONS, REQUESTS
from booking.errors import (AlreadyRegistered, EventFull, InvalidBooking, NotRegistered,
                            OutcomeUnknown, StoreUnavailable)
from harness.controls import ForgetfulRequestLog
from tests.conftest import GUARDED
from tests import conformance
from tests.mail.helpers import deliver_owed

RID = "form-token-0001"
# Strategies that answer a booking at once (streams answers "pending"; its requests are
# tested in tests/strategies/test_streams.py).
ALL = conformance.AT_ONCE


@pytest.fixture(params=ALL)
def event(request, service):
    return service.create_event(name="Tea", capacity=1, strategy=request.param)


def request_row(request_id=RID):
    return table(REQUESTS).get({"request_id": request_id})


def book(service, event, email="ada@example.com", request_id=RID, name="Ada", again=False):
    """As a form whose records say each asking is its request's first (``again=False``): a
    refusal of a request that may be a re-ask is fenced first (tests/service/
    test_reask_fence.py), a first asking's costs nothing more."""
    return service.book(event.id, name=name, email=email, request_id=request_id,
                        again=again)


def test_book__repeated_after_success__same_registration_no_seat(service, event):
    first = book(service, event)

    assert book(service, event) == first
    assert service.availability(event.id).confirmed == 1
    row = request_row()
    assert (row["operation"], row["registration"]["registration_id"]) == (
        "book", first.registration_id)


def test_book__repeated_after_cancellation__same_answer_never_books_again(service, event):
    first = book(service, event)
    service.cancel(event.id, email="ada@example.com")

    assert book(service, event) == first
    assert service.availability(event.id).confirmed == 0
    assert service.registrations(event.id) == []


def test_book__refused_full_then_seat_freed__repeat_runs_again(service, event):
    book(service, event, email="bo@example.com", request_id="bo-form-0001")
    with pytest.raises(EventFull):
        book(service, event)
    assert request_row() is None  # a refusal writes nothing

    service.cancel(event.id, email="bo@example.com")
    again = book(service, event)

    assert again.email == "ada@example.com" and again.request_id == RID
    assert service.availability(event.id).confirmed == 1


@pytest.mark.parametrize("change", ["other_event", "other_person", "cancel"])
def test_request_id__reused_after_success_for_other_content__refused_nothing_stored(
        service, event, change):
    if (event.strategy, change) == ("unguarded", "cancel"):
        pytest.skip("the control's cancellation is a plain DeleteItem without a request row")
    other = service.create_event(name="Other", capacity=5, strategy=event.strategy)
    book(service, event)

    with pytest.raises(InvalidBooking, match="already used for a different booking"):
        if change == "other_event":
            book(service, other)
        elif change == "other_person":
            book(service, event, email="bo@example.com")
        else:
            service.cancel(event.id, email="ada@example.com", request_id=RID)
    assert service.availability(other.id).confirmed == 0
    assert [r.email for r in service.registrations(event.id)] == ["ada@example.com"]


def test_request_id__refused_request_reused_with_corrected_content__runs(service, event):
    # A refused submission took no effect, so the same form may be sent with other input.
    book(service, event, email="ada@example.com", request_id="ada-form-0001")
    with pytest.raises(AlreadyRegistered):
        book(service, event, email="ADA@example.com ")

    with pytest.raises(EventFull):
        book(service, event, email="bo@example.com")
    assert request_row() is None


def test_book__without_request_id__generated_and_recorded(service, event):
    registration = service.book(event.id, name="Ada", email="ada@example.com")

    assert len(registration.request_id) == 32
    assert request_row(registration.request_id)["fingerprint"]


@pytest.mark.parametrize("strategy", GUARDED)
def test_cancel__repeated__same_answer_seat_freed_once(service, strategy):
    event = service.create_event(name="Tea", capacity=2, strategy=strategy)
    booked = book(service, event, request_id="booking-0001")
    first = service.cancel(event.id, email="ada@example.com", request_id=RID)
    book(service, event, request_id="booking-again-1")

    again = service.cancel(event.id, email="ada@example.com", request_id=RID)

    assert again == first == booked
    assert service.availability(event.id).confirmed == 1  # the new booking stays


@pytest.mark.parametrize("strategy", GUARDED)
def test_cancel__refused_then_repeated_after_booking__runs_again(service, strategy):
    event = service.create_event(name="Tea", capacity=2, strategy=strategy)
    with pytest.raises(NotRegistered):
        service.cancel(event.id, email="ada@example.com", request_id=RID)
    booked = book(service, event, request_id="booking-0001")

    assert service.cancel(event.id, email="ada@example.com", request_id=RID) == booked
    assert service.availability(event.id).confirmed == 0


def test_book__answer_lost__read_back_answers_without_resending(service, event):
    strategy = service.strategy(event.strategy)
    real_book, sent = strategy.book, []

    def applied_then_lost(event, registration, *rest):
        sent.append(registration)
        real_book(event, registration, *rest)
        raise StoreUnavailable()

    with mock.patch.object(strategy, "book", applied_then_lost), \
            mock.patch.object(bookings_module, "RESEND_DELAYS", (0,)):
        booked = book(service, event)

    assert len(sent) == 1 and booked == sent[0]
    assert service.availability(event.id).confirmed == 1
    assert service.unknown_outcomes == {"first_attempt": 1, "resolved": 1}


@pytest.mark.parametrize("strategy_name", GUARDED)
def test_book__answer_lost_and_read_back_fails__resend_answered_by_its_request_row(
        service, strategy_name):
    # moto ignores ClientRequestToken: the re-send of the applied write is refused by its
    # own request row, which answers with the registration it made.
    event = service.create_event(name="Tea", capacity=1, strategy=strategy_name)
    strategy = service.strategy(strategy_name)
    real_book, sent = strategy.book, []

    def applied_then_lost(event, registration, *rest):
        sent.append(registration)
        answer = real_book(event, registration, *rest)
        if len(sent) == 1:
            raise StoreUnavailable()
        return answer

    with mock.patch.object(strategy, "book", applied_then_lost), \
            mock.patch.object(service.requests, "read", side_effect=StoreUnavailable()), \
            mock.patch.object(bookings_module, "RESEND_DELAYS", (0,)):
        booked = book(service, event)

    assert len(sent) == 2 and booked == sent[0]
    assert service.availability(event.id).confirmed == 1


def test_book__first_write_not_applied__row_absent_so_resent_and_booked(service):
    event = service.create_event(name="Tea", capacity=1, strategy="lock_table")
    strategy = service.strategy("lock_table")
    real_book, sent = strategy.book, []

    def refused_then_lost(event, registration, *rest):
        sent.append(1)
        if len(sent) == 2:
            real_book(event, registration, *rest)
        raise StoreUnavailable()

    with mock.patch.object(strategy, "book", refused_then_lost), \
            mock.patch.object(bookings_module, "RESEND_DELAYS", (0, 0)):
        booked = book(service, event)

    assert len(sent) == 2 and booked.request_id == RID
    assert service.availability(event.id).confirmed == 1
    assert service.unknown_outcomes == {"first_attempt": 1, "resolved": 1}


def test_book__nothing_applied_and_store_down__store_unavailable_not_unknown(service):
    event = service.create_event(name="Tea", capacity=1, strategy="lock_table")
    strategy = service.strategy("lock_table")

    with mock.patch.object(strategy, "book", side_effect=StoreUnavailable()), \
            mock.patch.object(bookings_module, "RESEND_DELAYS", (0,)):
        with pytest.raises(StoreUnavailable):
            book(service, event)
    assert service.availability(event.id).confirmed == 0


def test_book__outcome_cannot_be_read_back__outcome_unknown(service):
    event = service.create_event(name="Tea", capacity=1, strategy="lock_table")
    strategy = service.strategy("lock_table")

    with mock.patch.object(strategy, "book", side_effect=StoreUnavailable()), \
            mock.patch.object(service.requests, "read", side_effect=StoreUnavailable()), \
            mock.patch.object(bookings_module, "RESEND_DELAYS", (0,)):
        with pytest.raises(OutcomeUnknown) as unknown:
            book(service, event)
    assert not isinstance(unknown.value, StoreUnavailable)
    assert service.unknown_outcomes == {"first_attempt": 1, "unresolved": 1}
    assert "confirming your booking" in unknown.value.message


def test_book__forgetful_request_log_control__repeat_after_cancel_books_again(dynamo):
    # The control the torture run and the state machine use: without the request row a
    # repeat is a new booking.
    control = BookingService(store=dynamo, default_strategy="lock_table",
                             requests=ForgetfulRequestLog(dynamo))
    event = control.create_event(name="Tea", capacity=1)
    book(control, event)
    control.cancel(event.id, email="ada@example.com")

    again = book(control, event)

    assert control.availability(event.id).confirmed == 1 and again.request_id == RID
    assert request_row() is None


# --- the real embedded server ---------------------------------------------------------
def test_same_request_from_many_threads__one_seat_one_answer(server_store):
    from booking.wiring import get_booking_service

    service = get_booking_service()
    event = service.create_event(name="Rush", capacity=5, strategy="lock_table")
    barrier, answers, lock = threading.Barrier(8), [], threading.Lock()

    def submit():
        barrier.wait()
        answer = service.book(event.id, name="Ada", email="ada@example.com", request_id=RID)
        with lock:
            answers.append(answer)

    threads = [threading.Thread(target=submit) for _ in range(8)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(timeout=60)

    assert len(answers) == 8 and len({a.registration_id for a in answers}) == 1
    assert service.availability(event.id).confirmed == 1
    stored = list(table(REGISTRATIONS).query(key_condition="event_id = :e",
                                             values={":e": event.id}))
    assert [s["request_id"] for s in stored] == [RID]


@pytest.mark.parametrize("strategy", GUARDED)
def test_book__every_attempt_of_the_write_lost__resolved_before_answering(
        server_store, settings, strategy):
    # All of botocore's 4 attempts apply-and-lose (or are refused): the service re-sends
    # the same write and answers the truth, never "try again" while a seat is held.
    from booking.wiring import get_booking_service
    from harness.controls import local_store
    from tests.conftest import start_fault_proxy, use_test_service

    proxy = start_fault_proxy(server_store)
    prefix = get_booking_service().store.table_prefix
    service = use_test_service(local_store(proxy.url, table_prefix=prefix))
    event = service.create_event(name="Lost", capacity=2, strategy=strategy)
    proxy.injector.script("lost_response", 4, only_mutating=True)
    with mock.patch.object(bookings_module, "RESEND_DELAYS", (0.01,)):
        booked = service.book(event.id, name="Ada", email="ada@example.com",
                              request_id=uuid.uuid4().hex)

    assert [r.registration_id for r in service.registrations(event.id)] == [
        booked.registration_id]
    assert service.availability(event.id).confirmed == 1
    proxy.stop()


@pytest.mark.parametrize("strategy", ("aggregate", "lock_table"))
def test_book__one_dynamodb_request_per_booking_and_per_rejection(server_store, strategy):
    # The first rejection in a process is the refused write; the next ones one read.
    from booking.wiring import get_booking_service

    service = get_booking_service()
    event = service.create_event(name="Tea", capacity=1, strategy=strategy)
    meter = RequestMeter().install(get_booking_service().store)
    try:
        with meter.track() as booking:
            book(service, event)
        with meter.track() as rejection:
            with pytest.raises(EventFull):
                book(service, event, email="bo@example.com", request_id="bo-form-0001")
        with meter.track() as next_rejection:  # this process was refused "full": it reads
            with pytest.raises(EventFull):
                book(service, event, email="cy@example.com", request_id="cy-form-0001")
    finally:
        meter.uninstall()

    assert booking.operations == rejection.operations == ["TransactWriteItems"]
    assert next_rejection.operations == ["BatchGetItem"]


@pytest.mark.parametrize("strategy", ("aggregate", "lock_table"))
def test_book__reask_refused__the_refusal_then_one_fence_put(server_store, strategy):
    # A re-ask (or a request id nobody knows to be new) is fenced before its "full" is
    # told: the refusal's own requests, then one PutItem on its request row (1 write unit
    # on DynamoDB: a small item), never on the event's items.
    from booking.wiring import get_booking_service

    service = get_booking_service()
    event = service.create_event(name="Tea", capacity=1, strategy=strategy)
    book(service, event)
    meter = RequestMeter().install(service.store)
    try:
        with meter.track() as refused:
            with pytest.raises(EventFull):
                book(service, event, email="bo@example.com", request_id="bo-form-0002", again=None)
        with meter.track() as reask:  # this process was refused "full": it reads
            with pytest.raises(EventFull):
                book(service, event, email="bo@example.com", request_id="bo-form-0002", again=True)
    finally:
        meter.uninstall()

    assert refused.operations == ["TransactWriteItems", "PutItem"]
    # A known re-ask reads its request row first (the fence: nothing applied), then as
    # any rejection, then adds its attempt to the fence it read (one put).
    assert reask.operations[0] == "GetItem" and reask.operations[-1] == "PutItem", (
        reask.operations)
    assert reask.operations.count("PutItem") == 1, reask.operations
    assert request_row("bo-form-0002")["fences"] == 2


def test_book__slots__booking_unchanged_first_rejection_verifies_next_ones_one_read(
        server_store):
    # slots: a booking is its lookup and its transaction, as ever; the first rejection in
    # a process reads the freed epoch and the slot items themselves (no write); each next
    # one is one consistent BatchGetItem (booking/strategies/slots/freed.py).
    from booking.wiring import get_booking_service

    service = get_booking_service()
    event = service.create_event(name="Tea", capacity=1, strategy="slots")
    meter = RequestMeter().install(get_booking_service().store)
    try:
        with meter.track() as booking:
            book(service, event)
        with meter.track() as rejection:
            with pytest.raises(EventFull):
                book(service, event, email="bo@example.com", request_id="bo-form-0001")
        nexts = []
        for n in range(3):
            with meter.track() as next_rejection:
                with pytest.raises(EventFull):
                    book(service, event, email=f"cy{n}@example.com", request_id=f"cy-form-{n}")
            nexts.append(next_rejection)
    finally:
        meter.uninstall()

    assert booking.operations[-1] == "TransactWriteItems"
    assert set(booking.operations[:-1]) == {"Query"}  # the free-slot lookup
    assert rejection.operations[-3:] == ["GetItem", "Query", "BatchGetItem"]
    # This event had no epoch item yet: its first verification puts it (once per event).
    assert rejection.operations[-5:-3] == ["GetItem", "TransactWriteItems"]
    assert set(rejection.operations[:-5]) == {"Query"}  # the free-slot lookup
    assert [n.operations for n in nexts] == [["BatchGetItem"]] * 3
    assert sum(n.writes for n in nexts) == 0


@pytest.mark.parametrize("strategy", GUARDED)
def test_cancel__link_names_whole_registration__removed_repeat_answers_stale_link_refused(
        service, strategy):
    event = service.create_event(name="Tea", capacity=2, strategy=strategy)
    booked = book(service, event, request_id="booking-0001")

    def cancel_by_link(registration, request_id):
        return service.cancel(event.id, email=registration.email,
                              registration_id=registration.registration_id,
                              request_id=request_id, registration=registration)

    assert cancel_by_link(booked, RID) == booked
    assert cancel_by_link(booked, RID) == booked  # a repeat answers the same
    assert service.availability(event.id).confirmed == 0
    rebooked = book(service, event, request_id="booking-0002")
    with pytest.raises(NotRegistered):  # an old link never cancels a newer booking
        cancel_by_link(booked, "other-cancel-0001")
    assert service.find_registration(event.id, email="ada@example.com") == rebooked


@pytest.mark.parametrize("strategy", ("aggregate", "lock_table"))
def test_cancel_post__link_names_registration__one_request(client, server_store, strategy,
                                                           settings):
    settings.BOOKING_CANCEL_RATE = "off"  # its counter update is counted in test_rate_limits
    from django.urls import reverse

    from booking import links as page_tokens
    from booking.wiring import get_booking_service

    service = get_booking_service()
    event = service.create_event(name="Count", capacity=5, strategy=strategy)
    booked = book(service, event)
    token = page_tokens.registration_token(booked, salt=page_tokens.CANCEL_SALT)
    meter = RequestMeter().install(get_booking_service().store)
    try:
        with meter.track() as post:
            response = client.post(reverse("booking:cancel", args=[token]))
    finally:
        meter.uninstall()
    deliver_owed()

    assert response.status_code == 303
    assert post.operations == ["TransactWriteItems"]  # the event's strategy is known
    assert service.find_registration(event.id, email="ada@example.com") is None


def test_book__store_unreachable_after_unknown_write__outcome_unknown_at_once(service):
    event = service.create_event(name="Tea", capacity=1, strategy="lock_table")
    strategy, unreachable = service.strategy("lock_table"), StoreUnavailable()
    unreachable.unreachable = True

    with mock.patch.object(strategy, "book", side_effect=StoreUnavailable()) as write, \
            mock.patch.object(service.requests, "read", side_effect=unreachable):
        with pytest.raises(OutcomeUnknown):
            book(service, event)
    assert write.call_count == 1  # no re-sends, no pauses, while the store is down
