"""The request-history table (execution history): one partition per request id, immutable rows.

Rows are keyed ``(request_id, seq)``. Attempt generation ``g`` writes its ``started`` row
at ``seq = 2g + 1`` and its outcome (``succeeded`` / ``failed``) at ``seq = 2g + 2``, so a
slow runner's late outcome never lands on a newer generation's key.

The ``started`` row is written with ``UpdateItem ... ADD atomic_counter :one`` and
``ReturnValues=ALL_NEW``: of any number of simultaneous starters exactly one reads back
``atomic_counter == 1``. Its other attributes are set with ``if_not_exists`` so a losing
starter changes nothing but the counter (the seed's single exception to immutability).

Every row carries ``ttl`` (epoch seconds). TTL deletion runs late, so callers treat a row
whose ``ttl`` has passed as absent; outcome writes may overwrite such a row.
"""
from collections.abc import Iterator
from decimal import Decimal


from booking.dynamo.access import ConditionFailed, Store, Unavailable
from booking.dynamo.expressions import Actions, attr
from booking.dynamo.tables import HISTORY

STARTED, SUCCEEDED, FAILED = "started", "succeeded", "failed"


def start_seq(generation: int) -> int:
    return 2 * generation + 1


def generation_of(seq: int) -> int:
    return (int(seq) - 1) // 2


class RequestHistory:
    """The request-history table of one store."""

    def __init__(self, store: Store):
        self.table = store.table(HISTORY)

    def start(self, request_id: str, generation: int, fields: dict, *, now: float, ttl: int) -> dict:
        """Add 1 to the generation's start-row counter; return the row as it now stands.

        ``fields`` (fingerprint, operation, content, the runner's id) are stored only by the
        first starter, so a runner whose update was resent recognises its own row.
        """
        attributes = {"exec_status": STARTED, "created_at": _seconds(now), "ttl": ttl,
                      **{k: v for k, v in fields.items() if v is not None}}
        actions = Actions().add("atomic_counter", 1)
        for name, value in attributes.items():
            actions = actions.set(name, attr(name).if_not_exists(value))
        row = self.table.update({"request_id": request_id, "seq": start_seq(generation)},
                                actions, return_values="ALL_NEW")
        if not row or "atomic_counter" not in row:
            # An update with ALL_NEW always returns the item; without it we cannot know
            # whether we are the first runner, so we must not run.
            raise Unavailable()
        return row


    def record(self, request_id: str, seq: int, status: str, fields: dict, *, now: float,
               ttl: int) -> bool:
        """Write an outcome row once; False if a live row already holds that key."""
        item = {"request_id": request_id, "seq": seq, "exec_status": status, "atomic_counter": 1,
                "created_at": _seconds(now), "ttl": ttl, **fields}
        try:
            self.table.put(item, condition=attr("seq").not_exists() | attr("ttl").le(int(now)))
        except ConditionFailed:
            return False
        return True


    def newest_first(self, request_id: str) -> Iterator[dict]:
        """The request's rows, newest first, read consistently page by page."""
        return self.table.query(key_condition=attr("request_id").eq(request_id),
                                forward=False, page_size=10)


    def failed_page(self, *, since: float, until: float, start_key: dict | None = None,
                    limit: int = 100) -> tuple[list[dict], dict | None]:
        """One scan page of ``failed`` rows created in [since, until], and where to go on."""
        return self.table.filtered_scan_page(
            filter=attr("exec_status").eq(FAILED)
            & attr("created_at").between(_seconds(since), _seconds(until)),
            start_key=start_key, limit=limit)


def _seconds(epoch: float) -> Decimal:
    return Decimal(f"{epoch:.3f}")  # DynamoDB numbers: boto3 takes Decimal, not float
