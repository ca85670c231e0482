"""The waiting list on events with orders (moto, in process), on every strategy whose holds
hold orders: an entry asks for tickets, an offer holds exactly that in every quota, accepting
books exactly that, and the line keeps strict order (docs/orders.md)."""
import time

import pytest

from booking.dynamo.tables import WAITING_LIST
from booking.errors import EventFull, InvalidBooking, OfferExpired, SeatsAvailable
from booking.models import BOOKED, EXPIRED, LEFT, OFFERED, WAITING
from booking.waitlist import engine as waitlist_engine
from tests import conformance

ORDER_HOLDS = conformance.ALL


@pytest.fixture(params=ORDER_HOLDS)
def sold_out(request, service):
    """Capacity 4, workshop-a 2: Ada holds both workshop seats, Bob two conference ones."""
    event = service.create_event(
        name="DevConf", capacity=4, strategy=request.param, quotas={"workshop-a": 2},
        ticket_types={"conference": [], "workshop-a": ["workshop-a"]}, max_per_order=3)
    book(service, event, "ada@example.com", {"workshop-a": 2})
    book(service, event, "bob@example.com", {"conference": 2})
    return event


def book(service, event, email, tickets):
    service.book(event.id, name=email.split("@")[0].title(), email=email, tickets=tickets)
    if event.strategy == "streams":  # the decider's step, without a stream
        streams = service.strategy("streams")
        for pending in service.registrations(event.id):
            if pending.status == "pending":
                streams.decide(pending)


def refused(service, event, email, tickets) -> bool:
    """Whether booking ``tickets`` is refused as full (streams: its decider rejects it)."""
    try:
        book(service, event, email, tickets)
    except EventFull:
        return True
    return service.find_registration(event.id, email=email).status == "rejected"


def join(service, event, email, tickets):
    return service.join_waiting_list(event.id, name=email.split("@")[0].title(), email=email,
                                     tickets=tickets)


def cancel(service, event, email, tickets=None):
    """Cancel (all or part), and wait for the offer made right after it."""
    service.cancel(event.id, email=email, tickets=tickets)
    waitlist_engine.flush()


def seats(service, event):
    """Quota -> (confirmed, held)."""
    quotas = service.availability(event.id).quotas
    return {name: (q.confirmed, q.held) for name, q in quotas.items()}


def statuses(service, event):
    return [(e.email, e.status) for e in service.waiting_list(event.id)]


def test_join__entry_stores_its_tickets__bad_order_refused_with_nothing_stored(service, sold_out):
    entry = join(service, sold_out, "cy@example.com", {"conference": 1, "workshop-a": 1})
    assert entry.tickets == {"conference": 1, "workshop-a": 1} and entry.seats == 2

    for tickets in ({"vip": 1}, {"conference": 0}, {"conference": 4}, {}, None,
                    {"capacity": 1}, {"conference": "two"}):
        with pytest.raises(InvalidBooking) as refused:
            join(service, sold_out, "di@example.com", tickets)
        assert refused.value.field == "tickets"
    assert [(e.email, e.tickets) for e in service.waiting_list(sold_out.id)] == [
        ("cy@example.com", {"conference": 1, "workshop-a": 1})]


def test_join__the_order_fits_now__book_instead(service, sold_out):
    cancel(service, sold_out, "bob@example.com", {"conference": 1})  # one seat free
    with pytest.raises(SeatsAvailable):
        join(service, sold_out, "cy@example.com", {"conference": 1})
    join(service, sold_out, "cy@example.com", {"conference": 2})  # does not fit: may wait
    assert statuses(service, sold_out) == [("cy@example.com", WAITING)]


def test_cancel__offer_holds_the_order_in_every_quota__accept_books_exactly_it(service, sold_out):
    join(service, sold_out, "cy@example.com", {"conference": 1, "workshop-a": 1})

    cancel(service, sold_out, "ada@example.com")

    assert statuses(service, sold_out) == [("cy@example.com", OFFERED)]
    assert seats(service, sold_out) == {"capacity": (2, 2), "workshop-a": (0, 1)}
    assert refused(service, sold_out, "eve@example.com", {"conference": 1})  # held: not hers
    registration = service.accept_offer(sold_out.id, email="cy@example.com")
    again = service.accept_offer(sold_out.id, email="cy@example.com")

    assert registration.tickets == {"conference": 1, "workshop-a": 1} and again == registration
    stored = service.find_registration(sold_out.id, email="cy@example.com")
    assert stored.tickets == registration.tickets and stored.is_confirmed
    assert seats(service, sold_out) == {"capacity": (4, 0), "workshop-a": (1, 0)}
    assert statuses(service, sold_out) == [("cy@example.com", BOOKED)]
    assert service.audit(sold_out.id) == []


