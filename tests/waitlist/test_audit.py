"""check_capacity on waiting lists: drift injected straight into the tables is named."""
import pytest

from booking.waitlist import engine as waitlist_engine
from booking.waitlist import audit as wl
from tests.helpers import table
from booking.dynamo.tables import EVENT_LOCKS, WAITING_LIST
from tests.management.test_check_capacity import check_json

GUARDED = ("aggregate", "lock_table", "slots", "shards")


def lined_up(service, strategy):
    """A full one-seat event, two waiting, the seat freed and offered to the first."""
    event = service.create_event(name="Talk", capacity=1, strategy=strategy)
    service.book(event.id, name="Ada", email="ada@example.com")
    for name in ("Bo", "Cy"):
        service.join_waiting_list(event.id, name=name, email=f"{name.lower()}@example.com")
    service.cancel(event.id, email="ada@example.com")
    waitlist_engine.flush()  # the offer made right after
    return event


def invariants(payload):
    return sorted(v["invariant"] for v in payload["violations"])


@pytest.mark.parametrize("strategy", GUARDED)
def test_check_capacity__offers_and_holds_in_order__exit_0(service, strategy):
    event = lined_up(service, strategy)

    status, payload = check_json(event.id)

    assert (status, payload["violations"]) == (0, [])


@pytest.mark.parametrize("strategy", GUARDED)
def test_check_capacity__offer_skipped_someone__named(service, strategy):
    event = lined_up(service, strategy)
    entries = table(WAITING_LIST)  # an earlier entry put back to waiting behind an offer
    entries.update({"event_id": event.id, "email": "bo@example.com"}, "SET #s = :w",
                   names={"#s": "status"}, values={":w": "waiting"})
    entries.update({"event_id": event.id, "email": "cy@example.com"}, "SET offer_id = :o",
                   values={":o": "f" * 32})

    status, payload = check_json(event.id)

    assert status == 1
    assert wl.OFFERS_IN_ORDER in invariants(payload)
    assert wl.HOLD_MATCHES_OFFER in invariants(payload)  # Bo's hold has no open offer now


def test_check_capacity__registered_and_waiting__named(service):
    event = lined_up(service, "lock_table")
    service.accept_offer(event.id, email="bo@example.com")
    table(WAITING_LIST).update({"event_id": event.id, "email": "bo@example.com"},
                               "SET #s = :w", names={"#s": "status"}, values={":w": "offered"})

    status, payload = check_json(event.id)

    assert status == 1 and wl.REGISTERED_AND_WAITING in invariants(payload)


def test_check_capacity__held_seat_not_counted__named(service):
    event = lined_up(service, "lock_table")
    table(EVENT_LOCKS).update({"event_id": event.id}, "SET confirmed_count = :z",
                              values={":z": 0})

    status, payload = check_json(event.id)

    assert status == 1 and "counter_matches_registrations" in invariants(payload)
