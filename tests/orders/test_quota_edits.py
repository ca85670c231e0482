"""Resizing further quotas (``update_event(..., quotas=...)``) on every strategy that takes
orders (in-process moto; the race is in tests/admin/test_capacity_races.py)."""
import pytest

from booking.dynamo.tables import EVENTS, REGISTRATIONS, SLOTS
from booking.errors import InvalidBooking, StaleEdit
from booking.strategies import audit
from tests.orders.test_orders import decide_pending, devconf, quota_counts, store_items  # noqa: F401

QUOTA_STRATEGIES = ("aggregate", "lock_table", "slots", "streams")


def book(service, event, name, tickets):
    service.book(event.id, name=name, email=f"{name}@example.com", tickets=tickets)
    if event.strategy == "streams":
        decide_pending(service, event.id)


def slot_items(service, event_id, quota):
    return list(service.store.table(SLOTS).query(
        key_condition="event_id = :e", values={":e": f"{event_id}#{quota}"}))


@pytest.mark.parametrize("strategy", QUOTA_STRATEGIES)
def test_update_event__quota_resized__counts_kept_and_bookable_to_the_new_size(service, strategy):
    event = devconf(service, strategy, workshop=3)
    book(service, event, "ada", {"workshop-a": 2})
    changed = service.update_event(event.id, expected_version=event.version,
                                   quotas={"workshop-a": 30}, name="DevConf 2")
    assert changed.quotas == {"workshop-a": 30, "workshop-b": 3}
    steps = 2 if strategy == "slots" else 1  # slots: at most 25 new slot items per write
    assert changed.version == event.version + steps and changed.name == "DevConf 2"
    assert quota_counts(service, event.id)["workshop-a"] == (30, 2, 0, 28)
    book(service, event, "bob", {"workshop-a": 4})  # did not fit in 3 seats
    assert quota_counts(service, event.id)["workshop-a"] == (30, 6, 0, 24)
    service.update_event(event.id, expected_version=changed.version, quotas={"workshop-a": 6})
    assert quota_counts(service, event.id)["workshop-a"] == (6, 6, 0, 0)
    if strategy == "slots":
        slots = slot_items(service, event.id, "workshop-a")
        assert len(slots) == 6 and all("holder" in s for s in slots)
    assert service.audit(event.id) == []


@pytest.mark.parametrize("strategy", QUOTA_STRATEGIES)
def test_update_event__quota_below_confirmed__refused_naming_quota_and_count(service, strategy):
    event = devconf(service, strategy, workshop=5)
    book(service, event, "ada", {"workshop-a": 3})
    with pytest.raises(InvalidBooking) as refused:
        service.update_event(event.id, expected_version=event.version, capacity=20,
                             quotas={"workshop-a": 2, "workshop-b": 1})
    assert refused.value.field == "quotas"
    assert "'workshop-a'" in refused.value.message and "3 seats" in refused.value.message
    stored = service.get_event(event.id)  # nothing stored, the capacity neither
    assert (stored.version, stored.capacity, stored.quotas) == (
        event.version, 10, {"workshop-a": 5, "workshop-b": 5})
    assert quota_counts(service, event.id)["workshop-b"] == (5, 0, 0, 5)
    if strategy == "slots":
        assert len(slot_items(service, event.id, "workshop-b")) == 5


@pytest.mark.parametrize("strategy", QUOTA_STRATEGIES)
def test_update_event__quota_at_a_stale_version__refused(service, strategy):
    event = devconf(service, strategy)
    service.update_event(event.id, expected_version=event.version, name="Newer")
    with pytest.raises(StaleEdit):
        service.update_event(event.id, expected_version=event.version, quotas={"workshop-a": 9})
    assert service.get_event(event.id).quotas["workshop-a"] == 3


def test_update_event__slots_quota_resized_over_several_steps(service):
    event = devconf(service, "slots", workshop=3)
    book(service, event, "ada", {"workshop-b": 2})
    grown = service.update_event(event.id, expected_version=event.version,
                                 quotas={"workshop-b": 60})  # 3 steps of at most 25 slots
    assert grown.version == event.version + 3
    assert len(slot_items(service, event.id, "workshop-b")) == 60
    service.update_event(event.id, expected_version=grown.version, quotas={"workshop-b": 2})
    assert quota_counts(service, event.id)["workshop-b"] == (2, 2, 0, 0)
    assert service.audit(event.id) == []


BAD_SIZES = [
    ({"vip": 4}, "no quota 'vip'"),
    ({"capacity": 4}, "set it as the capacity"),
    ({"workshop-a": 2.5}, "whole number"),
    ({"workshop-a": "4"}, "whole number"),
    ({"workshop-a": True}, "whole number"),
    ({"workshop-a": -1}, "whole number"),
    ({"workshop-a": 10_001}, "from 0 to 10000"),
    (["workshop-a"], "at most 10 names"),
]


@pytest.mark.parametrize("sizes,message", BAD_SIZES)
def test_update_event__bad_quota_sizes__refused_with_the_field_and_nothing_stored(
        service, store_items, sizes, message):
    event = devconf(service, "slots")
    before = store_items()
    with pytest.raises(InvalidBooking) as refused:
        service.update_event(event.id, expected_version=event.version, quotas=sizes)
    assert refused.value.field == "quotas" and message in refused.value.message
    assert store_items() == before


def test_update_event__quotas_on_a_plain_event__refused(service):
    event = service.create_event(name="Plain", capacity=5, strategy="aggregate")
    with pytest.raises(InvalidBooking) as refused:
        service.update_event(event.id, expected_version=event.version, quotas={"workshop-a": 4})
    assert refused.value.field == "quotas" and "no quotas besides" in refused.value.message
    assert "quota_capacities" not in service.store.table(EVENTS).get({"event_id": event.id})


def test_slots_repair__an_order_events_slot_claims_drifted__repaired_per_quota(service):
    event = devconf(service, "slots", workshop=3)
    book(service, event, "ada", {"workshop-a": 2})
    slots = service.store.table(SLOTS)
    ada = service.store.table(REGISTRATIONS).get({"event_id": event.id, "email": "ada@example.com"})
    named, part = ada["slots"]["workshop-a"][0], f"{event.id}#workshop-a"
    free = next(s["slot"] for s in slot_items(service, event.id, "workshop-a") if "free_in" in s)
    slots.update({"event_id": part, "slot": free}, "SET holder = :h REMOVE free_in",
                 values={":h": "ghost@example.com"})                   # a claim no order names
    slots.update({"event_id": part, "slot": named}, "SET free_in = :e REMOVE holder",
                 values={":e": part})                                  # an order's claim lost
    slots.delete({"event_id": f"{event.id}#workshop-b", "slot": 0})   # a quota's slot missing
    assert {v.invariant for v in service.audit(event.id)} >= {
        audit.CLAIM_HAS_REGISTRATION, audit.REGISTRATION_HOLDS_SLOT, audit.SLOT_COUNT}
    report = service.repair(event.id)
    fixed = report.fixed
    assert report.remaining == []
    assert any("quota workshop-a: freed slot" in line for line in fixed), fixed
    assert any(f"slot {named} claimed for ada@example.com's order" in line for line in fixed)
    assert any("quota workshop-b: created 1 missing" in line for line in fixed), fixed
    assert service.audit(event.id) == []
    assert quota_counts(service, event.id)["workshop-a"] == (3, 2, 0, 1)