def test_partial_cancellation__frees_seats_to_the_line(service, sold_out):
    join(service, sold_out, "cy@example.com", {"workshop-a": 1})

    cancel(service, sold_out, "ada@example.com", {"workshop-a": 1})

    assert statuses(service, sold_out) == [("cy@example.com", OFFERED)]
    assert seats(service, sold_out) == {"capacity": (3, 1), "workshop-a": (1, 1)}
    assert service.accept_offer(sold_out.id, email="cy@example.com").tickets == {"workshop-a": 1}
    assert service.audit(sold_out.id) == []


def test_offer__first_in_line_does_not_fit__nobody_after_is_offered(service, sold_out):
    join(service, sold_out, "cy@example.com", {"conference": 3})
    join(service, sold_out, "di@example.com", {"conference": 1})

    cancel(service, sold_out, "bob@example.com", {"conference": 1})  # 1 free, Cy needs 3

    assert statuses(service, sold_out) == [("cy@example.com", WAITING),
                                           ("di@example.com", WAITING)]
    assert seats(service, sold_out)["capacity"] == (3, 0)
    cancel(service, sold_out, "ada@example.com")  # 3 free: Cy's turn, still before Di
    assert statuses(service, sold_out) == [("cy@example.com", OFFERED),
                                           ("di@example.com", WAITING)]
    assert seats(service, sold_out) == {"capacity": (1, 3), "workshop-a": (0, 0)}
    assert service.audit(sold_out.id) == []


def test_decline__every_quota_released_and_the_next_offered(service, sold_out):
    join(service, sold_out, "cy@example.com", {"workshop-a": 2})
    join(service, sold_out, "di@example.com", {"workshop-a": 1})
    cancel(service, sold_out, "ada@example.com")
    assert seats(service, sold_out) == {"capacity": (2, 2), "workshop-a": (0, 2)}

    service.leave_waiting_list(sold_out.id, email="cy@example.com")
    waitlist_engine.flush()

    assert statuses(service, sold_out) == [("cy@example.com", LEFT), ("di@example.com", OFFERED)]
    assert seats(service, sold_out) == {"capacity": (2, 1), "workshop-a": (0, 1)}
    assert service.audit(sold_out.id) == []


def test_offer__lapsed__cannot_be_accepted__every_quota_passed_on(service, sold_out):
    waitlist, clock = service.waitlist.engine, [time.time() * 1000]
    waitlist.clock, waitlist.offer_seconds = (lambda: round(clock[0])), 60
    join(service, sold_out, "cy@example.com", {"workshop-a": 2})
    join(service, sold_out, "di@example.com", {"conference": 1, "workshop-a": 1})
    cancel(service, sold_out, "ada@example.com")
    clock[0] += 61_000  # Cy's offer ran out

    with pytest.raises(OfferExpired):
        service.accept_offer(sold_out.id, email="cy@example.com")
    assert service.waiting_list_pass() == {"offers_expired": 1, "seats_offered": 1}

    assert statuses(service, sold_out) == [("cy@example.com", EXPIRED),
                                           ("di@example.com", OFFERED)]
    assert service.find_registration(sold_out.id, email="cy@example.com") is None
    assert seats(service, sold_out) == {"capacity": (2, 2), "workshop-a": (0, 1)}
    assert service.accept_offer(sold_out.id, email="di@example.com").seats == 2
    assert seats(service, sold_out) == {"capacity": (4, 0), "workshop-a": (1, 0)}
    assert service.audit(sold_out.id) == []


