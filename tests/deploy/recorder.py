"""Record which DynamoDB operations a store's client sends to which table (and index).

``OperationRecorder(store)`` registers on the client's ``provide-client-params`` event, so
it sees each call's parameters as the access layer built them, before botocore sends
anything (retries are not counted twice). It keeps the names of
``booking/dynamo/permissions.py``: the API operation, and for ``TransactWriteItems`` the
kind of each item (``TransactWriteItems.Put``), because IAM authorizes each item of a
transaction by its own action.
"""
from contextlib import contextmanager


class OperationRecorder:
    def __init__(self, store):
        self.store = store
        self.seen: set[tuple[str, str | None, str]] = set()  # (suffix, index, operation)
        self._paused = False

    def _suffix(self, name: str) -> str | None:
        prefix = self.store.table_prefix
        return name[len(prefix):] if name.startswith(prefix) else None

    def _note(self, name, index, operation):
        if self._paused:
            return
        suffix = self._suffix(name)
        if suffix is not None:
            self.seen.add((suffix, index, operation))

    def _record(self, params=None, model=None, **kwargs):
        operation = model.name
        if operation == "TransactWriteItems":
            for item in params.get("TransactItems", []):
                for kind, body in item.items():
                    self._note(body["TableName"], None, f"TransactWriteItems.{kind}")
        elif operation == "TransactGetItems":  # IAM authorizes each item as a GetItem
            for item in params.get("TransactItems", []):
                self._note(item["Get"]["TableName"], None, "GetItem")
        elif operation in ("BatchGetItem", "BatchWriteItem"):
            for name in params.get("RequestItems", {}):
                self._note(name, None, operation)
        elif "TableName" in params:
            self._note(params["TableName"], params.get("IndexName"), operation)

    @contextmanager
    def recording(self):
        events = self.store.client.meta.events
        unique = f"operation-recorder-{id(self)}"
        events.register("provide-client-params.dynamodb", self._record, unique_id=unique)
        try:
            yield self
        finally:
            events.unregister("provide-client-params.dynamodb", unique_id=unique)

    @contextmanager
    def paused(self):
        self._paused = True
        try:
            yield
        finally:
            self._paused = False

    def by_table(self) -> dict:
        result: dict = {}
        for suffix, index, operation in self.seen:
            result.setdefault((suffix, index), set()).add(operation)
        return result
