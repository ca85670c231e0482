"""The store: one DynamoDB client and the prefix that names this deployment's tables.

``Store`` is what the rest of the product is given: ``store.table(EVENTS)`` is the events
table under this deployment's prefix (``booking/dynamo/table.py``), ``store.transact_write``
and ``store.batch_get`` span tables. Every call goes through ``Store.call`` or
``Store.pages``, which turn botocore's errors into the access layer's own
(``booking/dynamo/errors.py``), each failure already its domain error (``Throttled`` a
``BookingContention``, ...). This module is the access layer's face: it also
exports those errors and the item codec, so callers import from one place.
"""
import random
import threading
import time
from collections.abc import Iterable, Iterator
from typing import Any
from contextlib import contextmanager

from botocore.exceptions import (BotoCoreError, ClientError, ConnectTimeoutError,
                                 EndpointConnectionError)

from booking.dynamo.codec import deserialize, serialize
from booking.dynamo.errors import (CONDITION_FAILED, THROTTLING_CODES, CancellationReason,
                                   ConditionFailed, PastDeadline, StoreError, Throttled,
                                   TransactionCancelled, TransactionConflict, Unavailable,
                                   translate)
from booking.dynamo.expressions import Projection, compile
from booking.dynamo.table import Table
from booking.dynamo.expressions import Member, as_op
from booking.dynamo.tables import TableSpec

__all__ = ["CONDITION_FAILED", "CancellationReason", "ConditionFailed", "PastDeadline", "Store",
           "StoreError", "Table", "Throttled", "TransactionCancelled", "TransactionConflict",
           "Unavailable", "deadline", "deserialize", "serialize", "lost_attempts", "throttles",
           "time_left", "translate"]

# Writes whose attempt botocore gave up on (a timeout, a lost connection, a server error)
# and sent again: the attempt may still be applied later, after the answer acted on.
_WRITES = frozenset({"TransactWriteItems", "PutItem", "UpdateItem", "DeleteItem",
                     "BatchWriteItem"})
_NEVER_SENT = (ConnectTimeoutError, EndpointConnectionError, PastDeadline)
_this_thread = threading.local()


@contextmanager
def deadline(seconds: float | None) -> Iterator[None]:
    """Inside the block, this thread's calls to the store end by ``seconds`` from now: each
    attempt's read timeout shrinks to the time left, botocore starts no retry whose pause
    would pass it, and an attempt that would start after it raises ``PastDeadline`` (never
    sent). None: no deadline (the block keeps none either). The outer deadline comes back
    after the block."""
    previous = getattr(_this_thread, "deadline", None)
    _this_thread.deadline = None if seconds is None else time.monotonic() + seconds
    try:
        yield
    finally:
        _this_thread.deadline = previous


def time_left() -> float | None:
    """Seconds left before this thread's deadline (negative: past it), None without one."""
    until = getattr(_this_thread, "deadline", None)
    return None if until is None else until - time.monotonic()


def throttles() -> int:
    """How many attempts of this thread the store refused for throughput (ever; a
    transaction cancelled by a throttled member counts): compare two readings."""
    return getattr(_this_thread, "throttled", 0)


def last_attempt_throttled() -> bool:
    """Whether this thread's last attempt the store saw was refused for throughput."""
    return getattr(_this_thread, "last_throttled", False)


def lost_attempts() -> int:
    """How many write attempts this thread has seen end with their outcome unknown (ever):
    a caller compares two readings to learn whether one of its own may still be in flight.
    A throttled or refused attempt is known not to have applied and does not count."""
    return getattr(_this_thread, "lost", 0)


def _note_lost_attempt(response: Any = None, caught_exception: Any = None, operation: Any = None,
                       **_: Any) -> None:
    """botocore's ``needs-retry`` hook, after every attempt (the calling thread)."""
    if response is not None or not isinstance(caught_exception, _NEVER_SENT):
        # an attempt the store saw (one never sent says nothing of the store)
        _this_thread.last_throttled = response is not None and _throttled(response[1])
    if response is not None and _throttled(response[1]):
        _this_thread.throttled = throttles() + 1
    if operation is None or operation.name not in _WRITES:
        return None
    lost = caught_exception is not None and not isinstance(caught_exception, _NEVER_SENT)
    if lost or (response is not None and response[0].status_code >= 500):
        _this_thread.lost = lost_attempts() + 1
    return None  # never a retry decision of its own


def _throttled(parsed: dict) -> bool:
    error = (parsed or {}).get("Error", {}).get("Code", "")
    return error in THROTTLING_CODES or any(
        reason.get("Code") == "ThrottlingError"
        for reason in (parsed or {}).get("CancellationReasons", []) or [])


def _shrink_to_deadline(request: Any = None, **_: Any) -> None:
    """botocore's ``before-send`` hook: no attempt starts past this thread's deadline, and
    an attempt waits for its answer no longer than the time left (the per-request read
    timeout botocore's HTTP session honours)."""
    left = time_left()
    if left is None or request is None:
        return None
    if left <= 0:
        raise PastDeadline()
    context = getattr(request, "context", None)
    if context is not None:
        configured = context.get("read_timeout") or _configured_read_timeout(context)
        context["read_timeout"] = max(0.01, min(configured or left, left))
    return None


def _configured_read_timeout(context: dict) -> float | None:
    config = context.get("client_config")
    return getattr(config, "read_timeout", None)


