"""Read a table's DynamoDB Stream: its shards (parents before children) and their records.

The low-level ``dynamodbstreams`` client (DescribeStream, GetShardIterator, GetRecords).
A shard is read from just after a checkpointed sequence number, or from its oldest record
(TRIM_HORIZON) when there is none. A shard that has split or closed hands over to its
children, which may only be read once the parent is read to its end, or is no longer in
the stream (trimmed after 24 hours): per-partition order holds across the lineage.
"""
from typing import Any
from dataclasses import dataclass

from botocore.exceptions import BotoCoreError, ClientError

from booking.dynamo.access import Store, translate
from booking.dynamo.tables import TableSpec

# Iterators are valid 15 minutes and a trimmed position cannot be read: start again.
RESTART_CODES = {"ExpiredIteratorException", "TrimmedDataAccessException"}


@dataclass(frozen=True)
class Shard:
    shard_id: str
    parent_id: str | None
    closed: bool  # an ending sequence number: no record is ever added


class IteratorLost(Exception):
    """The shard iterator expired or points at trimmed data: get a new one."""


def lineage_order(found: list[Shard]) -> list[Shard]:
    """Parents before children (a parent trimmed from the stream counts as read)."""
    known = {s.shard_id for s in found}
    ordered, placed = [], set()
    remaining = list(found)
    while remaining:
        ready = [s for s in remaining if s.parent_id in placed or s.parent_id not in known]
        for shard in ready:
            ordered.append(shard)
            placed.add(shard.shard_id)
        remaining = [s for s in remaining if s.shard_id not in placed]
        if not ready:  # a cycle cannot happen in DynamoDB; never loop forever on one
            return ordered + remaining
    return ordered


class StreamReader:
    """The streams of one store's tables (its ``streams_client``)."""

    def __init__(self, store: Store):
        self.store = store

    def _streams(self, operation: str, **request: Any) -> Any:
        try:
            return getattr(self.store.streams_client, operation)(**request)
        except ClientError as exc:
            if exc.response.get("Error", {}).get("Code") in RESTART_CODES:
                raise IteratorLost() from exc
            raise translate(exc) from exc
        except BotoCoreError as exc:
            raise translate(exc) from exc


    def stream_arn(self, spec: TableSpec) -> str:
        """The ARN of the table's current stream."""
        return self.store.call("describe_table",
                               TableName=self.store.name(spec))["Table"]["LatestStreamArn"]


    def shards(self, arn: str) -> list[Shard]:
        """Every shard of the stream, page by page, parents ahead of their children."""
        found, start = [], None
        while True:
            request = {"StreamArn": arn, **({"ExclusiveStartShardId": start} if start else {})}
            description = self._streams("describe_stream", **request)["StreamDescription"]
            for shard in description.get("Shards", []):
                ending = shard.get("SequenceNumberRange", {}).get("EndingSequenceNumber")
                found.append(Shard(shard["ShardId"], shard.get("ParentShardId"), bool(ending)))
            start = description.get("LastEvaluatedShardId")
            if not start:
                return lineage_order(found)


    def iterator(self, arn: str, shard_id: str, after: str | None) -> str | None:
        """A shard iterator just after sequence number ``after`` (None: the oldest record)."""
        request = {"StreamArn": arn, "ShardId": shard_id}
        if after:
            request.update(ShardIteratorType="AFTER_SEQUENCE_NUMBER", SequenceNumber=after)
        else:
            request["ShardIteratorType"] = "TRIM_HORIZON"
        return self._streams("get_shard_iterator", **request).get("ShardIterator")


    def records(self, shard_iterator: str, *, limit: int = 100) -> tuple[list[dict], str | None]:
        """One page of records and the iterator to continue with (None: the shard is closed
        and read to its end)."""
        page = self._streams("get_records", ShardIterator=shard_iterator, Limit=limit)
        return page.get("Records", []), page.get("NextShardIterator")
