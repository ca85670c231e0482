"""The store (one client and its table names), thin per-table helpers over it, and the
mapping of DynamoDB errors to the access layer's own (the service turns the store's
failures into domain errors: ``booking/service/store_errors.py``).

``Store`` is what the rest of the product is given: ``store.table(EVENTS)`` is the events
table under this deployment's prefix, ``store.transact_write`` and ``store.batch_get`` span
tables. Items go in and come out as plain Python values (boto3's own TypeSerializer and
TypeDeserializer); numbers come back as int where they are integral.
"""
import random
import threading
import time
from dataclasses import dataclass
from decimal import Decimal

from boto3.dynamodb.types import TypeDeserializer, TypeSerializer
from botocore.exceptions import BotoCoreError, ClientError, ConnectionError as BotoConnectionError

from booking.dynamo.tables import TableSpec

_serializer = TypeSerializer()
_deserializer = TypeDeserializer()

THROTTLING_CODES = {
    "ProvisionedThroughputExceededException",
    "ThrottlingException",
    "RequestLimitExceeded",
    "LimitExceededException",
}
# Server-side failures that botocore retried until its attempts were spent.
UNAVAILABLE_CODES = {"InternalServerError", "ServiceUnavailable", "InternalFailure"}


class ConditionFailed(Exception):
    """A conditional write was refused; ``old_item`` is the item as it stood (or None)."""

    def __init__(self, old_item):
        self.old_item = old_item
        super().__init__("conditional check failed")


@dataclass(frozen=True)
class CancellationReason:
    code: str  # "None", "ConditionalCheckFailed", "TransactionConflict", ...
    old_item: dict | None


CONDITION_FAILED = "ConditionalCheckFailed"  # a cancellation reason's code


class TransactionCancelled(Exception):
    """A TransactWriteItems was cancelled; ``reasons`` lines up with the request's items."""

    def __init__(self, reasons: list[CancellationReason]):
        self.reasons = reasons
        super().__init__("transaction cancelled: " + ", ".join(r.code for r in reasons))

    def code(self, index: int) -> str:
        return self.reasons[index].code if index < len(self.reasons) else "None"

    @property
    def conflict(self) -> bool:
        return any(r.code == "TransactionConflict" for r in self.reasons)


class TransactionConflict(Exception):
    """A single-item write collided with a running transaction: safe to retry."""


class StoreError(Exception):
    """The store failed to answer (nothing refused the request): the service layer turns
    each kind into its domain error, keeping this one as the cause."""


class Unavailable(StoreError):
    """The store answered with a server error, or could not be reached (``unreachable``)."""

    def __init__(self, message: str | None = None, *, unreachable: bool = False):
        super().__init__(message or "the store is unavailable")
        self.message = message
        self.unreachable = unreachable  # no connection could be made at all


class Throttled(StoreError):
    """The store kept refusing for throughput until the retries were spent.
    ``maybe_applied``: an earlier attempt's answer may have been lost (botocore resent it)."""

    def __init__(self, message: str | None = None, *, maybe_applied: bool = False):
        super().__init__(message or "the store is throttling requests")
        self.message = message
        self.maybe_applied = maybe_applied


def serialize(item: dict) -> dict:
    return {k: _serializer.serialize(v) for k, v in item.items() if v is not None}


def deserialize(item: dict | None) -> dict | None:
    if item is None:
        return None
    return {k: _plain(_deserializer.deserialize(v)) for k, v in item.items()}


def _plain(value):
    if isinstance(value, Decimal):
        return int(value) if value == value.to_integral_value() else float(value)
    if isinstance(value, dict):
        return {k: _plain(v) for k, v in value.items()}
    if isinstance(value, list):
        return [_plain(v) for v in value]
    if isinstance(value, set):
        return {_plain(v) for v in value}
    return value


