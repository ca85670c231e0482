"""The door: check-in lists and scans in DynamoDB, each scan decided by one write.

A scan that changes anything is one TransactWriteItems of named members:

- ``pass``: the pass on this list (``list#<id>``, ``pass#<pass id>``). An entry sets it
  inside on condition it was never admitted here (or, on a list that allows re-entry, it
  is out); an exit sets it out on condition it is inside.
- ``order``: the order's door item. An entry adds the seat to ``admitted`` on condition
  the order is not cancelled and the seat is not in ``cancelled``: a cancellation
  (``PassCancellation``) conditions the other way, so one of the two wins.
- ``room``: on a list with an occupancy limit, the list's ``inside`` counter, added to on
  condition ``inside < limit`` (an exit takes one off).
- ``scan``: the scan's row, keyed by its nonce, on condition it does not exist: a scan
  sent again (a lost answer) is refused by its own row and answers what that row says,
  without a second effect. A refused scan writes its row alone (the log, and the answer
  to a repeat).
- ``count``: the list's counts, on one of its ``COUNT_SHARDS`` counter items picked by
  the nonce's hash: an unconditional ``ADD admitted, inside, conflicts``, so it never
  refuses a scan, and inside the scan's own write, so a repeat (refused by its row)
  counts nothing again. A list's counts are these few items summed: no read per
  attendee. A first entry adds ``admitted`` and ``inside``; a re-entry ``inside`` only
  (its write is conditioned on the pass being out, the first entry's on no pass item).

An offline scanner's queue (``scan_batch``) is decided scan by scan in the order the
scans were made; an offline entry of a pass admitted already is recorded as a conflict
(both admissions) in the same write as its row.
"""
import hashlib
from collections.abc import Callable
import random
import time
import uuid
from collections.abc import Iterable
from typing import Any
from datetime import datetime
from decimal import Decimal

from booking.checkin.passes import PassRef, PassSigner, pass_id, seat_layout
from booking.checkin.records import (ADMITTED, ALREADY_ADMITTED, CANCELLED, ENTRY, EXIT,
                                     EXITED, MESSAGES, NOT_INSIDE, NOT_ON_LIST, NOT_OPEN,
                                     ROOM_FULL, UNKNOWN_CODE, CheckinList, Conflict,
                                     ScanResult, at)
from booking.dynamo.access import ConditionFailed, Store, TransactionCancelled, TransactionConflict
from booking.dynamo.tables import CHECKINS
from booking.dynamo.expressions import Actions, Condition, attr
from booking.dynamo.expressions import Members, Put, Refusal, Update

LIST_SK = "#list"  # a stored value, not an expression
ORDER_SK = "#door"  # a stored value, not an expression
COUNT_SK = "#count."  # a stored value, not an expression: the counters' sort keys
ATTEMPTS = 30  # writes cancelled by another transaction on the same items, tried again

COUNT_SHARDS = 4  # counter items per list (a busy door's scans do not meet on one item)
NEW = attr("pk").not_exists()
EXISTS = attr("pk").exists()
STATE, INSIDE = attr("state"), attr("inside")


def not_cancelled(seat: str) -> Condition:
    """The order's passes were not all cancelled, nor seat ``seat``'s."""
    return attr("cancelled_all").not_exists() & ~attr("cancelled").contains(seat)


def _under(pk: str, prefix: str) -> Condition:
    """The items of partition ``pk`` whose sort key starts with ``prefix``."""
    return attr("pk").eq(pk) & attr("sk").begins_with(prefix)


def list_key(list_id: str) -> dict:
    return {"pk": f"list#{list_id}", "sk": LIST_SK}


def order_key(registration_id: str) -> dict:
    return {"pk": f"order#{registration_id}", "sk": ORDER_SK}


def pass_key(list_id: str, pass_id_: str) -> dict:
    return {"pk": f"list#{list_id}", "sk": f"pass#{pass_id_}"}


