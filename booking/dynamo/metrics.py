"""Count DynamoDB requests per unit of work with botocore's event hooks (benchmarks).

``RequestMeter.install()`` registers two handlers on this process's client
(``store.client``): ``before-send.dynamodb`` counts every HTTP request actually sent
(botocore's own retries included) and ``after-call.dynamodb`` counts conditional-check
failures in the parsed response. Each is attributed to the ``Tally`` that the calling
thread opened with ``meter.track()``, so concurrent booking attempts on many threads are
counted separately.
"""
import threading
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import Any


CCF = "ConditionalCheckFailed"
WRITE_OPERATIONS = {"PutItem", "UpdateItem", "DeleteItem", "TransactWriteItems",
                    "BatchWriteItem"}


@dataclass
class Tally:
    requests: int = 0
    writes: int = 0
    condition_failures: int = 0
    operations: list[str] = field(default_factory=list)


class RequestMeter:
    """Per-thread request counts; ``unattributed`` counts requests outside ``track()``."""

    def __init__(self) -> None:
        self._local = threading.local()
        self._lock = threading.Lock()
        self.unattributed = 0
        self._uninstall: Callable[[], None] | None = None

    @contextmanager
    def track(self) -> Iterator[Tally]:
        """Attribute this thread's requests to a fresh ``Tally`` while the block runs."""
        tally = Tally()
        self._local.tally = tally
        try:
            yield tally
        finally:
            self._local.tally = None

    def install(self, store: Any) -> "RequestMeter":
        events, send, call = store.client.meta.events, f"send-{id(self)}", f"call-{id(self)}"
        events.register("before-send.dynamodb", self._before_send, unique_id=send)
        events.register("after-call.dynamodb", self._after_call, unique_id=call)

        def uninstall() -> None:
            events.unregister("before-send.dynamodb", unique_id=send)
            events.unregister("after-call.dynamodb", unique_id=call)

        self._uninstall = uninstall
        return self

    def uninstall(self) -> None:
        if self._uninstall:
            self._uninstall()
            self._uninstall = None

    def _before_send(self, request: Any = None, **kwargs: Any) -> None:
        tally = getattr(self._local, "tally", None)
        if tally is None:
            with self._lock:
                self.unattributed += 1
            return None  # None: let botocore send the request
        tally.requests += 1
        target = (request.headers.get("X-Amz-Target") or b"") if request is not None else b""
        operation = target.decode() if isinstance(target, bytes) else str(target)
        tally.operations.append(operation.rsplit(".", 1)[-1])
        return None

    def _after_call(self, parsed: Any = None, model: Any = None, **kwargs: Any) -> None:
        tally = getattr(self._local, "tally", None)
        if tally is None or parsed is None:
            return
        if model is not None and model.name in WRITE_OPERATIONS:
            tally.writes += 1
        error = parsed.get("Error", {}).get("Code", "")
        if error == "ConditionalCheckFailedException":
            tally.condition_failures += 1
        elif error == "TransactionCanceledException":
            reasons = parsed.get("CancellationReasons", [])
            tally.condition_failures += sum(1 for r in reasons if r.get("Code") == CCF)
