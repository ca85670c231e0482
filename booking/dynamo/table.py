"""One DynamoDB table under this deployment's prefix: a method per operation, plain Python
values in and out (``store.table(SPEC)`` hands them out).

Expressions come as objects (``booking.dynamo.expressions``: conditions, ``Actions``,
projections), whose placeholders are generated; a caller not yet moved to them may still
pass an expression's text with its ``names`` and ``values``.
"""
from __future__ import annotations

import random
import re
import time
from collections.abc import Iterable, Iterator
from typing import Any, Protocol

from booking.dynamo.codec import deserialize, serialize
from booking.dynamo.errors import Throttled
from booking.dynamo.expressions import (Actions, Condition, Projection, attr, compile,
                                        projection)
from booking.dynamo.tables import TableSpec


Item = dict[str, Any]


class Store(Protocol):
    """What a table uses of its ``booking.dynamo.access.Store``."""

    def name(self, spec: TableSpec) -> str: ...

    def call(self, operation: str, **request: Any) -> Any: ...

    def pages(self, operation: str, request: dict[str, Any],
              page_size: int | None = None) -> Iterator[dict[str, Any]]: ...

    def batch_get_all(self, wanted: dict[str, Any]) -> dict[str, list[Item]]: ...

    def batch_get(self, requests: list[tuple[Any, Item]]) -> list[Item | None]: ...

    def transact_write(self, operations: Iterable[Any], *, token: str | None = None,
                       return_old_on_fail: bool = True) -> None: ...


When = Condition | str | None  # a condition; its text (with names and values) only in old code
Names = dict[str, str] | None
Values = dict[str, Any] | None


def _expression(request: dict[str, Any], condition: When, names: Names, values: Values, *,
                update: Actions | str | None = None, key: Condition | str | None = None,
                filter: Condition | str | None = None,
                projection: Projection | str | None = None) -> dict[str, Any]:
    """``request`` with its expressions: generated from objects, and the text given with its
    ``names`` and ``values`` (in code not yet moved to the objects; the two may not share
    a placeholder)."""
    request.update(compile(
        condition=condition if isinstance(condition, Condition) else None,
        update=update if isinstance(update, Actions) else None,
        key=key if isinstance(key, Condition) else None,
        filter=filter if isinstance(filter, Condition) else None,
        project=projection if isinstance(projection, Projection) else None))
    for field, text in (("KeyConditionExpression", key), ("UpdateExpression", update),
                        ("ConditionExpression", condition), ("FilterExpression", filter),
                        ("ProjectionExpression", projection)):
        if isinstance(text, str) and text:
            request[field] = text
    if names and "ExpressionAttributeNames" in request:
        # Mixed: a hand-written name only its own text uses (DynamoDB refuses unused ones).
        texts = " ".join(t for t in (key, update, condition, filter, projection)
                         if isinstance(t, str))
        names = {k: v for k, v in names.items() if re.search(re.escape(k) + r"(?!\w)", texts)}
    for field, given in (("ExpressionAttributeNames", names),
                         ("ExpressionAttributeValues", serialize(values) if values else None)):
        if given:
            generated = request.setdefault(field, {})
            if generated.keys() & given.keys():
                raise ValueError(f"a hand-written placeholder repeats a generated one: {given}")
            generated.update(given)
    return request


