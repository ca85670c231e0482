"""Rate-limit counters: one item per bucket and fixed time window (an atomic
counter, applied to requests). Every count is one UpdateItem, atomic across processes and
hosts, that decides and counts in the same write (never a read, then a write):

- ``hit``: ``ADD hits :one``; the caller compares the count it returns with its limit.
- ``hit_once``: counts a submission (e.g. one signed form token) only the first time and
  only while the window has room; a replay of a counted submission passes uncounted.
- ``hit_all``: several counters of one client, kept in one item, counted together for a
  submission in one conditional UpdateItem (each below its own limit), once per
  submission: a signup's network and e-mail-address limits cost one write.
- ``reserve`` / ``release``: take one of the window's places before work that must be
  bounded (an admin password check), and give it back when it should not count.

The window start is part of the key, so a past window never counts again; its ``ttl``
lets DynamoDB delete it later (clean-up only: TTL deletion runs late)."""
import time
from decimal import Decimal

from booking.dynamo.access import ConditionFailed, Store, Table
from booking.dynamo.expressions import Actions, Condition, Path, all_of, attr
from booking.dynamo.tables import RATE_LIMITS

TTL_GRACE_SECONDS = 3600
HITS, SEEN = attr("hits"), attr("seen")
# ``hit_all``'s record of when a submission was counted: this prefix and its mark.
ASKED = "at_"


def _key(bucket: str, window_start: int) -> dict[str, str]:
    return {"bucket": f"{bucket}#{window_start}"}


def _counted(window_start: int, window_seconds: int) -> Actions:
    """One more hit, and the window's clean-up time set by its first hit."""
    ttl = window_start + window_seconds + TTL_GRACE_SECONDS
    return Actions().add(HITS, 1).set("ttl", attr("ttl").if_not_exists(ttl))


def _room(counter: Path, limit: int) -> Condition:
    return counter.not_exists() | counter.lt(limit)


class RateCounters:
    """The rate-limit counters table of one store."""

    def __init__(self, store: Store):
        self.table = store.table(RATE_LIMITS)

    def hit(self, bucket: str, *, window_start: int, window_seconds: int) -> int:
        """Count one request in the bucket's window; return the window's count including it."""
        attributes = self.table.update(_key(bucket, window_start),
                                       _counted(window_start, window_seconds),
                                       return_values="UPDATED_NEW")
        return int((attributes or {})["hits"])

    def hit_once(self, bucket: str, *, window_start: int, window_seconds: int, once: str,
                 limit: int) -> bool:
        """Count the submission ``once`` unless it was counted already, while the window
        has fewer than ``limit``: True if it is counted (now or before), False if the
        window is full. One conditional UpdateItem; the set of counted submissions never
        holds more than ``limit``."""
        try:
            self.table.update(_key(bucket, window_start),
                              _counted(window_start, window_seconds).add(SEEN, {once}),
                              condition=~SEEN.contains(once) & _room(HITS, limit))
        except ConditionFailed as refused:
            return once in (refused.old_item or {}).get("seen", set())
        return True

    def hit_all(self, bucket: str, *, window_start: int, window_seconds: int, once: str,
                counters: dict[str, int], unless: tuple[str, ...] = (),
                now: float | None = None) -> tuple[str, str | None]:
        """Count the submission ``once`` in every counter of ``counters`` (attribute name ->
        limit) of the bucket's item, in one conditional UpdateItem that holds only while
        each counter is below its limit and neither ``once`` nor any mark of ``unless`` was
        counted; the same write records when ``once`` was counted (``now``: ``asked_at``).
        Answers ``("counted", None)`` (now), ``("again", None)`` (``once`` was counted
        before: nothing counted), ``("full", counter)`` (nothing counted) or ``("seen",
        mark)``: a mark of ``unless`` was counted (nothing counted now; the caller counts
        what that mark did not). ``window_start``/``window_seconds`` are the item's (the
        longest counter's); a counter with a shorter window carries its window in its
        name."""
        asked_at = Decimal(str(round(time.time() if now is None else now, 3)))
        ttl = window_start + window_seconds + TTL_GRACE_SECONDS
        actions = Actions().add(SEEN, {once})
        rooms = [~SEEN.contains(once), *(~SEEN.contains(mark) for mark in unless)]
        for counter, limit in counters.items():
            actions = actions.add(counter, 1)
            rooms.append(_room(attr(counter), limit))
        actions = actions.set("ttl", attr("ttl").if_not_exists(ttl)).set(ASKED + once, asked_at)
        try:
            self.table.update(_key(bucket, window_start), actions, condition=all_of(rooms))
        except ConditionFailed as refused:
            old = refused.old_item or {}
            seen = old.get("seen", set())
            if once in seen:
                return "again", None
            mark = next((m for m in unless if m in seen), None)
            if mark is not None:
                return "seen", mark
            return "full", next((c for c, limit in counters.items()
                                 if int(old.get(c, 0)) >= limit), next(iter(counters)))
        return "counted", None

    def asked(self, bucket: str, *, window_starts: list[int], once: str) -> tuple[bool, float | None]:
        """Whether ``hit_all`` counted the submission ``once`` in any of the bucket's
        windows ``window_starts`` (one consistent BatchGetItem), and when it was first
        counted (None: not recorded)."""
        return self.asked_in(self.table.store.batch_get(self.asked_keys(bucket, window_starts)),
                             once=once)

    def asked_keys(self, bucket: str, window_starts: list[int]) -> list[tuple[Table, dict]]:
        """The items ``asked`` reads, to read them in another batch (``asked_in``)."""
        return [(self.table, _key(bucket, start)) for start in window_starts]

    def asked_in(self, found: list[dict | None], *, once: str) -> tuple[bool, float | None]:
        """``asked``'s answer from the items of ``asked_keys`` read elsewhere."""
        times = [float(item[ASKED + once]) if ASKED + once in item else None
                 for item in found if item and once in item.get("seen", set())]
        if not times:
            return False, None
        known = [at for at in times if at is not None]
        return True, min(known) if known else None

    def reserve(self, bucket: str, *, window_start: int, window_seconds: int,
                limit: int) -> bool:
        """Take one of the window's ``limit`` places; False (nothing taken) once all are."""
        try:
            self.table.update(_key(bucket, window_start), _counted(window_start, window_seconds),
                              condition=_room(HITS, limit))
        except ConditionFailed:
            return False
        return True

    def release(self, bucket: str, *, window_start: int) -> None:
        """Give back a place ``reserve`` took (the window's count goes down by one)."""
        try:
            self.table.update(_key(bucket, window_start), Actions().add(HITS, -1),
                              condition=HITS.gt(0))
        except ConditionFailed:
            pass  # nothing left to give back

    def hits(self, bucket: str, *, window_start: int) -> int:
        """The window's count so far (0 if nothing was counted)."""
        item = self.table.get(_key(bucket, window_start))
        return int(item["hits"]) if item else 0
