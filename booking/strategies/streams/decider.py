"""The stream decider: reads the registrations' stream in order, shard by shard, from
per-shard checkpoints, and decides each pending registration (``decide_all``). A record
read twice is decided once: each decision is conditional on still being pending. Runs in
``manage.py booking_worker`` or as a Lambda (docs/streams.md#running-the-decider).
"""
from __future__ import annotations

import logging
import threading
import time
import uuid
from collections import Counter
from collections.abc import Callable
from typing import TYPE_CHECKING

from booking.dynamo import items, streams
from booking.dynamo.access import deserialize
from booking.dynamo.tables import STREAM_REGISTRATIONS
from booking.strategies.streams.checkpoints import Checkpoints
from booking.models import CONFIRMED, PENDING, REJECTED, Registration

if TYPE_CHECKING:  # the strategy imports its package, which this module is part of
    from booking.strategies.streams import StreamsStrategy

logger = logging.getLogger(__name__)
HEARTBEAT_EVERY = 1.0  # seconds between heartbeat writes
FAILED_PASS_PAUSE = 1.0  # seconds before a pass that failed is tried again
PAGE_SIZE = 100  # stream records a page: after a sell-out, one read serves its rejections


def registration_of(record: dict) -> Registration | None:
    """The pending registration a stream record carries, or None (decisions; a delete's
    record has no new image)."""
    image = deserialize(record.get("dynamodb", {}).get("NewImage")) or {}
    return items.registration_from_item(image) if image.get("status") == PENDING else None


class StreamDecider:
    """Decides the stream's pending registrations with ``strategy``; ``on_decided(outcome,
    registration)`` runs after each decision it made (the worker sends its e-mail)."""

    def __init__(self, strategy: StreamsStrategy, *,
                 on_decided: Callable[[str, Registration], object] | None = None) -> None:
        self.strategy = strategy
        self.checkpoints = Checkpoints(strategy.store)
        self.streams = streams.StreamReader(strategy.store)
        self.on_decided = on_decided
        self.decider_id = uuid.uuid4().hex[:12]
        self._arn = ""  # the stream's, once a registration exists
        self._iterators: dict[str, str] = {}
        self._beaten = 0.0
        self.decided_total = 0

    def decide_records(self, records: list[dict]) -> Counter:
        """Decide the pending registrations among ``records``, in order (one call, one
        page: after a sell-out, one consistent read of the event serves its rejections)."""
        outcomes: Counter = Counter()
        pending = [r for r in map(registration_of, records) if r is not None]
        for registration, outcome in self.strategy.decide_all(pending):
            outcomes[outcome] += 1
            if self.on_decided is not None and outcome in (CONFIRMED, REJECTED):
                self.on_decided(outcome, registration)
        self.decided_total += outcomes[CONFIRMED] + outcomes[REJECTED]
        return outcomes

    def run_pass(self, *, stop: threading.Event | None = None) -> tuple[Counter, bool]:
        """Read every shard from its checkpoint to its current end (or until ``stop`` is set,
        between pages): the outcomes, and whether every shard was read to its end."""
        outcomes: Counter = Counter()
        caught_up, finished = True, set()
        if not self._arn:
            if not self.strategy.registrations_table.scan_page(limit=1)[0]:
                # No registration stored, so nothing to decide (and no stream to open yet).
                self._beat(True)
                return outcomes, True
            self._arn = self.streams.stream_arn(STREAM_REGISTRATIONS)
        known = self.streams.shards(self._arn)
        ids = {s.shard_id for s in known}
        for shard in known:
            row = self.checkpoints.get(shard.shard_id)
            if row.get("finished"):
                finished.add(shard.shard_id)
            elif shard.parent_id in ids and shard.parent_id not in finished:
                caught_up = False  # its parent is not read to its end yet
            elif self._read_shard(shard, row, outcomes, stop):
                finished.add(shard.shard_id)
        self._beat(caught_up)
        return outcomes, caught_up

    def _read_shard(self, shard: streams.Shard, row: dict, outcomes: Counter,
                    stop: threading.Event | None) -> bool:
        """Decide the shard's records up to its current end; True once it is closed and
        read completely."""
        position = self._iterators.pop(shard.shard_id, None)
        for _ in range(2):  # a lost iterator is taken again from the checkpoint once
            try:
                position = position or self.streams.iterator(
                    self._arn, shard.shard_id, row.get("sequence_number"))
                while position:
                    records, next_position = self.streams.records(position, limit=PAGE_SIZE)
                    outcomes.update(self.decide_records(records))
                    if records:
                        self.checkpoints.advance(shard.shard_id,
                                                 records[-1]["dynamodb"]["SequenceNumber"])
                    position = next_position
                    if not records or (stop is not None and stop.is_set()):
                        break
                break
            except streams.IteratorLost:
                position, row = None, self.checkpoints.get(shard.shard_id)
        if position is None and shard.closed:
            self.checkpoints.finish(shard.shard_id)
            return True
        if position:
            self._iterators[shard.shard_id] = position
        return False

    def _beat(self, caught_up: bool) -> None:
        now = time.time()
        if now - self._beaten >= HEARTBEAT_EVERY or not caught_up:
            self.checkpoints.beat(self.decider_id, caught_up=caught_up,
                                  decided=self.decided_total, now=now)
            self._beaten = now

    def run(self, stop: threading.Event, *, interval: float = 0.2,
            report: Callable[[Counter, bool], object] | None = None) -> None:
        """Pass after pass until ``stop`` is set; ``report(outcomes, caught_up)`` after
        each pass that decided something. A failing pass is logged and tried again."""
        while not stop.is_set():
            try:
                outcomes, caught_up = self.run_pass(stop=stop)
            except Exception:  # noqa: BLE001 - the store may be briefly away; resume
                logger.exception("Decider pass failed; resuming from the checkpoints")
                stop.wait(max(interval, FAILED_PASS_PAUSE))
                continue
            if outcomes and report is not None:
                report(outcomes, caught_up)
            if caught_up:
                stop.wait(interval)
