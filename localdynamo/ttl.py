"""Time to live: delete expired items late, as DynamoDB does (moto never deletes them).

An item in a table with TTL enabled is deleted once ``now > ttl + delay``, where ``ttl`` is
its TTL attribute in epoch seconds. Like DynamoDB, items whose TTL attribute is not a
number, or lies more than five years in the past, are never deleted. The deletes are
ordinary conditional DeleteItem calls that go through the server's serialized, logged
path, so a restart replays them like any client's delete.
"""
import json
import logging
import threading
import time

from moto.dynamodb.models import dynamodb_backends

from .wire import Call

logger = logging.getLogger(__name__)
FIVE_YEARS = 5 * 365 * 24 * 3600
DEFAULT_DELAY_SECONDS = 300.0


def sweep_period(delay: float) -> float:
    """How often to look: an item goes between ``delay`` and about ``1.1 x delay`` late."""
    return min(max(delay / 10, 0.2), 30.0)


def expired_deletes(now: float, delay: float) -> list[Call]:
    """A conditional DeleteItem call for every item that is due for deletion now."""
    calls = []
    for account, region, backend in dynamodb_backends.iter_backends():
        for table in backend.tables.values():
            if table.ttl.get("TimeToLiveStatus") != "ENABLED":
                continue
            attribute = table.ttl["AttributeName"]
            for item in _items(table):
                expires = _epoch(item.attrs.get(attribute))
                if expires is not None and now - FIVE_YEARS < expires < now - delay:
                    body = _delete_body(table, item, attribute)
                    calls.append(Call("DeleteItem", body, region, account, now))
    return calls


def _items(table):
    for stored in list(table.items.values()):
        if table.range_key_attr:
            yield from list(stored.values())
        else:
            yield stored


def _epoch(value) -> float | None:
    if value is None or value.type != "N":
        return None
    try:
        return float(value.value)
    except (TypeError, ValueError):
        return None


def _delete_body(table, item, attribute: str) -> bytes:
    key = {table.hash_key_attr: item.attrs[table.hash_key_attr].to_json()}
    if table.range_key_attr:
        key[table.range_key_attr] = item.attrs[table.range_key_attr].to_json()
    # The condition keeps the delete exact if the item was renewed in the meantime.
    return json.dumps({
        "TableName": table.name,
        "Key": key,
        "ConditionExpression": "#ttl = :ttl",
        "ExpressionAttributeNames": {"#ttl": attribute},
        "ExpressionAttributeValues": {":ttl": item.attrs[attribute].to_json()},
    }).encode()


class TtlSweeper:
    """A daemon thread that asks the server to sweep every ``sweep_period(delay)``."""

    def __init__(self, sweep, delay: float):
        self.sweep, self.delay = sweep, delay
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, name="ttl-sweeper", daemon=True)

    def start(self) -> None:
        self._thread.start()

    def stop(self) -> None:
        self._stop.set()

    def _run(self) -> None:
        while not self._stop.wait(sweep_period(self.delay)):
            try:
                self.sweep(time.time())
            except Exception:  # a bad item must not end TTL for good
                logger.exception("TTL sweep failed")