def _bound_retries(client: Any) -> None:
    """Wrap botocore's own retry handler so that it starts no retry whose pause would end
    past this thread's deadline: the last attempt's answer (or error) stands instead.
    botocore keeps its handler by a unique id and offers no public way to wrap it; without
    one (another botocore, a stub client), the ``before-send`` hook still bounds retries."""
    events = client.meta.events
    service = client.meta.service_model.service_id.hyphenize()
    unique_id = f"retry-config-{service}"
    emitter = getattr(events, "_emitter", events)
    entry = getattr(emitter, "_unique_id_handlers", {}).get(unique_id)
    if entry is None:
        return
    handler = entry["handler"]

    def needs_retry(**kwargs: Any) -> Any:
        delay = handler(**kwargs)
        left = time_left()
        if delay is None or left is None:
            return delay
        return None if delay >= left else delay

    events.unregister(f"needs-retry.{service}", unique_id=unique_id)
    events.register(f"needs-retry.{service}", needs_retry, unique_id=unique_id)


class Store:
    """One DynamoDB client and the prefix that names this deployment's tables.

    ``booking.wiring`` builds the product's; tests and harnesses build their own (another
    client, another prefix) instead of changing settings.
    """

    def __init__(self, client: Any, *, table_prefix: str = "", streams_client: Any = None) -> None:
        """``streams_client``: the DynamoDB Streams client (the streams strategy's decider
        reads through it), or a callable that makes it on first use."""
        self.client = client
        events = getattr(getattr(client, "meta", None), "events", None)
        if events is not None:
            events.register("needs-retry.dynamodb", _note_lost_attempt,
                            unique_id="booking-lost-attempts")
            events.register("before-send.dynamodb", _shrink_to_deadline,
                            unique_id="booking-deadline")
            if not getattr(client, "_booking_retries_bound", False):
                _bound_retries(client)
                client._booking_retries_bound = True
        self.table_prefix = table_prefix
        self._streams_client = streams_client
        self._tables: dict[str, Table] = {}
        self._lock = threading.Lock()

    @property
    def streams_client(self) -> Any:
        with self._lock:
            if callable(self._streams_client) and not hasattr(self._streams_client, "meta"):
                self._streams_client = self._streams_client()
            return self._streams_client

    def with_prefix(self, table_prefix: str) -> "Store":
        """The same clients, another set of tables."""
        return Store(self.client, table_prefix=table_prefix, streams_client=self.streams_client)

    def name(self, spec: TableSpec) -> str:
        return spec.name_with(self.table_prefix)

    def table(self, spec: TableSpec) -> "Table":
        table = self._tables.get(spec.suffix)
        if table is None:
            table = self._tables.setdefault(spec.suffix, Table(spec, self))
        return table

    def call(self, operation: str, **request: Any) -> Any:
        """Run one client operation, translating its errors."""
        try:
            return getattr(self.client, operation)(**request)
        except (ClientError, BotoCoreError) as exc:
            raise translate(exc) from exc

    def pages(self, operation: str, request: dict[str, Any],
              page_size: int | None = None) -> Iterator[dict[str, Any]]:
        """The response pages of a paginated operation (boto3's paginator)."""
        paginator = self.client.get_paginator(operation)
        config = {"PageSize": page_size} if page_size else {}
        try:
            yield from paginator.paginate(**request, PaginationConfig=config)
        except (ClientError, BotoCoreError) as exc:
            raise translate(exc) from exc

    def transact_write(self, operations: Iterable[Member], *, token: str | None = None,
                       return_old_on_fail: bool = True) -> None:
        """Run TransactWriteItems over typed members (``transaction.Put``...) or
        ("Put"|"Update"|"Delete"|"ConditionCheck", body) pairs."""
        items = []
        for kind, body in map(as_op, operations):
            if return_old_on_fail:
                body = {**body, "ReturnValuesOnConditionCheckFailure": "ALL_OLD"}
            items.append({kind: body})
        request: dict[str, Any] = {"TransactItems": items}
        if token:
            request["ClientRequestToken"] = token
        self.call("transact_write_items", **request)

    def transact_get(self, requests: list[tuple["Table", dict]]) -> list[dict | None]:
        """Read up to 100 items (any tables) in one TransactGetItems: all as of one instant
        (serializable with every transaction); None where absent. A write transaction in
        flight on one of them cancels it (``TransactionCancelled``, a conflict)."""
        response = self.call("transact_get_items", TransactItems=[
            {"Get": {"TableName": table.name, "Key": serialize(key)}} for table, key in requests])
        return [deserialize(answer.get("Item")) for answer in response.get("Responses", [])]

    def batch_get(self, requests: list[tuple[Table, dict]], *,
                  projections: dict[str, Projection] | None = None) -> list[dict | None]:
        """Read several items (any tables) consistently in one BatchGetItem; None where absent.
        ``projections``: table name -> the attributes read (they must include the keys)."""
        wanted: dict[str, dict[str, Any]] = {}
        for table, key in requests:
            entry = wanted.setdefault(table.name, {"Keys": [], "ConsistentRead": True})
            entry["Keys"].append(serialize(key))
            if table.name in (projections or {}):
                entry.update(compile(project=(projections or {})[table.name]))
        found = self.batch_get_all(wanted)
        results: list[dict | None] = []
        for table, key in requests:
            match = [i for i in found.get(table.name, [])
                     if all(i.get(k) == v for k, v in key.items())]
            results.append(match[0] if match else None)
        return results

    def batch_get_all(self, wanted: dict[str, Any]) -> dict[str, list[dict]]:
        """Run one BatchGetItem request, re-asking for unprocessed keys; items per table name."""
        found: dict[str, list[dict]] = {}
        for _ in range(12):
            response = self.call("batch_get_item", RequestItems=wanted)
            for name, table_items in response.get("Responses", {}).items():
                found.setdefault(name, []).extend(item for i in table_items
                                                  if (item := deserialize(i)) is not None)
            wanted = response.get("UnprocessedKeys") or {}
            if not wanted:
                return found
            time.sleep(random.uniform(0, 0.05))
        raise Throttled()
