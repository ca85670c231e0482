"""Controls for the door's race tests: scanners that decide from a read, then write.

``ReadThenWriteDoor`` decides an entry as a careless scanner does: it reads the pass on
the list (and the room's counter), and when the read says "not admitted (or out again on a
re-entry list), room left" it
waits ``race_delay_ms`` and writes the entry without the pass's or the room's condition.
Two gates scanning one pass at once both read "not admitted" and both admit; forty
entries into a room of ten all read "room left". The race tests must catch it. Only lists
whose name starts with ``CARELESS`` are scanned carelessly, so one served site answers
both sides of a race (the product's door for every other list).
"""
import re
import time

from booking.checkin.door import Door, count_key, count_shard, pass_key
from booking.dynamo import expressions as transaction
from booking.dynamo.expressions import Member, Members

CARELESS = "careless"
_PLACEHOLDER = re.compile(r"[:#][A-Za-z0-9_]+")


def without_condition(op: Member) -> Member:
    """``op`` without its condition (a client's pair: and the names and values only it used)."""
    if not isinstance(op, tuple):
        return transaction.without_condition(op)
    kind, body = op
    body = {k: v for k, v in body.items() if k != "ConditionExpression"}
    used = set(_PLACEHOLDER.findall(body.get("UpdateExpression", "")))
    for field in ("ExpressionAttributeValues", "ExpressionAttributeNames"):
        if field in body:
            kept = {k: v for k, v in body[field].items() if k in used}
            if kept:
                body[field] = kept
            else:
                del body[field]
    return kind, body


class ReadThenWriteDoor(Door):
    def __init__(self, *args, race_delay_ms: float = 30.0, **kwargs):
        super().__init__(*args, **kwargs)
        self.race_delay = race_delay_ms / 1000.0

    def entry(self, lst, ref, when, gate, nonce, stamp, offline, *, again=False) -> Members:
        members = super().entry(lst, ref, when, gate, nonce, stamp, offline, again=again)
        if not lst.name.startswith(CARELESS):
            return members
        seen = self.table.get(pass_key(lst.id, ref.pass_id))
        full = (lst.occupancy_limit is not None
                and self.room_counter(lst.id) >= lst.occupancy_limit)
        admitted = seen is not None and (not lst.allow_reentry or seen.get("state") == "inside")
        if admitted or full:
            return members  # the read answers: the write refuses as the product's does
        time.sleep(self.race_delay)
        for name in ("pass", "room"):
            if name in members.names:
                members = members.replaced(name, without_condition(dict(members)[name]))
        return members


def careless_door(service, *, race_delay_ms: float = 30.0) -> ReadThenWriteDoor:
    """Put a read-then-write door in ``service`` (its store and signer); return it."""
    door = ReadThenWriteDoor(service.store, service.checkin.door.signer,
                             race_delay_ms=race_delay_ms)
    service.checkin.door = door
    return door


class UnconditionalPassCancellation:
    """A cancellation's passes rider that marks the passes it chose cancelled without the
    condition that none was admitted meanwhile: a scan and the cancellation both win."""

    def __init__(self, rider):
        self.rider = rider

    def members(self, answer, *, notice: bool = True):
        return [(name, without_condition(op))
                for name, op in self.rider.members(answer, notice=notice)]

    def answer(self, refusal):
        return self.rider.answer(refusal)


def careless_cancellations(service) -> None:
    """Cancellations in ``service`` carry the unconditional passes rider."""
    checkin = service.checkin
    service.bookings.cancel_riders = lambda event_id, request_id, whole, seats=None: (
        UnconditionalPassCancellation(checkin.cancellation_rider(event_id, request_id, whole,
                                                                 seats)),)


class ReadThenCountDoor(Door):
    """A door that counts as a careless one does: it reads the counter item, waits
    ``race_delay_ms``, and SETs read + delta (no condition) in the scan's write. Scans at
    the same instant all read one value: the counts lose scans, which the count race
    must catch. Only lists whose name starts with ``CARELESS``."""

    def __init__(self, *args, race_delay_ms: float = 30.0, **kwargs):
        super().__init__(*args, **kwargs)
        self.race_delay = race_delay_ms / 1000.0

    def count_op(self, lst, nonce, **deltas):
        if not lst.name.startswith(CARELESS):
            return super().count_op(lst, nonce, **deltas)
        key = count_key(lst.id, count_shard(nonce))
        seen = self.table.get(key) or {}
        time.sleep(self.race_delay)
        names = sorted(deltas)
        return ("Update", self.table.update_op(
            key, "SET " + ", ".join(f"{name} = :{name}" for name in names),
            values={f":{name}": int(seen.get(name, 0)) + deltas[name] for name in names}))


def careless_counts(service, *, race_delay_ms: float = 30.0) -> ReadThenCountDoor:
    """Put a read-then-count door in ``service``; return it."""
    door = ReadThenCountDoor(service.store, service.checkin.door.signer,
                             race_delay_ms=race_delay_ms)
    service.checkin.door = door
    return door