def translate(exc: Exception) -> Exception:
    """Map a botocore error to an access-layer error (the caller keeps the cause)."""
    if isinstance(exc, ClientError):
        error = exc.response.get("Error", {})
        code = error.get("Code", "")
        if code == "ConditionalCheckFailedException":
            return ConditionFailed(deserialize(exc.response.get("Item")))
        if code == "TransactionCanceledException":
            reasons = [
                CancellationReason(r.get("Code", "None"), deserialize(r.get("Item")))
                for r in exc.response.get("CancellationReasons", [])
            ]
            return TransactionCancelled(reasons)
        if code == "TransactionConflictException":
            return TransactionConflict(error.get("Message", code))
        if code in THROTTLING_CODES:
            return Throttled(maybe_applied=True)  # an earlier attempt's answer may be lost
        status = exc.response.get("ResponseMetadata", {}).get("HTTPStatusCode") or 0
        if code in UNAVAILABLE_CODES or status >= 500:
            return Unavailable()
        if code == "ResourceNotFoundException":
            return Unavailable(
                "The booking tables do not exist yet. Run `python manage.py create_tables`."
            )
        return exc
    if isinstance(exc, BotoConnectionError):  # no connection could be made at all
        return Unavailable(unreachable=True)
    if isinstance(exc, BotoCoreError):
        return Unavailable()
    return exc


class Store:
    """One DynamoDB client and the prefix that names this deployment's tables.

    ``booking.wiring`` builds the product's; tests and harnesses build their own (another
    client, another prefix) instead of changing settings.
    """

    def __init__(self, client, *, table_prefix: str = "", streams_client=None):
        """``streams_client``: the DynamoDB Streams client (the streams strategy's decider
        reads through it), or a callable that makes it on first use."""
        self.client = client
        self.table_prefix = table_prefix
        self._streams_client = streams_client
        self._tables: dict[str, Table] = {}
        self._lock = threading.Lock()

    @property
    def streams_client(self):
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

    def call(self, operation: str, **request):
        """Run one client operation, translating its errors."""
        try:
            return getattr(self.client, operation)(**request)
        except (ClientError, BotoCoreError) as exc:
            raise translate(exc) from exc

    def pages(self, operation: str, request: dict, page_size: int | None = None):
        """The response pages of a paginated operation (boto3's paginator)."""
        paginator = self.client.get_paginator(operation)
        config = {"PageSize": page_size} if page_size else {}
        try:
            yield from paginator.paginate(**request, PaginationConfig=config)
        except (ClientError, BotoCoreError) as exc:
            raise translate(exc) from exc

    def transact_write(self, operations: list[tuple[str, dict]], *, token: str | None = None,
                       return_old_on_fail: bool = True) -> None:
        """Run TransactWriteItems over ("Put"|"Update"|"Delete"|"ConditionCheck", body) pairs."""
        items = []
        for kind, body in operations:
            if return_old_on_fail:
                body = {**body, "ReturnValuesOnConditionCheckFailure": "ALL_OLD"}
            items.append({kind: body})
        request = {"TransactItems": items}
        if token:
            request["ClientRequestToken"] = token
        self.call("transact_write_items", **request)

    def batch_get(self, requests: list[tuple["Table", dict]]) -> list[dict | None]:
        """Read several items (any tables) consistently in one BatchGetItem; None where absent."""
        wanted = {}
        for table, key in requests:
            entry = wanted.setdefault(table.name, {"Keys": [], "ConsistentRead": True})
            entry["Keys"].append(serialize(key))
        found = self.batch_get_all(wanted)
        results = []
        for table, key in requests:
            match = [i for i in found.get(table.name, [])
                     if all(i.get(k) == v for k, v in key.items())]
            results.append(match[0] if match else None)
        return results

    def batch_get_all(self, wanted: dict) -> dict[str, list[dict]]:
        """Run one BatchGetItem request, re-asking for unprocessed keys; items per table name."""
        found: dict[str, list[dict]] = {}
        for _ in range(12):
            response = self.call("batch_get_item", RequestItems=wanted)
            for name, table_items in response.get("Responses", {}).items():
                found.setdefault(name, []).extend(deserialize(i) for i in table_items)
            wanted = response.get("UnprocessedKeys") or {}
            if not wanted:
                return found
            time.sleep(random.uniform(0, 0.05))
        raise Throttled()


