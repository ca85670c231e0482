"""A re-asked cancellation told "not registered" stays true without a fence of its own.

Against DynamoDB Local behind the fault proxy, as ``test_reask_fence.py``. Ada's
cancellation (by e-mail, the read-then-write path) is held in flight past the request's
deadline, and the store throttles everything meanwhile, so the fence that would close it
cannot be written: "pending, ask again", the attempt left unfenced. The organizer cancels
Ada's registration (another request); Ada asks again with the same request id and is told
"not registered" (nothing is fenced: cancellations are not); Ada books again; the held
attempt is delivered, byte for byte. It removes nothing: every strategy's cancellation
names the registration it read (its id, and an order's tickets), and a registration id is
never stored twice, so an attempt that could no longer apply when the re-ask was told
"not registered" can never apply. The control, ``HolderBlindLockTableStrategy``,
cancels whoever holds the person's place: the late attempt frees Ada's new booking.
"""
import time
import uuid

import pytest

from booking.errors import NotRegistered, OutcomeUnknown
from booking.wiring import service_from_settings
from harness.controls import HolderBlindLockTableStrategy
from tests.concurrency.workers import until_decided
from tests.conftest import GUARDED
# The fault proxy in front of DynamoDB Local with a 1 s deadline, and the held write.
from tests.service.test_reask_fence import held_past_the_deadline, proxied  # noqa: F401

ADA = "ada@example.com"


def told_not_registered_on_a_reask(proxy, service, strategy):
    """Ada's first cancellation is held past the deadline, its fence throttled away; the
    organizer cancels her; she asks again and is told "not registered"; she books again;
    the held attempt arrives. Returns (her two answers, the held attempt's HTTP status, her
    registration now, the event's confirmed seats)."""
    event = service.create_event(name="Changed plans", capacity=2, strategy=strategy)
    # A loaded machine may run a step past the short deadline: asked again until decided.
    until_decided(service.book, event_id=event.id, name="Ada", email=ADA)
    request_id = uuid.uuid4().hex
    held = held_past_the_deadline(proxy, service, [request_id])
    first = second = None
    try:
        try:
            service.cancel(event.id, email=ADA, request_id=request_id)
        except OutcomeUnknown as pending:
            first = pending
        finally:
            proxy.injector.clear_script()
        assert held.held is not None
        time.sleep(0.2)  # the event's cool-down after the throttle
        until_decided(service.cancel, event_id=event.id, email=ADA)  # the organizer
        try:
            service.cancel(event.id, email=ADA, request_id=request_id)
        except NotRegistered as refused:
            second = refused
        again = until_decided(service.book, event_id=event.id, name="Ada", email=ADA)
    finally:
        assert held.held is not None
        status = held.send()
    now = service.find_registration(event.id, email=ADA)
    return (first, second), status, (again, now), service.availability(event.id).confirmed


@pytest.mark.parametrize("strategy", GUARDED)
def test_reask_told_not_registered__the_held_attempt_frees_nothing(proxied, strategy):
    proxy, store = proxied
    service = service_from_settings(store=store)

    (first, second), status, (again, now), confirmed = told_not_registered_on_a_reask(
        proxy, service, strategy)

    assert isinstance(first, OutcomeUnknown), first  # pending, and left unfenced
    assert isinstance(second, NotRegistered), second
    assert status == 400  # refused: the registration it names is gone
    assert now is not None and now.registration_id == again.registration_id
    assert confirmed == 1


def test_control__cancellation_blind_to_the_holder__frees_the_new_booking(proxied):
    proxy, store = proxied
    service = service_from_settings(store=store, extra_strategies={
        "holder_blind": HolderBlindLockTableStrategy})

    (first, second), status, (again, now), confirmed = told_not_registered_on_a_reask(
        proxy, service, "holder_blind")

    assert isinstance(first, OutcomeUnknown) and isinstance(second, NotRegistered)
    assert status == 200 and now is None and confirmed == 0