class Table:
    """One DynamoDB table: a method per operation, plain Python values in and out."""

    def __init__(self, spec: TableSpec, store: Store) -> None:
        """``store``: the Store whose client and prefix it uses."""
        self.spec = spec
        self.store = store
        self.name = store.name(spec)

    def get(self, key: Item, *, projection: Projection | str | None = None,
            names: Names = None) -> Item | None:
        request = _expression({"TableName": self.name, "Key": serialize(key),
                               "ConsistentRead": True}, None, names, None,
                              projection=projection)
        return deserialize(self.store.call("get_item", **request).get("Item"))

    def put(self, item: Item, *, condition: When = None, names: Names = None,
            values: Values = None) -> None:
        self.store.call("put_item", **self.put_op(item, condition=condition, names=names,
                                                  values=values),
                        ReturnValuesOnConditionCheckFailure="ALL_OLD")

    def update(self, key: Item, expression: Actions | str, *, condition: When = None,
               names: Names = None, values: Values = None,
               return_values: str = "NONE") -> Item | None:
        request = self.update_op(key, expression, condition=condition, names=names,
                                 values=values)
        response = self.store.call("update_item", **request, ReturnValues=return_values,
                                   ReturnValuesOnConditionCheckFailure="ALL_OLD")
        return deserialize(response.get("Attributes"))

    def delete(self, key: Item, *, condition: When = None, names: Names = None,
               values: Values = None, return_values: str = "NONE") -> Item | None:
        request = self.delete_op(key, condition=condition, names=names, values=values)
        response = self.store.call("delete_item", **request, ReturnValues=return_values,
                                   ReturnValuesOnConditionCheckFailure="ALL_OLD")
        return deserialize(response.get("Attributes"))

    # Request bodies, usable alone or as TransactWriteItems members.
    def put_op(self, item: Item, *, condition: When = None, names: Names = None,
               values: Values = None) -> dict[str, Any]:
        return _expression({"TableName": self.name, "Item": serialize(item)}, condition, names,
                           values)

    def update_op(self, key: Item, expression: Actions | str, *, condition: When = None,
                  names: Names = None, values: Values = None) -> dict[str, Any]:
        return _expression({"TableName": self.name, "Key": serialize(key)}, condition, names,
                           values, update=expression)

    def delete_op(self, key: Item, *, condition: When = None, names: Names = None,
                  values: Values = None) -> dict[str, Any]:
        return _expression({"TableName": self.name, "Key": serialize(key)}, condition, names,
                           values)

    def check_op(self, key: Item, *, condition: When, names: Names = None,
                 values: Values = None) -> dict[str, Any]:
        """A ConditionCheck member's body (the same fields as a delete's)."""
        return self.delete_op(key, condition=condition, names=names, values=values)

    def query(self, *, key_condition: Condition | str, values: Values = None,
              names: Names = None, index: str | None = None, limit: int | None = None,
              consistent: bool = True, forward: bool = True,
              projection: Projection | str | None = None, page_size: int | None = None,
              filter: Condition | str | None = None) -> Iterator[Item]:
        """Yield items one page at a time from boto3's paginator (never the whole result);
        ``filter`` drops items from the answer (DynamoDB still charges for reading them)."""
        request = _expression({"TableName": self.name, "ScanIndexForward": forward}, None,
                              names, values, key=key_condition, filter=filter,
                              projection=projection)
        if index:
            request["IndexName"] = index
        else:
            request["ConsistentRead"] = consistent
        if limit is not None:
            request["Limit"] = limit
            found = self.store.call("query", **request).get("Items", [])
            yield from (item for i in found if (item := deserialize(i)) is not None)
            return
        yield from self._paginate("query", request, page_size)

    def count(self, *, key_condition: Condition | str, values: Values = None,
              filter: Condition | str | None = None, names: Names = None) -> int:
        request = _expression({"TableName": self.name, "ConsistentRead": True,
                               "Select": "COUNT"}, None, names, values, key=key_condition,
                              filter=filter)
        return sum(page["Count"] for page in self._pages("query", request, None))

    def scan(self, *, projection: Projection | str | None = None, names: Names = None,
             page_size: int | None = None) -> Iterator[Item]:
        request = _expression({"TableName": self.name, "ConsistentRead": True}, None, names,
                              None, projection=projection)
        yield from self._paginate("scan", request, page_size)

    def scan_page(self, *, start_key: Item | None = None, limit: int = 100,
                  projection: Projection | str | None = None,
                  names: Names = None) -> tuple[list[Item], Item | None]:
        """Return one page of a scan and the key to continue from (None at the end)."""
        return self._scan_page(None, None, start_key, limit, projection, names)

    def filtered_scan_page(self, *, filter: Condition | str, values: Values = None,
                           names: Names = None, start_key: Item | None = None,
                           limit: int = 100, projection: Projection | str | None = None
                           ) -> tuple[list[Item], Item | None]:
        """Like ``scan_page`` with a FilterExpression: ``limit`` items are read, fewer kept."""
        return self._scan_page(filter, values, start_key, limit, projection, names)

    def _scan_page(self, filter: Condition | str | None, values: Values,
                   start_key: Item | None, limit: int, projection: Projection | str | None,
                   names: Names) -> tuple[list[Item], Item | None]:
        request = _expression({"TableName": self.name, "ConsistentRead": True, "Limit": limit},
                              None, names, values, filter=filter, projection=projection)
        if start_key:
            request["ExclusiveStartKey"] = serialize(start_key)
        response = self.store.call("scan", **request)
        found = [item for i in response.get("Items", []) if (item := deserialize(i)) is not None]
        return found, deserialize(response.get("LastEvaluatedKey"))

    def batch_put(self, items: list[Item], *, max_attempts: int = 12) -> None:
        """Write items 25 at a time, retrying unprocessed items with backoff."""
        for start in range(0, len(items), 25):
            pending = [{"PutRequest": {"Item": serialize(i)}} for i in items[start:start + 25]]
            self._batch_write(pending, max_attempts)

    def batch_delete(self, keys: list[Item], *, max_attempts: int = 12) -> None:
        for start in range(0, len(keys), 25):
            pending = [{"DeleteRequest": {"Key": serialize(k)}} for k in keys[start:start + 25]]
            self._batch_write(pending, max_attempts)

    def batch_get(self, keys: list[Item], *, projection: Projection | str | None = None,
                  names: Names = None) -> list[Item | None]:
        """Read items by key consistently, 100 keys per BatchGetItem; None where absent."""
        results: list[Item | None] = []
        for start in range(0, len(keys), 100):
            chunk = keys[start:start + 100]
            wanted = _expression({"Keys": [serialize(k) for k in chunk], "ConsistentRead": True},
                                 None, names, None, projection=projection)
            found = self.store.batch_get_all({self.name: wanted}).get(self.name, [])
            results += [next((i for i in found if all(i.get(k) == v for k, v in key.items())),
                             None) for key in chunk]
        return results

    def delete_partition(self, hash_value: object, *, chunk: int = 100) -> None:
        """Delete every item under one partition key (keys only, read page by page)."""
        if self.spec.range_key is None:
            raise ValueError(f"{self.name} has one item per partition key")
        hash_name, range_name = self.spec.hash_key[0], self.spec.range_key[0]
        keys = []
        for item in self.query(key_condition=attr(hash_name).eq(hash_value),
                               projection=projection(hash_name, range_name)):
            keys.append(item)
            if len(keys) >= chunk:
                self.batch_delete(keys)
                keys = []
        if keys:
            self.batch_delete(keys)

    def _batch_write(self, pending: list[dict[str, Any]], max_attempts: int) -> None:
        for attempt in range(max_attempts):
            response = self.store.call("batch_write_item", RequestItems={self.name: pending})
            pending = response.get("UnprocessedItems", {}).get(self.name, [])
            if not pending:
                return
            time.sleep(random.uniform(0, min(1.0, 0.02 * 2**attempt)))
        raise Throttled("The store is too busy to finish this change. Try again.")

    def _pages(self, operation: str, request: dict[str, Any],
               page_size: int | None) -> Iterator[dict[str, Any]]:
        return self.store.pages(operation, request, page_size)

    def _paginate(self, operation: str, request: dict[str, Any],
                  page_size: int | None) -> Iterator[Item]:
        for page in self._pages(operation, request, page_size):
            for item in page.get("Items", []):
                if (found := deserialize(item)) is not None:
                    yield found