def _expression(request: dict, condition, names, values) -> dict:
    if condition:
        request["ConditionExpression"] = condition
    if names:
        request["ExpressionAttributeNames"] = names
    if values:
        request["ExpressionAttributeValues"] = serialize(values)
    return request


class Table:
    """One DynamoDB table: a method per operation, plain Python values in and out."""

    def __init__(self, spec: TableSpec, store: "Store"):
        self.spec = spec
        self.store = store
        self.name = store.name(spec)

    def get(self, key: dict, *, projection: str | None = None, names=None) -> dict | None:
        request = {"TableName": self.name, "Key": serialize(key), "ConsistentRead": True}
        if projection:
            request["ProjectionExpression"] = projection
        if names:
            request["ExpressionAttributeNames"] = names
        return deserialize(self.store.call("get_item", **request).get("Item"))

    def put(self, item: dict, *, condition=None, names=None, values=None) -> None:
        self.store.call("put_item", **self.put_op(item, condition=condition, names=names, values=values),
             ReturnValuesOnConditionCheckFailure="ALL_OLD")

    def update(self, key: dict, expression: str, *, condition=None, names=None, values=None,
               return_values: str = "NONE") -> dict | None:
        request = self.update_op(key, expression, condition=condition, names=names, values=values)
        response = self.store.call("update_item", **request, ReturnValues=return_values,
                        ReturnValuesOnConditionCheckFailure="ALL_OLD")
        return deserialize(response.get("Attributes"))

    def delete(self, key: dict, *, condition=None, names=None, values=None,
               return_values: str = "NONE") -> dict | None:
        request = self.delete_op(key, condition=condition, names=names, values=values)
        response = self.store.call("delete_item", **request, ReturnValues=return_values,
                        ReturnValuesOnConditionCheckFailure="ALL_OLD")
        return deserialize(response.get("Attributes"))

    # Request bodies, usable alone or as TransactWriteItems members.
    def put_op(self, item, *, condition=None, names=None, values=None) -> dict:
        return _expression({"TableName": self.name, "Item": serialize(item)}, condition, names, values)

    def update_op(self, key, expression, *, condition=None, names=None, values=None) -> dict:
        request = {"TableName": self.name, "Key": serialize(key), "UpdateExpression": expression}
        return _expression(request, condition, names, values)

    def delete_op(self, key, *, condition=None, names=None, values=None) -> dict:
        return _expression({"TableName": self.name, "Key": serialize(key)}, condition, names, values)

    def query(self, *, key_condition: str, values: dict, names=None, index: str | None = None,
              limit: int | None = None, consistent: bool = True, forward: bool = True,
              projection: str | None = None, page_size: int | None = None):
        """Yield items one page at a time from boto3's paginator (never the whole result)."""
        request = {
            "TableName": self.name,
            "KeyConditionExpression": key_condition,
            "ExpressionAttributeValues": serialize(values),
            "ScanIndexForward": forward,
        }
        if index:
            request["IndexName"] = index
        else:
            request["ConsistentRead"] = consistent
        if names:
            request["ExpressionAttributeNames"] = names
        if projection:
            request["ProjectionExpression"] = projection
        if limit is not None:
            request["Limit"] = limit
            yield from (deserialize(i) for i in self.store.call("query", **request).get("Items", []))
            return
        yield from self._paginate("query", request, page_size)

    def count(self, *, key_condition: str, values: dict, filter: str | None = None,
              names=None) -> int:
        request = {
            "TableName": self.name,
            "KeyConditionExpression": key_condition,
            "ExpressionAttributeValues": serialize(values),
            "ConsistentRead": True,
            "Select": "COUNT",
        }
        if filter:
            request["FilterExpression"] = filter
        if names:
            request["ExpressionAttributeNames"] = names
        return sum(page["Count"] for page in self._pages("query", request, None))

    def scan(self, *, projection: str | None = None, names=None, page_size: int | None = None):
        request = {"TableName": self.name, "ConsistentRead": True}
        if projection:
            request["ProjectionExpression"] = projection
        if names:
            request["ExpressionAttributeNames"] = names
        yield from self._paginate("scan", request, page_size)

    def scan_page(self, *, start_key: dict | None = None, limit: int = 100,
                  projection: str | None = None, names=None) -> tuple[list[dict], dict | None]:
        """Return one page of a scan and the key to continue from (None at the end)."""
        return self._scan_page({}, start_key, limit, projection, names)

    def filtered_scan_page(self, *, filter: str, values: dict, names=None,
                           start_key: dict | None = None, limit: int = 100,
                           projection: str | None = None) -> tuple[list[dict], dict | None]:
        """Like ``scan_page`` with a FilterExpression: ``limit`` items are read, fewer kept."""
        extra = {"FilterExpression": filter, "ExpressionAttributeValues": serialize(values)}
        return self._scan_page(extra, start_key, limit, projection, names)

    def _scan_page(self, extra, start_key, limit, projection, names):
        request = {"TableName": self.name, "ConsistentRead": True, "Limit": limit, **extra}
        if start_key:
            request["ExclusiveStartKey"] = serialize(start_key)
        if projection:
            request["ProjectionExpression"] = projection
        if names:
            request["ExpressionAttributeNames"] = names
        response = self.store.call("scan", **request)
        items = [deserialize(i) for i in response.get("Items", [])]
        return items, deserialize(response.get("LastEvaluatedKey"))

    def batch_put(self, items: list[dict], *, max_attempts: int = 12) -> None:
        """Write items 25 at a time, retrying unprocessed items with backoff."""
        for start in range(0, len(items), 25):
            pending = [{"PutRequest": {"Item": serialize(i)}} for i in items[start:start + 25]]
            self._batch_write(pending, max_attempts)

    def batch_delete(self, keys: list[dict], *, max_attempts: int = 12) -> None:
        for start in range(0, len(keys), 25):
            pending = [{"DeleteRequest": {"Key": serialize(k)}} for k in keys[start:start + 25]]
            self._batch_write(pending, max_attempts)

    def batch_get(self, keys: list[dict], *, projection: str | None = None,
                  names=None) -> list[dict | None]:
        """Read items by key consistently, 100 keys per BatchGetItem; None where absent."""
        results = []
        for start in range(0, len(keys), 100):
            chunk = keys[start:start + 100]
            wanted = {"Keys": [serialize(k) for k in chunk], "ConsistentRead": True}
            if projection:
                wanted["ProjectionExpression"] = projection
            if names:
                wanted["ExpressionAttributeNames"] = names
            found = self.store.batch_get_all({self.name: wanted}).get(self.name, [])
            results += [next((i for i in found if all(i.get(k) == v for k, v in key.items())),
                             None) for key in chunk]
        return results

    def delete_partition(self, hash_value, *, chunk: int = 100) -> None:
        """Delete every item under one partition key (keys only, read page by page)."""
        hash_name, range_name = self.spec.hash_key[0], self.spec.range_key[0]
        keys = []
        for item in self.query(key_condition="#hash = :h", values={":h": hash_value},
                               projection="#hash, #range",
                               names={"#hash": hash_name, "#range": range_name}):
            keys.append(item)
            if len(keys) >= chunk:
                self.batch_delete(keys)
                keys = []
        if keys:
            self.batch_delete(keys)

    def _batch_write(self, pending: list, max_attempts: int) -> None:
        for attempt in range(max_attempts):
            response = self.store.call("batch_write_item", RequestItems={self.name: pending})
            pending = response.get("UnprocessedItems", {}).get(self.name, [])
            if not pending:
                return
            time.sleep(random.uniform(0, min(1.0, 0.02 * 2**attempt)))
        raise Throttled("The store is too busy to finish this change. Try again.")

    def _pages(self, operation: str, request: dict, page_size: int | None):
        return self.store.pages(operation, request, page_size)

    def _paginate(self, operation: str, request: dict, page_size: int | None):
        for page in self._pages(operation, request, page_size):
            for item in page.get("Items", []):
                yield deserialize(item)
