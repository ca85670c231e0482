"""What a torture run does: its configuration and each thread's random operations.

Everything random comes from ``random.Random`` seeded by the run's seed, the process and
the thread, so a seed names the same sequence of choices (the interleaving and the faults
still vary with timing). Requests are the unit of the history: one request id, one
operation (book or cancel) on one (event, person), possibly sent more than once.

Every plain event has an access code (``CODE``) that at most ``code_uses`` orders may
hold; a share of its bookings (``CODE_SHARE``) carry it, and their cancellations give
uses back.

Besides one plain event per strategy, every strategy that takes orders gets an order
event (``ORDER_TYPES`` sharing two workshop quotas): a booking there is a random order of
1-4 seats (step ``order``), and half the cancellations there free part of an order
(step ``partial``, ``cancel(..., tickets=...)``).
"""
import random
from dataclasses import dataclass, field

# Kinds of step a thread takes, with their weights.
NEW_BOOK, NEW_CANCEL, REPEAT, DOUBLE, SHARED, MISMATCH = (
    "book", "cancel", "repeat", "double", "shared", "mismatch")
WEIGHTS = {NEW_BOOK: 40, NEW_CANCEL: 20, REPEAT: 15, DOUBLE: 8, SHARED: 12, MISMATCH: 5}
# A booking or cancellation that landed on an order event is counted under its own kind.
NEW_ORDER, NEW_PARTIAL = "order", "partial"
RECENT = 40  # a thread repeats one of its last RECENT requests
SHARED_REPEATS = 6  # on average, how often each shared request is sent in a run

# The order events: the capacity (``ORDER_CAPACITY_FACTOR`` x --capacity) shared by four
# types, two of which draw on a workshop quota each (--capacity seats) and one on both.
ORDER_TYPES = {"conference": [], "workshop-a": ["workshop-a"], "workshop-b": ["workshop-b"],
               "both": ["workshop-a", "workshop-b"]}
ORDER_CAPACITY_FACTOR = 2
MAX_PER_ORDER = 4
# The plain events' access code, and the share of their bookings that carry it.
CODE = "TORTURE-CODE"
CODE_SHARE = 0.7


