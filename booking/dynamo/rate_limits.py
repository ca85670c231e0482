"""Rate-limit counters: one item per bucket and fixed time window (seed 000's atomic
counter, applied to requests). ``hit`` is one UpdateItem (`ADD hits :one`), atomic across
processes and hosts; ``hits`` is one consistent GetItem. The window start is part of the
key, so a past window never counts again; its ``ttl`` lets DynamoDB delete it later
(clean-up only: TTL deletion runs late)."""
from booking.dynamo.access import Store
from booking.dynamo.tables import RATE_LIMITS

TTL_GRACE_SECONDS = 3600


def _key(bucket: str, window_start: int) -> dict:
    return {"bucket": f"{bucket}#{window_start}"}


class RateCounters:
    """The rate-limit counters table of one store."""

    def __init__(self, store: Store):
        self.table = store.table(RATE_LIMITS)

    def hit(self, bucket: str, *, window_start: int, window_seconds: int) -> int:
        """Count one request in the bucket's window; return the window's count including it."""
        attributes = self.table.update(
            _key(bucket, window_start), "ADD hits :one SET #ttl = if_not_exists(#ttl, :ttl)",
            names={"#ttl": "ttl"},
            values={":one": 1, ":ttl": window_start + window_seconds + TTL_GRACE_SECONDS},
            return_values="UPDATED_NEW")
        return int(attributes["hits"])


    def hits(self, bucket: str, *, window_start: int) -> int:
        """The window's count so far (0 if nothing was counted)."""
        item = self.table.get(_key(bucket, window_start))
        return int(item["hits"]) if item else 0