def scan_key(list_id: str, nonce: str) -> dict:
    return {"pk": f"list#{list_id}", "sk": f"scan#{nonce}"}


def count_key(list_id: str, shard: int) -> dict:
    return {"pk": f"list#{list_id}", "sk": f"{COUNT_SK}{shard}"}


def count_shard(nonce: str) -> int:
    """The counter item a scan adds to: spread like a random pick, the same for every
    attempt of one scan."""
    return int.from_bytes(hashlib.sha256(nonce.encode()).digest()[:4], "big") % COUNT_SHARDS


def fingerprint(code: str, direction: str) -> str:
    return hashlib.sha256(f"{direction}\n{code}".encode("utf-8")).hexdigest()[:32]


class ListKeyReused(Exception):
    """A list's request id already created a list with other settings."""


class NonceReused(Exception):
    """A nonce already names a scan of another code or direction."""


class Door:
    """Lists and scans on the ``checkins`` table."""

    def __init__(self, store: Store, signer: PassSigner, *,
                 clock: Callable[[], float] = time.time) -> None:
        self.store = store
        self.table = store.table(CHECKINS)
        self.signer = signer
        self.clock = clock

    # --- lists ---------------------------------------------------------------------
    def create_list(self, event_id: str, *, name: str, ticket_types: tuple[str, ...] | None,
                    allow_reentry: bool, occupancy_limit: int | None,
                    opens_at: datetime | None, closes_at: datetime | None,
                    request_id: str | None = None, fingerprint: str = "") -> CheckinList:
        """A new list; with ``request_id`` its id is derived from it, and a repeat answers
        the list it created (``ListKeyReused`` for a list of other settings)."""
        list_id = (hashlib.sha256(f"checkin-list\n{request_id}".encode()).hexdigest()[:32]
                   if request_id else uuid.uuid4().hex)
        now = num(self.clock())
        item = {**list_key(list_id), "list_id": list_id, "event_id": event_id, "name": name,
                "allow_reentry": allow_reentry, "created_at": now, "inside": 0,
                "fingerprint": fingerprint}
        if ticket_types is not None:
            item["ticket_types"] = list(ticket_types)
        if occupancy_limit is not None:
            item["occupancy_limit"] = occupancy_limit
        if opens_at is not None:
            item["opens_at"] = num(opens_at.timestamp())
        if closes_at is not None:
            item["closes_at"] = num(closes_at.timestamp())
        index = {"pk": f"event#{event_id}", "sk": f"list#{list_id}", "list_id": list_id}
        try:
            self.store.transact_write([Put(self.table, item, NEW), Put(self.table, index, NEW)])
        except TransactionCancelled as cancelled:
            old = cancelled.reasons[0].old_item if cancelled.reasons else None
            if not old:
                raise
            if old.get("fingerprint") != fingerprint or old.get("event_id") != event_id:
                raise ListKeyReused() from None
            return _list(old)
        return _list(item)

    def get_list(self, list_id: str) -> CheckinList | None:
        item = self.table.get(list_key(list_id))
        return _list(item) if item else None

    def lists(self, event_id: str) -> list[CheckinList]:
        ids = [item["list_id"] for item in self.table.query(
            key_condition=_under(f"event#{event_id}", "list#"))]
        if not ids:
            return []
        found = self.store.batch_get([(self.table, list_key(i)) for i in ids])
        return sorted((_list(item) for item in found if item),
                      key=lambda lst: (lst.created_at, lst.id))

    def counts(self, checkin_list: CheckinList) -> dict[str, int]:
        """``admitted`` (passes admitted at least once), ``inside`` now, ``conflicts``:
        the list's counter items summed (one query of ``COUNT_SHARDS`` small items)."""
        found = {"admitted": 0, "inside": 0, "conflicts": 0}
        for item in self.table.query(key_condition=_under(f"list#{checkin_list.id}", COUNT_SK)):
            for name in found:
                found[name] += int(item.get(name, 0))
        return found

    def count_op(self, lst: CheckinList, nonce: str, **deltas: int) -> Update:
        """The scan's ``count`` member: ``deltas`` (admitted, inside, conflicts) added to
        the counter item its nonce picks, without a condition."""
        actions = Actions()
        for name in sorted(deltas):
            actions = actions.add(name, deltas[name])
        return Update(self.table, count_key(lst.id, count_shard(nonce)), actions)

    def room_counter(self, list_id: str) -> int:
        item = self.table.get(list_key(list_id))
        return int(item.get("inside", 0)) if item else 0

    # --- scans ---------------------------------------------------------------------
    def scan(self, checkin_list: CheckinList, code: str, *, direction: str, nonce: str,
             scanned_at: float | None, gate: str | None, offline: bool = False) -> ScanResult:
        """Decide one scan (exactly once per nonce). ``scanned_at`` None: now, online."""
        now = float(num(self.clock()))  # type: ignore[arg-type]
        when = now if scanned_at is None else float(num(scanned_at))  # type: ignore[arg-type]
        base: dict[str, Any] = dict(list_id=checkin_list.id, nonce=nonce, direction=direction,
                    scanned_at=at(when), gate=gate, offline=offline)
        stamp = {"code": fingerprint(code, direction), "recorded_at": num(now)}
        ref = self.signer.read(code, event_id=checkin_list.event_id)
        if ref is None:
            return self._refused(ScanResult(status=UNKNOWN_CODE, **base), stamp)
        base.update(pass_id=ref.pass_id, ticket_type=ref.ticket_type)
        if not checkin_list.admits_type(ref.ticket_type):
            return self._refused(ScanResult(status=NOT_ON_LIST, **base), stamp)
        if not checkin_list.is_open(base["scanned_at"]) or (
                offline and checkin_list.closes_at is not None
                and at(now) >= checkin_list.closes_at):  # type: ignore[operator]
            # An offline scan is judged at the time it was made, but a closed list takes
            # no more uploads: nobody can date a scan back into its opening hours.
            return self._refused(ScanResult(status=NOT_OPEN, **base), stamp)
        again = False  # an entry is first tried as the pass's first (it counts admitted)
        for attempt in range(ATTEMPTS):
            if direction == ENTRY:
                members = self.entry(checkin_list, ref, when, gate, nonce, stamp, offline,
                                      again=again)
            else:
                members = self.exit(checkin_list, ref, when, gate, nonce, stamp, offline)
            try:
                self.store.transact_write(members.operations)
            except TransactionCancelled as cancelled:
                refusal = members.refusal(cancelled)
                if refusal.conflict and not refusal.refused_names():
                    _pause(attempt)
                    continue
                if self._reenters(refusal, checkin_list, direction, again):
                    again = not again  # the pass is out (or, on a repeat, new again)
                    continue
                return self._decode(refusal, checkin_list, ref, base, stamp, when, offline)
            except TransactionConflict:
                _pause(attempt)
                continue
            status = ADMITTED if direction == ENTRY else EXITED
            return ScanResult(status=status, **base, message=MESSAGES[status])
        raise TransactionConflict("the scan's items stayed busy")

    def nonces_fit(self, list_id: str, scans: dict[str, tuple[str, str]]) -> bool:
        """False if a nonce of ``scans`` (nonce -> (code, direction)) names a stored scan
        of another code or direction (one batch of reads per 100 nonces)."""
        nonces = list(scans)
        for start in range(0, len(nonces), 100):
            chunk = nonces[start:start + 100]
            rows = self.store.batch_get([(self.table, scan_key(list_id, n)) for n in chunk])
            for nonce, row in zip(chunk, rows):
                if row and row.get("code") != fingerprint(*scans[nonce]):
                    return False
        return True

    @staticmethod
    def _reenters(refusal: Refusal, lst: CheckinList, direction: str, again: bool) -> bool:
        """An entry on a re-entry list refused only by its pass, whose state says the
        other variant (first entry / re-entry) is the one to write."""
        if direction != ENTRY or not lst.allow_reentry or refusal.refused_names() != ["pass"]:
            return False
        old = refusal.old("pass")
        return (old is not None and old.get("state") == "out") if not again else old is None

    def recall(self, list_id: str, nonce: str) -> dict | None:
        return self.table.get(scan_key(list_id, nonce))

    def entry(self, lst: CheckinList, ref: PassRef, when: float, gate: str | None, nonce: str,
              stamp: dict, offline: bool, *, again: bool = False) -> Members:
        """An entry: the pass's first on this list, or (``again``) a re-entry of a pass
        that is out."""
        stamp_at, at_gate = num(when), gate or ""
        entered = (Actions().set(STATE, "inside").set("ticket_type", ref.ticket_type)
                   .set("registration_id", ref.registration_id).set("last_at", stamp_at)
                   .set("last_gate", at_gate)
                   .set("first_at", attr("first_at").if_not_exists(stamp_at))
                   .set("first_gate", attr("first_gate").if_not_exists(at_gate))
                   .add("entries", 1))
        members = Members([
            ("scan", Put(self.table, {**scan_key(lst.id, nonce),
                                      **_row(ADMITTED, ref, ENTRY, when, gate, offline),
                                      **stamp}, NEW)),
            ("pass", Update(self.table, pass_key(lst.id, ref.pass_id), entered,
                            STATE.eq("out") if again else NEW)),
            ("order", Update(self.table, order_key(ref.registration_id),
                             Actions().set("event_id", lst.event_id)
                             .add("admitted", {str(ref.seat)}),
                             not_cancelled(str(ref.seat)))),
            ("count", self.count_op(lst, nonce, inside=1, **({} if again else {"admitted": 1}))),
        ])
        if lst.occupancy_limit is not None:
            members.add("room", Update(self.table, list_key(lst.id), Actions().add(INSIDE, 1),
                                       EXISTS & INSIDE.lt(lst.occupancy_limit)))
        return members

    def exit(self, lst: CheckinList, ref: PassRef, when: float, gate: str | None, nonce: str,
             stamp: dict, offline: bool) -> Members:
        members = Members([
            ("scan", Put(self.table, {**scan_key(lst.id, nonce),
                                      **_row(EXITED, ref, EXIT, when, gate, offline),
                                      **stamp}, NEW)),
            ("pass", Update(self.table, pass_key(lst.id, ref.pass_id),
                            Actions().set(STATE, "out").set("last_at", num(when))
                            .set("last_gate", gate or ""), STATE.eq("inside"))),
            ("count", self.count_op(lst, nonce, inside=-1)),
        ])
        if lst.occupancy_limit is not None:
            members.add("room", Update(self.table, list_key(lst.id), Actions().add(INSIDE, -1),
                                       EXISTS))
        return members

    def _decode(self, refusal: Refusal, lst: CheckinList, ref: PassRef, base: dict,
                stamp: dict, when: float, offline: bool) -> ScanResult:
        if refusal.refused("scan"):
            return self._answer(refusal.old("scan") or {}, stamp, base)
        if refusal.refused("order"):
            return self._refused(ScanResult(status=CANCELLED, **base), stamp)
        if refusal.refused("pass"):
            if base["direction"] == EXIT:
                return self._refused(ScanResult(status=NOT_INSIDE, **base), stamp)
            old = refusal.old("pass") or {}
            first: dict[str, Any] = dict(first_admitted_at=at(old.get("first_at")),
                         first_gate=old.get("first_gate") or None)
            if offline:
                return self._conflict(lst, ScanResult(status=ALREADY_ADMITTED, **base, **first,
                                                 conflict=True), stamp)
            return self._refused(ScanResult(status=ALREADY_ADMITTED, **base, **first), stamp)
        if refusal.refused("room"):
            return self._refused(ScanResult(status=ROOM_FULL, **base), stamp)
        raise refusal.cancelled

    def _refused(self, result: ScanResult, stamp: dict) -> ScanResult:
        """Write a refused scan's row (the log; a repeat's answer), unless its nonce has
        one: then that row is the answer."""
        row = {**scan_key(result.list_id, result.nonce), **_result_row(result), **stamp}
        try:
            self.table.put(row, condition=NEW)
        except ConditionFailed as taken:
            return self._answer(taken.old_item or {}, stamp, _base(result))
        return _with_message(result)

    def _conflict(self, lst: CheckinList, result: ScanResult, stamp: dict) -> ScanResult:
        """An offline admission of a pass admitted already: its row and the conflict, in
        one write (a re-upload is refused by the row and changes nothing)."""
        row = {**scan_key(result.list_id, result.nonce), **_result_row(result), **stamp}
        conflict = {"pk": f"list#{result.list_id}",
                    "sk": f"conflict#{result.pass_id}#{result.nonce}",
                    "pass_id": result.pass_id, "ticket_type": result.ticket_type,
                    "first_at": _epoch(result.first_admitted_at),
                    "first_gate": result.first_gate or "",
                    "second_at": _epoch(result.scanned_at), "second_gate": result.gate or "",
                    "nonce": result.nonce, "reported_at": stamp["recorded_at"]}
        try:
            self.store.transact_write([Put(self.table, row, NEW), Put(self.table, conflict, NEW),
                                       self.count_op(lst, result.nonce, conflicts=1)])
        except TransactionCancelled as cancelled:
            old = cancelled.reasons[0].old_item if cancelled.reasons else None
            if old:
                return self._answer(old, stamp, _base(result))
            raise
        return _with_message(result)

    def _answer(self, row: dict, stamp: dict, base: dict) -> ScanResult:
        if row.get("code") != stamp["code"]:
            raise NonceReused()
        return _from_row(row, base)

    # --- the log and conflicts -----------------------------------------------------
    def scans(self, list_id: str, *, limit: int | None = None) -> list[ScanResult]:
        rows = self.table.query(key_condition=_under(f"list#{list_id}", "scan#"))
        found = [_from_row(row, {"list_id": list_id, "nonce": row["sk"][len("scan#"):]})
                 for row in rows]
        found.sort(key=lambda r: (r.scanned_at, r.nonce))
        return found[-limit:] if limit else found

    def conflicts(self, list_id: str) -> list[Conflict]:
        rows = self.table.query(key_condition=_under(f"list#{list_id}", "conflict#"))
        return sorted((Conflict(list_id=list_id, pass_id=row["pass_id"],
                                ticket_type=row["ticket_type"], first_at=at(row.get("first_at")),
                                first_gate=row.get("first_gate") or None,
                                second_at=at(row["second_at"]),  # type: ignore[arg-type]
                                second_gate=row.get("second_gate") or None,
                                nonce=row["nonce"],
                                reported_at=at(row["reported_at"]))  # type: ignore[arg-type]
                       for row in rows), key=lambda c: (c.second_at, c.nonce))

    def passes_inside(self, list_id: str) -> list[dict]:
        return [item for item in self.table.query(key_condition=_under(f"list#{list_id}", "pass#"))
                if item.get("state") == "inside"]

    def pass_items(self, list_id: str) -> list[dict]:
        return list(self.table.query(key_condition=_under(f"list#{list_id}", "pass#")))

    # --- orders --------------------------------------------------------------------
    def order_item(self, registration_id: str) -> dict:
        return self.table.get(order_key(registration_id)) or {}

    def order_items(self, registration_ids: Iterable[str]) -> dict[str, dict]:
        ids = list(dict.fromkeys(registration_ids))
        found: dict[str, dict] = {}
        for start in range(0, len(ids), 100):
            chunk = ids[start:start + 100]
            for rid, item in zip(chunk, self.store.batch_get(
                    [(self.table, order_key(r)) for r in chunk])):
                if item:
                    found[rid] = item
        return found

    def first_admissions(self, registration_id: str, event_lists: list[CheckinList],
                         seats: int) -> dict[str, tuple[float, str]]:
        """Pass id -> (time, gate) of its earliest admission on any of ``event_lists``."""
        wanted = [(self.table, pass_key(lst.id, pass_id(registration_id, n)))
                  for lst in event_lists for n in range(1, seats + 1)]
        first: dict[str, tuple[float, str]] = {}
        for start in range(0, len(wanted), 100):
            for item in self.store.batch_get(wanted[start:start + 100]):
                if item and "first_at" in item:
                    pid = item["sk"][len("pass#"):]
                    seen = (float(item["first_at"]), item.get("first_gate") or "")
                    if pid not in first or seen < first[pid]:
                        first[pid] = seen
        return first