@dataclass
class TortureConfig:
    processes: int = 3
    threads: int = 16
    ops: int = 3000
    seed: int = 1
    faults: str = "throttle=0.05,lost_response=0.02,error500=0.01,delay_ms=0-20"
    strategies: list[str] = field(default_factory=lambda: ["aggregate", "lock_table", "slots"])
    capacity: int = 5
    demand: int = 6  # people per event = demand * capacity
    request_history: bool = True
    mail_claims: bool = True
    ambiguity_checks: bool = True
    careless_access_codes: bool = False
    code_uses_given: int | None = None  # --code-uses; None: half the capacity
    unguarded_race_delay_ms: float = 0.0
    # Scans at the door beside the bookings (harness/torture/door.py); ``careless_door``:
    # the control, a scanner that reads, then writes.
    door: bool = True
    careless_door: bool = False

    @property
    def people(self) -> int:
        return self.demand * self.capacity

    @property
    def code_uses(self) -> int:
        """Orders the plain events' code allows: fewer than the seats, so it runs out
        (half of them unless given)."""
        return self.code_uses_given or max(1, self.capacity // 2)

    def order_event(self) -> dict:
        """``create_event`` arguments of an order event (besides name and strategy)."""
        return {"capacity": ORDER_CAPACITY_FACTOR * self.capacity,
                "quotas": {"workshop-a": self.capacity, "workshop-b": self.capacity},
                "ticket_types": ORDER_TYPES, "max_per_order": MAX_PER_ORDER}

    def fault_spec(self) -> str:
        """The server's fault spec, seeded from the run's seed unless it names its own."""
        spec = (self.faults or "").strip()
        if spec in ("", "none"):
            return ""
        return spec if "seed=" in spec else f"{spec},seed={self.seed}"


@dataclass(frozen=True)
class Request:
    request_id: str
    operation: str  # "book" or "cancel"
    event_id: str
    email: str
    name: str = ""
    registration_id: str | None = None  # a cancel that names the registration (a link)
    # An order's tickets (book), or the part of an order to free (cancel), as sorted
    # (type, quantity) pairs; None: one seat of a plain event, or the whole order.
    ticket_pairs: tuple | None = None
    access_code: str | None = None  # a booking with the plain event's code

    @property
    def tickets(self) -> dict | None:
        return dict(self.ticket_pairs) if self.ticket_pairs else None


# Every event asks these; each booking answers them from its own request id (``answers``),
# so the checker knows what every stored order's answers must be.
QUESTIONS = [{"id": "note", "label": "Note", "kind": "text", "required": True},
             {"id": "pass_name", "label": "Name on the pass", "kind": "text",
              "required": True, "per_pass": True}]


def answers(request: "Request") -> tuple[dict, list[dict]]:
    """A booking's answers and its passes' (one per seat), from its request id."""
    seats = sum(request.tickets.values()) if request.tickets else 1
    return ({"note": request.request_id},
            [{"pass_name": f"{request.request_id}#{n}"} for n in range(seats)])


def person(number: int) -> tuple[str, str]:
    return f"Person {number}", f"person{number}@torture.example"


def random_order(rng: random.Random) -> dict[str, int]:
    """1-4 seats over one or two types, leaning on the shared workshop quotas."""
    seats = rng.randint(1, MAX_PER_ORDER)
    first = rng.choice(["workshop-a", "workshop-b", "both", "conference"])
    if seats == 1 or rng.random() < 0.5:
        return {first: seats}
    second = rng.choice([t for t in ORDER_TYPES if t != first])
    split = rng.randint(1, seats - 1)
    return {first: split, second: seats - split}


def random_part(rng: random.Random, held: dict[str, int] | None) -> dict[str, int]:
    """Seats to free of an order: some of one type it holds (``held``, as last answered
    here), or, not knowing the order, one seat of any type (refused if not held)."""
    if not held:
        return {rng.choice(sorted(ORDER_TYPES)): 1}
    ticket_type = rng.choice(sorted(held))
    return {ticket_type: rng.randint(1, held[ticket_type])}


def pairs(tickets: dict | None) -> tuple | None:
    return tuple(sorted(tickets.items())) if tickets else None


class ThreadPlan:
    """One thread's choices: the next step, given what it has seen so far."""

    def __init__(self, config: TortureConfig, event_ids: list[str], process: int, thread: int,
                 order_event_ids: frozenset = frozenset()):
        self.config, self.event_ids, self.order_events = config, event_ids, order_event_ids
        self.random = random.Random(f"{config.seed}:{process}:{thread}")
        self.prefix = f"torture-{config.seed}-{process}-{thread}-"
        self.count = 0
        self.recent: list[Request] = []
        self.settled: list[Request] = []  # requests with a definite answer (for mismatches)
        self.known: dict[tuple[str, str], str] = {}  # (event, email) -> registration id
        self.held: dict[tuple[str, str], dict] = {}  # (order event, email) -> tickets held

    def next_step(self) -> tuple[str, Request]:
        kinds = list(WEIGHTS)
        kind = self.random.choices(kinds, weights=[WEIGHTS[k] for k in kinds])[0]
        if kind == REPEAT and self.recent:
            return kind, self.random.choice(self.recent[-RECENT:])
        if kind == MISMATCH and self.settled:
            return kind, self._mismatch(self.random.choice(self.settled[-RECENT:]))
        if kind == SHARED:
            return kind, self._shared()
        if kind == NEW_CANCEL:
            request = self._new_cancel()
            return (NEW_PARTIAL if request.ticket_pairs else kind), request
        request = self._new_book()
        if kind == DOUBLE:
            return kind, request
        return (NEW_ORDER if request.ticket_pairs else NEW_BOOK), request

    def answered(self, request: Request, answer: dict, definite: bool) -> None:
        """Remember a request and its answer (``answer``: its record, ``worker.invoke``)."""
        if request not in self.recent:
            self.recent = (self.recent + [request])[-RECENT:]
        if definite and request not in self.settled:
            self.settled = (self.settled + [request])[-RECENT:]
        key, registration_id = (request.event_id, request.email), answer.get("registration_id")
        if not registration_id:
            return
        if request.operation == "book":
            self.known[key] = registration_id
            self.held[key] = dict(answer.get("returned_tickets") or {})
        elif answer.get("returned_part"):  # part of the order freed: the rest is held
            left = {t: n - answer["returned_tickets"].get(t, 0)
                    for t, n in self.held.get(key, {}).items()}
            self.held[key] = {t: n for t, n in left.items() if n > 0}
        else:
            self.known.pop(key, None)
            self.held.pop(key, None)

    def _new_id(self) -> str:
        self.count += 1
        return f"{self.prefix}{self.count}"

    def _target(self, rng: random.Random) -> tuple[str, str, str]:
        event_id = rng.choice(self.event_ids)
        name, email = person(rng.randrange(self.config.people))
        return event_id, name, email

    def _new_book(self) -> Request:
        event_id, name, email = self._target(self.random)
        return Request(self._new_id(), "book", event_id, email, name,
                       ticket_pairs=self._order(self.random, event_id),
                       access_code=self._code(self.random, event_id))

    def _code(self, rng: random.Random, event_id: str) -> str | None:
        if event_id in self.order_events or rng.random() >= CODE_SHARE:
            return None
        return CODE

    def _order(self, rng: random.Random, event_id: str) -> tuple | None:
        return pairs(random_order(rng)) if event_id in self.order_events else None

    def _new_cancel(self) -> Request:
        event_id, _, email = self._target(self.random)
        if event_id in self.order_events and self.random.random() < 0.5:
            return self._new_partial(event_id, email)
        link = self.known.get((event_id, email)) if self.random.random() < 0.5 else None
        return Request(self._new_id(), "cancel", event_id, email, registration_id=link)

    def _new_partial(self, event_id: str, email: str) -> Request:
        """Free part of an order: mostly of one this thread saw booked, so it bites."""
        mine = sorted(key for key, held in self.held.items()
                      if held and key[0] in self.order_events)
        if mine and self.random.random() < 0.7:
            event_id, email = self.random.choice(mine)
        part = random_part(self.random, self.held.get((event_id, email)))
        return Request(self._new_id(), "cancel", event_id, email, ticket_pairs=pairs(part))

    def _shared(self) -> Request:
        """A request every process knows by the same id and content: cross-process repeats."""
        pool = max(1, self.config.ops * WEIGHTS[SHARED] // (100 * SHARED_REPEATS))
        number = self.random.randrange(pool)
        rng = random.Random(f"{self.config.seed}:shared:{number}")
        event_id, name, email = self._target(rng)
        request_id = f"shared-{self.config.seed}-{number}"
        if rng.random() < 0.7:
            return Request(request_id, "book", event_id, email, name,
                           ticket_pairs=self._order(rng, event_id),
                           access_code=self._code(rng, event_id))
        part = None
        if event_id in self.order_events and rng.random() < 0.3:
            part = pairs(random_part(rng, None))
        return Request(request_id, "cancel", event_id, email, ticket_pairs=part)

    def _mismatch(self, used: Request) -> Request:
        """The id of a settled request with other content: must be refused, never run."""
        return Request(used.request_id, "book", used.event_id, f"other-{used.email}",
                       "Other Person", ticket_pairs=self._order(self.random, used.event_id))
