"""TransactWriteItems in time proportional to the items it touches, not the tables.

moto makes a transaction all-or-nothing by deep-copying every table it touches before
applying it, and putting the copies back if any condition fails. Under our one-request-
at-a-time server that copy stalls every client, and it grows with the table: a booking
against a table of 10,000 slots took about half a second. Since nothing else runs during a
request, saving only the items the transaction names and restoring those on failure gives
the same all-or-nothing result.

``install()`` swaps moto's per-table copy for this (in the server process only; in-process
moto in unit tests is unchanged). It keeps moto's own validation, condition evaluation and
cancellation reasons.
"""
import copy

from moto.dynamodb import models as dynamodb_models
from moto.dynamodb.models.dynamo_type import DynamoType
from moto.dynamodb.models.table import Table


class _CopyExceptTables:
    """Stands in for the ``copy`` module inside moto's backend: tables are not copied."""

    @staticmethod
    def deepcopy(value, *args, **kwargs):
        return value if isinstance(value, Table) else copy.deepcopy(value, *args, **kwargs)


def install() -> None:
    """Make moto's TransactWriteItems save and restore only the items it touches."""
    backend = dynamodb_models.DynamoDBBackend
    if getattr(backend, "_saves_touched_items_only", False):
        return
    moto_transact = backend.transact_write_items

    def transact_write_items(self, transact_items):
        saved = _save_touched(self, transact_items)
        try:
            return moto_transact(self, transact_items)
        except Exception:
            _restore(saved)
            raise

    dynamodb_models.copy = _CopyExceptTables
    backend.transact_write_items = transact_write_items
    backend._saves_touched_items_only = True


def _save_touched(backend, transact_items) -> list:
    saved = []
    for entry in transact_items:
        for operation in entry.values():
            table = backend.tables.get(operation.get("TableName"))
            location = _location(table, operation)
            if location is None:
                continue  # moto reports the bad request itself
            item = table.get_item(*location)
            saved.append((table, location, copy.deepcopy(item)))
    return saved


def _location(table, operation):
    if table is None:
        return None
    attributes = operation.get("Key") or operation.get("Item") or {}
    try:
        hash_value = DynamoType(attributes[table.hash_key_attr])
        range_value = DynamoType(attributes[table.range_key_attr]) if table.has_range_key else None
    except KeyError:
        return None
    return hash_value, range_value


def _restore(saved) -> None:
    for table, (hash_value, range_value), item in reversed(saved):
        if range_value is not None:
            if item is None:
                table.items[hash_value].pop(range_value, None)
            else:
                table.items[hash_value][range_value] = item
        elif item is None:
            table.items.pop(hash_value, None)
        else:
            table.items[hash_value] = item