def layout_of(order: dict, tickets: dict[str, int]) -> list[str]:
    """An order's seats' ticket types (seat 1 first): as stored by its first partial
    cancellation, else from its ``tickets`` (the whole order)."""
    return list(order["layout"]) if order.get("layout") else seat_layout(tickets)


def num(seconds: float | None) -> Decimal | None:
    """A time (epoch seconds) as stored: to the millisecond."""
    return None if seconds is None else Decimal(str(round(float(seconds), 3)))


def _pause(attempt: int) -> None:
    time.sleep(random.uniform(0, min(0.2, 0.005 * (2 ** min(attempt, 6)))))


def _epoch(when: datetime | None) -> Decimal | None:
    return None if when is None else num(when.timestamp())


def _row(status: str, ref: PassRef, direction: str, when: float, gate: str | None,
         offline: bool) -> dict:
    return {"status": status, "pass_id": ref.pass_id, "ticket_type": ref.ticket_type,
            "direction": direction, "scanned_at": num(when), "gate": gate or "",
            "offline": offline}


def _result_row(result: ScanResult) -> dict:
    row = {"status": result.status, "direction": result.direction,
           "scanned_at": _epoch(result.scanned_at), "gate": result.gate or "",
           "offline": result.offline, "conflict": result.conflict}
    for name in ("pass_id", "ticket_type"):
        if getattr(result, name):
            row[name] = getattr(result, name)
    if result.first_admitted_at is not None:
        row["first_at"] = _epoch(result.first_admitted_at)
        row["first_gate"] = result.first_gate or ""
    return row


