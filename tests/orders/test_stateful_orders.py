"""Stateful property test of orders: random orders and cancellations of part or all of
them against a plain model, on every strategy (in-process moto; the faults and repeats
of single seats are tests/service/test_stateful_booking.py's).

Each example makes one event per strategy, and every step does the same to each (capacity 6, quotas a=2 and b=3, four types
over them, at most 3 seats per order) and four people. Every answer must be the model's:
an order that fits every quota is booked whole (streams: accepted, then decided at once),
one that does not is refused naming the first quota without room (capacity first, then
by name), an order over the limit or a cancellation of more than is held is refused with
nothing stored, a repeat answers the same order. After every step the stored orders and
every quota's counts equal the model's.
"""
import uuid

import hypothesis
from hypothesis import HealthCheck
from hypothesis import strategies as st
from hypothesis.stateful import RuleBasedStateMachine, initialize, invariant, rule, run_state_machine_as_test

from booking.errors import AlreadyRegistered, EventFull, InvalidBooking, NotRegistered
from booking.wiring import get_booking_service
from tests import conformance

STRATEGIES = conformance.ALL
PEOPLE = tuple(f"p{n}@example.com" for n in range(4))
CAPACITY, QUOTAS = 6, {"a": 2, "b": 3}
TYPES = {"plain": [], "ta": ["a"], "tb": ["b"], "ab": ["a", "b"]}
MAX_PER_ORDER = 3
ORDERS = st.dictionaries(st.sampled_from(sorted(TYPES)), st.integers(1, 3), min_size=1, max_size=2)


def seats_of(tickets):
    seats = {"capacity": sum(tickets.values())}
    for ticket_type, quantity in tickets.items():
        for quota in TYPES[ticket_type]:
            seats[quota] = seats.get(quota, 0) + quantity
    return seats


def taken_by(orders) -> dict[str, int]:
    """Seats per quota of ``orders`` (each its tickets)."""
    taken = {"capacity": 0, **{q: 0 for q in QUOTAS}}
    for tickets in orders:
        for quota, n in seats_of(tickets).items():
            taken[quota] += n
    return taken


def expected_refusal(model: dict, email: str, tickets: dict):
    """(error class, quota) the service must answer ``tickets`` for ``email`` given
    ``model`` (e-mail -> tickets held), or (None, None) when the order fits: too many
    seats, already holding an order, or the first quota without room (capacity first,
    then by name)."""
    if sum(tickets.values()) > MAX_PER_ORDER:
        return InvalidBooking, None
    if email in model:
        return AlreadyRegistered, None
    taken, limits = taken_by(model.values()), {"capacity": CAPACITY, **QUOTAS}
    for quota in sorted(seats_of(tickets), key=lambda q: (q != "capacity", q)):
        if taken[quota] + seats_of(tickets)[quota] > limits[quota]:
            return EventFull, quota
    return None, None


class OrdersMachine(RuleBasedStateMachine):
    def __init__(self):
        super().__init__()
        self.service = get_booking_service()
        self.events = {}
        self.model = {}  # strategy -> e-mail -> tickets
        self.booked = {}  # strategy -> e-mail -> (request id, registration)

    @initialize()
    def create_events(self):
        for strategy in STRATEGIES:
            self.events[strategy] = self.service.create_event(
                name=f"Orders {strategy}", capacity=CAPACITY, strategy=strategy, quotas=QUOTAS,
                ticket_types=TYPES, max_per_order=MAX_PER_ORDER).id
            self.model[strategy], self.booked[strategy] = {}, {}

    def _taken(self, strategy):
        return taken_by(self.model[strategy].values())

    def _expected_refusal(self, strategy, email, tickets):
        return expected_refusal(self.model[strategy], email, tickets)

    @rule(email=st.sampled_from(PEOPLE), tickets=ORDERS)
    def book(self, email, tickets):
        """The same order on every strategy's event (their histories stay alike)."""
        for strategy in STRATEGIES:
            self._book(strategy, email, tickets)

    def _book(self, strategy, email, tickets):
        event_id, request_id = self.events[strategy], uuid.uuid4().hex
        refusal, quota = self._expected_refusal(strategy, email, tickets)
        try:
            reg = self.service.book(event_id, name="P", email=email, tickets=tickets,
                                    request_id=request_id)
        except (InvalidBooking, AlreadyRegistered, EventFull) as error:
            assert type(error) is refusal, (error, refusal)
            assert getattr(error, "quota", None) == quota or refusal is not EventFull
            return
        if strategy == "streams":
            assert reg.status == "pending" and refusal in (None, EventFull)
            outcome = self.service.strategy("streams").decide(reg)
            assert outcome == ("confirmed" if refusal is None else "rejected")
            if refusal is not None:
                return
        else:
            assert refusal is None, (refusal, quota)
        assert reg.tickets == tickets
        self.model[strategy][email] = dict(tickets)
        self.booked[strategy][email] = (request_id, tickets)

    @rule(email=st.sampled_from(PEOPLE), part=st.one_of(st.none(), ORDERS))
    def cancel(self, email, part):
        """All of the person's order (``part`` None) or part of it, on every strategy."""
        for strategy in STRATEGIES:
            self._cancel(strategy, email, part)

    def _cancel(self, strategy, email, part):
        event_id, held = self.events[strategy], self.model[strategy].get(email)
        over = part is not None and (sum(part.values()) > MAX_PER_ORDER or held is not None and any(
            n > held.get(t, 0) for t, n in part.items()))
        try:
            removed = self.service.cancel(event_id, email=email, tickets=part)
        except InvalidBooking:
            assert over
            return
        except NotRegistered:
            assert held is None and not over
            return
        assert held is not None and not over
        left = {t: n - (part or held).get(t, 0) for t, n in held.items()}
        left = {t: n for t, n in left.items() if n}
        assert removed.tickets == (part if left else held)
        if left:
            self.model[strategy][email] = left
        else:
            del self.model[strategy][email]
            self.booked[strategy].pop(email, None)

    @rule(email=st.sampled_from(PEOPLE))
    def repeat(self, email):
        """A repeat of a booking that took effect answers that order, booking nothing."""
        for strategy in STRATEGIES:
            if email in self.booked[strategy]:
                request_id, tickets = self.booked[strategy][email]
                again = self.service.book(self.events[strategy], name="P", email=email,
                                          tickets=tickets, request_id=request_id)
                assert again.tickets == tickets

    @invariant()
    def stored_is_the_model(self):
        for strategy, event_id in self.events.items():
            quotas = self.service.availability(event_id).quotas
            assert {q: v.confirmed for q, v in quotas.items()} == self._taken(strategy), strategy
            stored = {r.email: r.tickets for r in self.service.registrations(event_id)
                      if r.status == "confirmed"}
            assert stored == self.model[strategy], strategy


def test_orders_state_machine(dynamo):
    run_state_machine_as_test(OrdersMachine, settings=hypothesis.settings(
        max_examples=3, stateful_step_count=12, deadline=None, derandomize=True,
        database=None, suppress_health_check=[HealthCheck.too_slow,
                                              HealthCheck.function_scoped_fixture]))
