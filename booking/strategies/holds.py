"""The waiting list's seat-holds protocol (seed 003: a seat held for one person until a
time), and the holds map that the counter-item strategies share.

A waiting-list offer holds a seat in the strategy's own terms, so a concurrent ``book``
cannot take it, and time releases it: every write that could take a held seat states in
its condition that the hold's ``until`` (epoch milliseconds) has passed. Nobody has to act
when an offer expires; ``release_expired`` only tidies. The waiting list
(``booking/waitlist/engine.py``) runs the transactions; a strategy builds their members,
which always come first. ``book`` counts unexpired holds as taken seats, and takes a seat
whose hold has expired when no other is free.
"""
from abc import ABC, abstractmethod
from dataclasses import dataclass, field

from booking.dynamo.access import CONDITION_FAILED, ConditionFailed, Table
from booking.errors import AlreadyRegistered, EventFull, EventNotFound
from booking.models import Availability, Registration
from booking.strategies.base import CAPACITY_NAMES, expired_holder


def availability_of(item: dict, now: float | None) -> Availability:
    """Seats of a counter item (``capacity``, ``confirmed_count`` counting attendees and
    holds, ``holds`` map); with ``now`` None every hold counts as held, a lapsed one too."""
    holds = item.get("holds") or {}
    held = sum(1 for until in holds.values() if now is None or until > now)
    return Availability(capacity=item["capacity"],
                        confirmed=item["confirmed_count"] - len(holds), held=held)


class SeatHolds(ABC):
    """What a strategy with ``holds_seats`` implements (times in epoch ms)."""

    holds_seats = True

    @abstractmethod
    def hold_ops(self, event_id: str, email: str, *, until: float, now: float,
                 refused=None) -> tuple[list, dict]:
        """Members that take one free seat, or one whose hold has expired, for ``email``
        until ``until``, only if the person is not registered. ``refused`` is the previous
        attempt's ``TransactionCancelled`` (its evidence chooses the next try). Returns the
        members and ``ref``, what the strategy needs later (the slot), stored with the
        offer. Raises ``EventFull``, ``AlreadyRegistered`` or ``EventNotFound``."""

    @abstractmethod
    def accept_ops(self, event_id: str, registration: Registration, *, now: float,
                   ref: dict) -> list:
        """Members that turn the person's hold into ``registration``, only while unexpired."""

    @abstractmethod
    def release_ops(self, event_id: str, email: str, *, until: float, ref: dict) -> list:
        """Members that free exactly the hold that lasts until ``until``."""

    @abstractmethod
    def release_expired(self, event_id: str, *, now: float) -> int:
        """Free the seats of holds expired before ``now`` (each conditional on still being
        so); return how many."""

    @abstractmethod
    def holds(self, event_id: str) -> dict[str, float]:
        """Every stored hold: e-mail key -> until (expired ones included)."""

    @abstractmethod
    def registration_absent_op(self, event_id: str, email: str) -> tuple[str, dict]:
        """A ConditionCheck member: the person holds no registration for the event."""