def _base(result: ScanResult) -> dict:
    return {"list_id": result.list_id, "nonce": result.nonce}


def _from_row(row: dict, base: dict) -> ScanResult:
    status = row["status"]
    return ScanResult(status=status, list_id=base["list_id"], nonce=base["nonce"],
                      direction=row.get("direction", ENTRY),
                      scanned_at=at(row.get("scanned_at", 0)),  # type: ignore[arg-type]
                      gate=row.get("gate") or None, pass_id=row.get("pass_id"),
                      ticket_type=row.get("ticket_type"),
                      first_admitted_at=at(row.get("first_at")),
                      first_gate=row.get("first_gate") or None,
                      offline=bool(row.get("offline")), conflict=bool(row.get("conflict")),
                      message=MESSAGES.get(status, ""))


def _with_message(result: ScanResult) -> ScanResult:
    from dataclasses import replace
    return replace(result, message=MESSAGES[result.status])


def _list(item: dict) -> CheckinList:
    types = item.get("ticket_types")
    return CheckinList(id=item["list_id"], event_id=item["event_id"], name=item["name"],
                       ticket_types=tuple(types) if types is not None else None,
                       allow_reentry=bool(item.get("allow_reentry")),
                       occupancy_limit=(int(item["occupancy_limit"])
                                        if item.get("occupancy_limit") is not None else None),
                       opens_at=at(item.get("opens_at")), closes_at=at(item.get("closes_at")),
                       created_at=at(item["created_at"]))  # type: ignore[arg-type]