def test_plain_event__entry_stores_exactly_what_it_always_did(service, dynamo):
    event = service.create_event(name="Talk", capacity=1, strategy="lock_table")
    service.book(event.id, name="Ada", email="ada@example.com")
    service.join_waiting_list(event.id, name="Bo", email="bo@example.com")
    service.cancel(event.id, email="ada@example.com")
    waitlist_engine.flush()

    item = service.store.table(WAITING_LIST).get({"event_id": event.id, "email": "bo@example.com"})
    assert set(item) == {"event_id", "email", "name", "position", "status", "joined_at",
                         "request_id", "offer_id", "offer_expires_at", "offered_at", "hold"}
    lock = service.strategy("lock_table").locks.get({"event_id": event.id})
    assert "hold_seats" not in lock and list(lock["holds"]) == ["bo@example.com"]
    assert service.accept_offer(event.id, email="bo@example.com").ticket_counts is None


def test_join__strategy_that_holds_no_seats__no_waiting_list(service):
    # The unguarded control is no ``Holds``: its events have no waiting list.
    event = service.create_event(
        name="DevConf", capacity=1, strategy="unguarded", quotas={"workshop-a": 1},
        ticket_types={"conference": [], "workshop-a": ["workshop-a"]}, max_per_order=2)
    service.book(event.id, name="Ada", email="ada@example.com", tickets={"conference": 1})

    assert not service.has_waiting_list(event)
    with pytest.raises(InvalidBooking, match="no waiting list"):
        join(service, event, "bo@example.com", {"conference": 1})
    assert service.waiting_list(event.id) == []


def test_offer__one_quota_without_room__nothing_held_in_any(service, sold_out):
    join(service, sold_out, "cy@example.com", {"workshop-a": 1})

    cancel(service, sold_out, "bob@example.com")  # the capacity has room, the workshop none

    assert statuses(service, sold_out) == [("cy@example.com", WAITING)]
    assert seats(service, sold_out) == {"capacity": (2, 0), "workshop-a": (2, 0)}
    cancel(service, sold_out, "ada@example.com", {"workshop-a": 1})
    assert statuses(service, sold_out) == [("cy@example.com", OFFERED)]
    assert seats(service, sold_out) == {"capacity": (1, 1), "workshop-a": (1, 1)}
    assert service.audit(sold_out.id) == []


def test_costs__order_offer_and_accept_requests(service, sold_out, monkeypatch):
    from booking.dynamo.metrics import RequestMeter

    join(service, sold_out, "cy@example.com", {"conference": 1, "workshop-a": 1})
    monkeypatch.setattr(waitlist_engine, "offer_soon", lambda *args: None)  # offered below
    service.cancel(sold_out.id, email="ada@example.com")
    meter = RequestMeter().install(service.store)
    try:
        with meter.track() as offer:
            service.offer_seats(sold_out.id)
        with meter.track() as accept:
            service.accept_offer(sold_out.id, email="cy@example.com")
    finally:
        meter.uninstall()

    # The line read, the holds map made sure of (one per lock item) or a free-slot lookup
    # per quota (slots: a second one when a random start finds too few), or (shards, whose
    # shards of an event with orders have their map from the start) one read of every
    # touched quota's shards, the one transaction, the entry read back; then "nobody
    # waiting".
    first, prepare, rest = offer.operations[0], offer.operations[1:-3], offer.operations[-3:]
    assert (first, rest) == ("Query", ["TransactWriteItems", "GetItem", "Query"])
    if sold_out.strategy == "slots":
        assert set(prepare) == {"Query"} and 2 <= len(prepare) <= 4
    elif sold_out.strategy == "shards":
        assert prepare == ["TransactGetItems"]
    else:
        assert prepare == ["UpdateItem"] * (2 if sold_out.strategy == "lock_table" else 1)
    assert accept.operations == ["GetItem", "TransactWriteItems"]


def test_join__more_of_a_quota_than_it_has_in_all__refused_clearly_nothing_stored(
        service, sold_out):
    """Workshop A has 2 seats in all: 3 of them could never be offered, whoever cancels."""
    with pytest.raises(InvalidBooking) as refused:
        join(service, sold_out, "cy@example.com", {"workshop-a": 3})
    assert refused.value.field == "tickets"
    assert refused.value.message.startswith(
        "Workshop A has 2 seats in all: an order can hold at most 2 of them")
    with pytest.raises(InvalidBooking, match="at most 3 seats"):  # beyond seats per order
        join(service, sold_out, "cy@example.com", {"conference": 4})
    assert service.waiting_list(sold_out.id) == []
    join(service, sold_out, "cy@example.com", {"workshop-a": 2})  # can be offered: may wait
    assert statuses(service, sold_out) == [("cy@example.com", WAITING)]
