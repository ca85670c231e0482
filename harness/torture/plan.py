"""What a torture run does: its configuration and each thread's random operations.

Everything random comes from ``random.Random`` seeded by the run's seed, the process and
the thread, so a seed names the same sequence of choices (the interleaving and the faults
still vary with timing). Requests are the unit of the history: one request id, one
operation (book or cancel) on one (event, person), possibly sent more than once.
"""
import random
from dataclasses import dataclass, field

# Kinds of step a thread takes, with their weights.
NEW_BOOK, NEW_CANCEL, REPEAT, DOUBLE, SHARED, MISMATCH = (
    "book", "cancel", "repeat", "double", "shared", "mismatch")
WEIGHTS = {NEW_BOOK: 40, NEW_CANCEL: 20, REPEAT: 15, DOUBLE: 8, SHARED: 12, MISMATCH: 5}
RECENT = 40  # a thread repeats one of its last RECENT requests
SHARED_REPEATS = 6  # on average, how often each shared request is sent in a run


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
    unguarded_race_delay_ms: float = 0.0

    @property
    def people(self) -> int:
        return self.demand * self.capacity

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


def person(number: int) -> tuple[str, str]:
    return f"Person {number}", f"person{number}@torture.example"


class ThreadPlan:
    """One thread's choices: the next step, given what it has seen so far."""

    def __init__(self, config: TortureConfig, event_ids: list[str], process: int, thread: int):
        self.config, self.event_ids = config, event_ids
        self.random = random.Random(f"{config.seed}:{process}:{thread}")
        self.prefix = f"torture-{config.seed}-{process}-{thread}-"
        self.count = 0
        self.recent: list[Request] = []
        self.settled: list[Request] = []  # requests with a definite answer (for mismatches)
        self.known: dict[tuple[str, str], str] = {}  # (event, email) -> registration id

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
            return kind, self._new_cancel()
        return (DOUBLE if kind == DOUBLE else NEW_BOOK), self._new_book()

    def answered(self, request: Request, registration_id: str | None, definite: bool) -> None:
        """Remember a request and its answer (``registration_id`` when it succeeded)."""
        if request not in self.recent:
            self.recent = (self.recent + [request])[-RECENT:]
        if definite and request not in self.settled:
            self.settled = (self.settled + [request])[-RECENT:]
        key = (request.event_id, request.email)
        if registration_id and request.operation == "book":
            self.known[key] = registration_id
        elif registration_id:
            self.known.pop(key, None)

    def _new_id(self) -> str:
        self.count += 1
        return f"{self.prefix}{self.count}"

    def _target(self, rng: random.Random) -> tuple[str, str, str]:
        event_id = rng.choice(self.event_ids)
        name, email = person(rng.randrange(self.config.people))
        return event_id, name, email

    def _new_book(self) -> Request:
        event_id, name, email = self._target(self.random)
        return Request(self._new_id(), "book", event_id, email, name)

    def _new_cancel(self) -> Request:
        event_id, _, email = self._target(self.random)
        link = self.known.get((event_id, email)) if self.random.random() < 0.5 else None
        return Request(self._new_id(), "cancel", event_id, email, registration_id=link)

    def _shared(self) -> Request:
        """A request every process knows by the same id and content: cross-process repeats."""
        pool = max(1, self.config.ops * WEIGHTS[SHARED] // (100 * SHARED_REPEATS))
        number = self.random.randrange(pool)
        rng = random.Random(f"{self.config.seed}:shared:{number}")
        event_id, name, email = self._target(rng)
        request_id = f"shared-{self.config.seed}-{number}"
        if rng.random() < 0.7:
            return Request(request_id, "book", event_id, email, name)
        return Request(request_id, "cancel", event_id, email)

    def _mismatch(self, used: Request) -> Request:
        """The id of a settled request with other content: must be refused, never run."""
        return Request(used.request_id, "book", used.event_id, f"other-{used.email}",
                       "Other Person")
