"""A ticket type added after creation (``update_event(ticket_types=...)``, docs/orders.md):
its seats count against the capacity and the quotas it names as any type's do, on every
strategy; a process that remembered the event before the type existed reads it again
(booking, cancelling, the streams decider) rather than guess its quotas; removing a type
or moving it to other quotas is refused, nothing stored."""
import pytest

from booking.errors import EventFull, InvalidBooking
from tests.conformance import ALL
from tests.orders.test_orders import decide_pending, devconf, quota_counts
from tests.service.test_recent_event import other_process

VIP = {"vip": ["workshop-a"]}


def with_types(event, added):
    return {**{name: list(q) for name, q in event.ticket_types.items()}, **added}


def remembers(process, event_id):
    """``process`` reads the event now (as it is, before a type is added) and keeps it."""
    process.get_event(event_id)
    if process.get_event(event_id).strategy == "streams":  # the decider's belief too
        process.book(event_id, name="Early", email="early@example.com", tickets={"conference": 1})
        decide_with(process, event_id)


def decide_with(process, event_id):
    streams = process.strategy("streams")
    pending = [r for r in process.registrations(event_id) if r.status == "pending"]
    return [streams.decide(r) for r in sorted(pending, key=lambda r: r.registered_at)]


def book(process, event, name, tickets):
    """Book; on streams decide at once with ``process``'s own decider. The outcome."""
    try:
        registration = process.book(event.id, name=name, email=f"{name}@example.com",
                                    tickets=tickets)
    except EventFull as full:
        return f"full:{full.quota}"
    if registration.status == "pending":
        (outcome,) = [o for o in decide_with(process, event.id)]
        return outcome
    return registration.status


@pytest.mark.parametrize("strategy", ALL)
def test_added_type__counts_against_capacity_and_its_quota__a_stale_process_never_overbooks(
        service, strategy):
    event = devconf(service, strategy, capacity=10, workshop=3)
    booking_process, cancelling_process = other_process(service), other_process(service)
    remembers(booking_process, event.id)
    cancelling_process.get_event(event.id)
    event = service.update_event(event.id, expected_version=event.version,
                                 ticket_types=with_types(event, VIP),
                                 ticket_labels={"vip": "VIP"})
    assert event.ticket_types["vip"] == ("workshop-a",) and event.label("vip") == "VIP"
    assert book(service, event, "ada", {"workshop-a": 2}) == "confirmed"
    # The process that read the event before "vip" existed: its seats still count.
    over = book(booking_process, event, "bob", {"vip": 2})
    assert over in ("full:workshop-a", "rejected")
    assert book(booking_process, event, "cy", {"vip": 1}) == "confirmed"
    counts = quota_counts(service, event.id)
    early = 1 if strategy == "streams" else 0
    assert counts["workshop-a"] == (3, 3, 0, 0)
    assert counts["capacity"][1] == 3 + early
    cancelling_process.cancel(event.id, email="cy@example.com")
    assert quota_counts(service, event.id)["workshop-a"] == (3, 2, 0, 1)


def stale_decider_decides_vip(service, careless: bool) -> tuple[str, tuple]:
    event = devconf(service, "streams", capacity=10, workshop=3)
    stale = other_process(service)
    remembers(stale, event.id)
    service.update_event(event.id, expected_version=service.get_event(event.id).version,
                         ticket_types=with_types(event, VIP))
    if careless:  # the control: a decider that never reads again for a type it lacks
        stale.strategy("streams")._knows = lambda item, tickets: True
    outcome = book(stale, event, "bob", {"vip": 1})
    return outcome, quota_counts(service, event.id)["workshop-a"]


def test_added_type__stale_decider__reads_again_and_confirms(service):
    assert stale_decider_decides_vip(service, careless=False) == ("confirmed", (3, 1, 0, 2))


def test_added_type__stale_decider_trusting_its_belief_control__fails_the_same_check(service):
    """Without the read again the order is never counted in its quota: refused (it never
    guesses), so the check above fails."""
    assert stale_decider_decides_vip(service, careless=True) == ("rejected", (3, 0, 0, 3))


def test_added_type__catalog_that_never_reads_again_control__refused_as_unknown(service):
    """The control: a process whose remembered event is never read again refuses the new
    type (never guessing its quotas): the read again is what lets it book."""
    event = devconf(service, "lock_table")
    stale = other_process(service)
    stale.get_event(event.id)
    service.update_event(event.id, expected_version=event.version,
                         ticket_types=with_types(event, VIP))
    remembered = stale.catalog.event_for(event.id)
    stale.catalog.event_for = lambda event_id, tickets=None: remembered  # careless
    with pytest.raises(InvalidBooking) as refused:
        stale.book(event.id, name="Bob", email="bob@example.com", tickets={"vip": 1})
    assert refused.value.field == "tickets"
    assert quota_counts(service, event.id)["workshop-a"] == (3, 0, 0, 3)


@pytest.mark.parametrize("change, words", [
    (lambda t: {k: v for k, v in t.items() if k != "workshop-b"}, "cannot be removed"),
    (lambda t: {**t, "workshop-b": ["workshop-a"]}, "keeps the quotas"),
    (lambda t: {**t, "vip": ["backstage"]}, "unknown quota"),
    (lambda t: {**t, "Not a slug!": []}, ""),
])
def test_types__removed_moved_or_bad__refused_nothing_stored(service, change, words):
    event = devconf(service, "lock_table")
    with pytest.raises(InvalidBooking) as refused:
        service.update_event(event.id, expected_version=event.version,
                             ticket_types=change(with_types(event, {})))
    assert refused.value.field == "ticket_types" and words in refused.value.message
    assert service.get_event(event.id).version == event.version


def test_types__plain_event__cannot_gain_types(service):
    event = service.create_event(name="Plain", capacity=5, strategy="lock_table")
    with pytest.raises(InvalidBooking) as refused:
        service.update_event(event.id, expected_version=event.version,
                             ticket_types={"admission": [], "vip": []})
    assert "created with ticket types" in refused.value.message
    assert service.get_event(event.id).is_plain


def test_types__slots__an_added_type_beyond_one_write_refused(service):
    event = devconf(service, "slots", capacity=50, workshop=20)
    event = service.update_event(event.id, expected_version=event.version, max_per_order=40)
    with pytest.raises(InvalidBooking):
        service.update_event(event.id, expected_version=event.version,
                             ticket_types=with_types(event, {"both": ["workshop-a",
                                                                      "workshop-b"]}))
    assert "both" not in service.get_event(event.id).ticket_types
