"""One DynamoDB table under this deployment's prefix: a method per operation, plain Python
values in and out (``store.table(SPEC)`` hands them out)."""
import random
import time

from booking.dynamo.codec import deserialize, serialize
from booking.dynamo.errors import Throttled
from booking.dynamo.tables import TableSpec


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

    def __init__(self, spec: TableSpec, store):
        """``store``: the Store whose client and prefix it uses."""
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
              projection: str | None = None, page_size: int | None = None,
              filter: str | None = None):
        """Yield items one page at a time from boto3's paginator (never the whole result);
        ``filter`` drops items from the answer (DynamoDB still charges for reading them)."""
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
        if filter:
            request["FilterExpression"] = filter
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