@dataclass(frozen=True)
class HoldsMap:
    """Holds as a ``holds`` map (e-mail key -> until) in an item keyed by ``event_id`` that
    counts them in ``confirmed_count`` (aggregate's and streams' event item, lock_table's
    lock item), so a condition ``confirmed_count < capacity`` keeps a held seat from anyone
    else and a takeover (``holds.#h <= :now``) swaps the holder without changing the count.

    ``table`` holds the item; ``bump`` is the SET clause every hold write adds (the version
    a repair checks), with ``bump_values`` (always ``:one``)."""

    table: Table
    bump: str
    bump_values: dict = field(default_factory=lambda: {":one": 1})

    def key(self, event_id: str) -> dict:
        return {"event_id": event_id}

    def ensure_map(self, event_id: str) -> None:
        try:
            self.table.update(self.key(event_id), "SET holds = if_not_exists(holds, :empty)",
                              condition="attribute_exists(event_id)", values={":empty": {}})
        except ConditionFailed:
            raise EventNotFound() from None

    def hold_op(self, event_id, email, *, until, now, refused=None, also: str = "",
                ensure: bool = True):
        """The update taking a free seat for ``email`` (first try) or, once ``refused``
        found none, one whose hold has expired; ``also`` adds to both conditions (the
        person is not an attendee of the same item); ``ensure=False`` when the item is
        known to have its ``holds`` map."""
        names, values = {"#email": email}, {":until": until, **self.bump_values}
        if refused is None or refused.code(0) != CONDITION_FAILED:
            if refused is None and ensure:
                self.ensure_map(event_id)
            return ("Update", self.table.update_op(
                self.key(event_id),
                f"SET holds.#email = :until, confirmed_count = confirmed_count + :one, {self.bump}",
                condition=f"attribute_exists(event_id) AND confirmed_count < #capacity{also} "
                          "AND attribute_not_exists(holds.#email)",
                names={**names, **CAPACITY_NAMES}, values=values))
        old = refused.reasons[0].old_item
        if old is None:
            raise EventNotFound()
        holder = expired_holder(old, now, prefer=email)
        if holder is None:
            raise EventFull()
        if holder == email:
            expression, condition = (f"SET holds.#email = :until, {self.bump}",
                                     f"holds.#email <= :now{also}")
        else:  # DynamoDB refuses names an expression does not use: #h only here
            names["#h"] = holder
            expression = f"REMOVE holds.#h SET holds.#email = :until, {self.bump}"
            condition = f"holds.#h <= :now{also} AND attribute_not_exists(holds.#email)"
        return ("Update", self.table.update_op(self.key(event_id), expression,
                                               condition=condition, names=names,
                                               values={**values, ":now": now}))

    def unhold_op(self, event_id, email, now):
        """Remove ``email``'s hold (its seat stays counted: it becomes theirs), only while
        it is unexpired."""
        return ("Update", self.table.update_op(
            self.key(event_id), f"REMOVE holds.#email SET {self.bump}",
            condition="holds.#email > :now", names={"#email": email},
            values={":now": now, **self.bump_values}))

    def release_op(self, event_id, email, *, until):
        return ("Update", self.table.update_op(
            self.key(event_id),
            f"REMOVE holds.#email SET confirmed_count = confirmed_count - :one, {self.bump}",
            condition="holds.#email = :until", names={"#email": email},
            values={":until": until, **self.bump_values}))

    def release_expired(self, event_id, *, now) -> int:
        released = 0
        for email, until in self.holds(event_id).items():
            if until > now:
                continue
            try:
                self.table.update(self.key(event_id), "REMOVE holds.#h SET confirmed_count = "
                                  f"confirmed_count - :one, {self.bump}",
                                  condition="holds.#h <= :now", names={"#h": email},
                                  values={":now": now, **self.bump_values})
                released += 1
            except ConditionFailed:
                pass  # taken over or released meanwhile
        return released

    def holds(self, event_id) -> dict[str, float]:
        item = self.table.get(self.key(event_id), projection="event_id, holds")
        if item is None:
            raise EventNotFound()
        return dict(item.get("holds") or {})


class MapHolds(SeatHolds):
    """``SeatHolds`` kept in a ``HoldsMap``: ``held``, set by the strategy; the strategy's
    own holds module adds ``accept_ops`` and ``registration_absent_op``."""

    held: HoldsMap

    def hold_ops(self, event_id, email, *, until, now, refused=None):
        """The hold, then (member 1) ``registration_absent_op``: registrations kept in a
        table of their own (aggregate's, in the same item, override this)."""
        if refused is not None and refused.code(1) == CONDITION_FAILED:
            raise AlreadyRegistered()
        hold = self.held.hold_op(event_id, email, until=until, now=now, refused=refused)
        return [hold, self.registration_absent_op(event_id, email)], {}

    def release_ops(self, event_id, email, *, until, ref):
        return [self.held.release_op(event_id, email, until=until)]

    def release_expired(self, event_id, *, now):
        return self.held.release_expired(event_id, now=now)

    def holds(self, event_id):
        return self.held.holds(event_id)
