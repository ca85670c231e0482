"""POST /api/v1/events/: organizers with write tokens; the Idempotency-Key rides in the
event's own provisioning write, so a retry answers 201 with the same event and creates
nothing; the same key with another payload is 422; bad input stores nothing."""
import json
from concurrent.futures import ThreadPoolExecutor

import pytest

from tests.api.test_organizer import issue
from tests.api.test_registrations import assert_problem

pytestmark = pytest.mark.django_db
BODY = {"name": "API talk", "capacity": 30, "strategy": "slots", "time_zone": "Europe/Berlin",
        "starts_at": "2031-05-01 18:30", "venue": "Room 1"}


def create(client, auth, body=BODY, key="event-1"):
    headers = {**auth, **({"HTTP_IDEMPOTENCY_KEY": key} if key else {})}
    return client.post("/api/v1/events/", json.dumps(body), content_type="application/json",
                       **headers)


def test_create__write_token__201_etag_replay_same_event(client, service):
    _, auth = issue("write")
    first = create(client, auth)
    again = create(client, auth)

    assert first.status_code == again.status_code == 201
    assert first.json() == again.json() and first["ETag"] == '"1"'
    assert first.json()["availability"]["remaining"] == 30
    assert [e.id for e in service.list_events()] == [first.json()["id"]]
    assert_problem(create(client, auth, {**BODY, "capacity": 31}), 422, "idempotency-key-reused")
    _, other = issue("write", username="other")  # keys are scoped to the token
    assert create(client, other).json()["id"] != first.json()["id"]


class AnyoneLeases:
    """Control: a lease everyone gets at once (no guard between two creations)."""

    def acquire(self, lease_id, *, seconds):
        return lease_id

    def release(self, lease):
        return True


def race_same_key(service, threads=4):
    """``threads`` keyed creations at once; each provisioning waits up to 1 s for a second
    one to arrive (only possible when nothing keeps them apart). Returns (outcomes,
    provisionings)."""
    import threading

    from booking.errors import BookingContention

    strategy = service.catalog.strategies["slots"]
    entered, barrier = [], threading.Barrier(2)
    provision = strategy.provision

    def slow_provision(event):
        entered.append(event.id)
        try:
            barrier.wait(timeout=1)
        except threading.BrokenBarrierError:
            pass
        provision(event)

    strategy.provision = slow_provision
    try:
        def create_once(_):
            try:
                return service.create_event(name="Race", capacity=3, strategy="slots",
                                            request_id="race").id
            except BookingContention:
                return "in flight"
            except Exception as error:  # noqa: BLE001 - the control's second put is refused
                return type(error).__name__
        with ThreadPoolExecutor(threads) as pool:
            return list(pool.map(create_once, range(threads))), entered
    finally:
        strategy.provision = provision


def test_create__same_key_at_once__provisioned_once_one_event(service):
    outcomes, entered = race_same_key(service)

    assert len(entered) == 1 and len(service.list_events()) == 1
    assert set(outcomes) - {"in flight"} == {entered[0]}


def test_create__same_key_at_once__control_without_the_lease__provisions_twice(service):
    service.catalog.leases = AnyoneLeases()

    _, entered = race_same_key(service)

    assert len(entered) >= 2  # slots re-put as free under a live event: seats sold twice


def test_create__refusals__nothing_stored(client, service):
    _, read_auth = issue("read", username="reader")
    _, auth = issue("write")
    assert create(client, read_auth).status_code == 403
    assert create(client, {}).status_code == 401
    assert_problem(create(client, auth, key=None), 400, "idempotency-key-missing")
    for body, key in (({**BODY, "capacity": -1}, "k1"), ({**BODY, "strategy": "nope"}, "k2"),
                      ({**BODY, "starts_at": "soon"}, "k3"), ({**BODY, "extra": 1}, "k4"),
                      ({**BODY, "capacity": 10**6}, "k5")):
        assert create(client, auth, body, key).status_code == 400, body
    assert service.list_events() == []


def test_create__ticket_type_named_capacity__problem_names_why_nothing_stored(client, service):
    _, auth = issue("write")
    body = {**BODY, "max_per_order": 2, "ticket_types": {"general": [], "capacity": []}}
    problem = assert_problem(create(client, auth, body, "k-capacity"), 400, "invalid")
    assert "the event's own capacity" in problem["detail"]
    assert service.list_events() == []
