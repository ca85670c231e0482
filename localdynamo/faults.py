"""Faults for the Jepsen-style tests: throttles, 500s, lost responses, latency.

Off unless a spec such as ``throttle=0.05,lost_response=0.02,error500=0.01,delay_ms=0-20,
seed=7`` is given (``dynamodb_local --faults`` or ``LOCAL_DYNAMODB_FAULTS``); then the fault
proxy (proxy.py) in front of DynamoDB Local draws at most one fault per data-plane request:

- ``throttle``: ProvisionedThroughputExceededException (HTTP 400), nothing applied;
- ``error500``: InternalServerError (HTTP 500), nothing applied;
- ``lost_response``: applied by DynamoDB Local, then the connection is closed without an
  answer, so the client cannot know whether it happened;
- ``delay_ms``: a random latency in that range, slept before the request is forwarded.

Control-plane requests (CreateTable, DescribeTable, UpdateTimeToLive, ...) never get a
fault, so set-up is reliable. A seed makes the sequence of draws repeatable.

Tests that need a fault on a chosen request script it instead of drawing it:
``FaultInjector.script(kind, count, skip=..., only_mutating=...)`` forces ``kind`` on the
next ``count`` data-plane requests (after letting ``skip`` through), ahead of the random
draw; ``POST /_localdynamo/faults/next?kind=...&count=...`` does the same over HTTP.
"""
import random
import threading
import time
from collections import Counter, deque
from dataclasses import dataclass

THROTTLE, ERROR500, LOST_RESPONSE, DELAY = "throttle", "error500", "lost_response", "delay"
KINDS = (THROTTLE, LOST_RESPONSE, ERROR500, DELAY)
DATA_PLANE = frozenset({
    "GetItem", "PutItem", "UpdateItem", "DeleteItem", "Query", "Scan", "BatchGetItem",
    "BatchWriteItem", "TransactGetItems", "TransactWriteItems", "ExecuteStatement",
    "BatchExecuteStatement", "ExecuteTransaction",
})
# What a script with only_mutating lets through (PartiQL statements count as mutating).
READS = frozenset({"GetItem", "Query", "Scan", "BatchGetItem", "TransactGetItems"})
SCRIPTABLE = (THROTTLE, LOST_RESPONSE, ERROR500)


class FaultSpecError(ValueError):
    """A fault spec that cannot be parsed; the message says which part."""


@dataclass(frozen=True)
class FaultSpec:
    throttle: float = 0.0
    lost_response: float = 0.0
    error500: float = 0.0
    delay_ms: tuple[float, float] = (0.0, 0.0)
    seed: int | None = None

    @property
    def enabled(self) -> bool:
        return bool(self.throttle or self.lost_response or self.error500 or self.delay_ms[1])

    @classmethod
    def parse(cls, text: str) -> "FaultSpec":
        """Parse ``kind=value,...``; probabilities in [0, 1], delay_ms as ``low-high``."""
        fields = {}
        for part in filter(None, (p.strip() for p in (text or "").split(","))):
            name, _, value = part.partition("=")
            name = name.strip()
            try:
                if name in (THROTTLE, LOST_RESPONSE, ERROR500):
                    fields[name] = float(value)
                    if not 0 <= fields[name] <= 1:
                        raise ValueError
                elif name == "delay_ms":
                    low, _, high = value.partition("-")
                    fields[name] = (float(low), float(high or low))
                    if not 0 <= fields[name][0] <= fields[name][1]:
                        raise ValueError
                elif name == "seed":
                    fields[name] = int(value)
                else:
                    raise FaultSpecError(f"unknown fault {name!r} (known: {', '.join(KINDS)}, "
                                         "delay_ms, seed)")
            except FaultSpecError:
                raise
            except ValueError:
                raise FaultSpecError(f"bad value in {part!r}") from None
        if sum(fields.get(k, 0.0) for k in (THROTTLE, LOST_RESPONSE, ERROR500)) > 1:
            raise FaultSpecError("the fault probabilities add up to more than 1")
        return cls(**fields)


@dataclass
class ScriptedFault:
    """``count`` faults of ``kind`` for the matching requests after the next ``skip``."""

    kind: str
    count: int
    skip: int = 0
    only_mutating: bool = False

    def matches(self, operation: str) -> bool:
        return not (self.only_mutating and operation in READS)


class FaultInjector:
    """Draws faults for data-plane requests and counts those it injected, by kind."""

    def __init__(self, spec: FaultSpec | None = None):
        self.spec = spec or FaultSpec()
        self.random = random.Random(self.spec.seed)
        self.lock = threading.Lock()
        self.counts = Counter({kind: 0 for kind in KINDS})
        self.scripted: deque[ScriptedFault] = deque()

    def script(self, kind: str, count: int = 1, *, skip: int = 0,
               only_mutating: bool = False) -> None:
        """Force ``kind`` on ``count`` data-plane requests, after letting ``skip`` through.

        Scripts queue up in order and are consulted before the random draw. A botocore
        resend is a request of its own, so ``count`` consecutive faults land on one call
        and its resends. ``only_mutating`` lets reads (GetItem, Query, Scan, BatchGetItem,
        TransactGetItems) through without counting them.
        """
        if kind not in SCRIPTABLE:
            raise FaultSpecError(f"cannot script {kind!r} (known: {', '.join(SCRIPTABLE)})")
        if count < 1 or skip < 0:
            raise FaultSpecError("a scripted fault needs count >= 1 and skip >= 0")
        with self.lock:
            self.scripted.append(ScriptedFault(kind, count, skip, only_mutating))

    def clear_script(self) -> int:
        """Drop the scripted faults not used yet; return how many faults they held."""
        with self.lock:
            left = sum(entry.count for entry in self.scripted)
            self.scripted.clear()
        return left

    def draw(self, operation: str) -> str | None:
        """Sleep the request's delay (no lock held); return the fault to inject, or None."""
        if operation not in DATA_PLANE:
            return None
        low, high = self.spec.delay_ms
        with self.lock:
            # Always roll, so a script does not shift a seeded sequence of random faults.
            roll, delay = self.random.random(), self.random.uniform(low, high) if high else 0.0
            fault = self._scripted_for(operation) or self._fault_for(roll)
            if fault:
                self.counts[fault] += 1
            if delay:
                self.counts[DELAY] += 1
        if delay:
            time.sleep(delay / 1000)
        return fault

    def _scripted_for(self, operation: str) -> str | None:
        """The head script's fault for this request, if any (lock held)."""
        head = self.scripted[0] if self.scripted else None
        if head is None or not head.matches(operation):
            return None
        if head.skip:
            head.skip -= 1
            return None
        head.count -= 1
        if not head.count:
            self.scripted.popleft()
        return head.kind

    def _fault_for(self, roll: float) -> str | None:
        for kind in (THROTTLE, LOST_RESPONSE, ERROR500):
            chance = getattr(self.spec, kind)
            if roll < chance:
                return kind
            roll -= chance
        return None

    def snapshot(self) -> dict:
        with self.lock:
            return dict(self.counts)

    def summary(self) -> str:
        return ", ".join(f"{kind}={n}" for kind, n in self.snapshot().items())
