"""Query on a table's own key in time proportional to the partition, not the table.

moto answers a base-table Query by sorting every item of the table and keeping the
partition's. The request history grows by two rows per booking, so every repeated request
(whose history is read with a Query) got slower with every booking ever served: after
20,000 bookings the embedded server spent a third of its time sorting.

``install()`` (server process only, like ``transactions.install``) makes such a query look
at its own partition alone; moto's filtering, sorting, paging and projections stay as they
are, and index queries are unchanged.
"""
import threading

from moto.dynamodb.models.table import Table

_partition = threading.local()
INDEX_NAME_POSITION = 6  # after hash_key: range_comparison ... projection_expressions


def install() -> None:
    """Make base-table queries read only the queried partition."""
    if getattr(Table, "_queries_one_partition", False):
        return
    moto_query, moto_all_items = Table.query, Table.all_items

    def query(self, hash_key, *args, **kwargs):
        index_name = (args[INDEX_NAME_POSITION] if len(args) > INDEX_NAME_POSITION
                      else kwargs.get("index_name"))
        if index_name or hash_key is None:
            return moto_query(self, hash_key, *args, **kwargs)
        _partition.key = hash_key
        try:
            return moto_query(self, hash_key, *args, **kwargs)
        finally:
            _partition.key = None

    def all_items(self):
        key = getattr(_partition, "key", None)
        if key is None:
            return moto_all_items(self)
        found = self.items.get(key)
        if found is None:
            return []
        return list(found.values()) if self.range_key_attr else [found]

    Table.query, Table.all_items = query, all_items
    Table._queries_one_partition = True
