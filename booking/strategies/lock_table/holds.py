"""Waiting-list holds on the lock-table strategy's counter item (seed 003 on seed 004 2-2).

The event's lock item carries the holds: a ``holds`` map, e-mail key -> until (epoch
milliseconds), and ``confirmed_count`` counts registrations *and* holds, so ``book``'s
unchanged condition (``confirmed_count < capacity``) keeps a held seat from anyone else.
Time releases a hold: a write may take it over only with ``holds.#h <= :now`` in its
condition (a booking when no other seat is free, or the next offer), which swaps the
holder without changing the count. Accepting puts the registration and removes the hold
in one transaction whose condition is ``holds.#email > :now``: an offer that expires
during an accept either books or refuses, never both. Every hold write bumps the lock
item's ``version``, which the repair's count relies on.
"""
from booking.dynamo import items
from booking.dynamo.access import CONDITION_FAILED as CCF, ConditionFailed
from booking.errors import AlreadyRegistered, EventFull, EventNotFound
from booking.models import Availability

from booking.strategies.aggregate.holds import expired_holder

NOT_REGISTERED = "attribute_not_exists(email)"


def availability_of(lock: dict, now: float) -> Availability:
    holds = lock.get("holds") or {}
    return Availability(capacity=lock["capacity"], confirmed=lock["confirmed_count"] - len(holds),
                        held=sum(1 for until in holds.values() if until > now))


class LockTableHolds:
    """Mixed into ``LockTableStrategy`` (which provides ``locks`` and ``registrations_table``)."""

    holds_seats = True

    def hold_ops(self, event_id, email, *, until, now, refused=None):
        key = {"event_id": event_id}
        values = {":until": until, ":one": 1}
        if refused is not None and refused.code(1) == CCF:
            raise AlreadyRegistered()
        if refused is None or refused.code(0) != CCF:
            if refused is None:
                self._ensure_holds_map(event_id)
            update = self.locks.update_op(
                key, "SET holds.#email = :until, confirmed_count = confirmed_count + :one, "
                     "version = version + :one",
                condition="attribute_exists(event_id) AND confirmed_count < #capacity AND "
                          "attribute_not_exists(holds.#email)",
                names={"#email": email, "#capacity": "capacity"}, values=values)
            return [("Update", update), self.registration_absent_op(event_id, email)], {}
        lock = refused.reasons[0].old_item
        if lock is None:
            raise EventNotFound()
        holder = expired_holder(lock, now, prefer=email)
        if holder is None:
            raise EventFull()
        if holder == email:
            expression, condition, names = ("SET holds.#email = :until, version = version + :one",
                                            "holds.#email <= :now", {"#email": email})
        else:
            expression = "REMOVE holds.#h SET holds.#email = :until, version = version + :one"
            condition = "holds.#h <= :now AND attribute_not_exists(holds.#email)"
            names = {"#email": email, "#h": holder}
        update = self.locks.update_op(key, expression, condition=condition, names=names,
                                      values={**values, ":now": now})
        return [("Update", update), self.registration_absent_op(event_id, email)], {}

    def _ensure_holds_map(self, event_id):
        try:
            self.locks.update({"event_id": event_id}, "SET holds = if_not_exists(holds, :empty)",
                              condition="attribute_exists(event_id)", values={":empty": {}})
        except ConditionFailed:
            raise EventNotFound() from None

    def book_over_expired(self, event_id, lock, now):
        """The booking's lock update taking the seat of an expired hold, or None."""
        holder = expired_holder(lock, now)
        if holder is None:
            return None
        return ("Update", self.locks.update_op(
            {"event_id": event_id}, "REMOVE holds.#h SET version = version + :one",
            condition="holds.#h <= :now", names={"#h": holder}, values={":now": now, ":one": 1}))

    def accept_ops(self, event_id, registration, *, now, ref):
        return [
            ("Update", self.locks.update_op(
                {"event_id": event_id}, "REMOVE holds.#email SET version = version + :one",
                condition="holds.#email > :now", names={"#email": registration.email},
                values={":now": now, ":one": 1})),
            ("Put", self.registrations_table.put_op(items.registration_item(registration),
                                                    condition=NOT_REGISTERED)),
        ]

    def release_ops(self, event_id, email, *, until, ref):
        return [("Update", self.locks.update_op(
            {"event_id": event_id}, "REMOVE holds.#email SET "
            "confirmed_count = confirmed_count - :one, version = version + :one",
            condition="holds.#email = :until", names={"#email": email},
            values={":until": until, ":one": 1}))]

    def release_expired(self, event_id, *, now):
        released = 0
        for email, until in self.holds(event_id).items():
            if until > now:
                continue
            try:
                self.locks.update({"event_id": event_id}, "REMOVE holds.#h SET "
                                  "confirmed_count = confirmed_count - :one, version = version + :one",
                                  condition="holds.#h <= :now", names={"#h": email},
                                  values={":now": now, ":one": 1})
                released += 1
            except ConditionFailed:
                pass  # taken over or released meanwhile
        return released

    def holds(self, event_id):
        lock = self.locks.get({"event_id": event_id}, projection="event_id, holds")
        if lock is None:
            raise EventNotFound()
        return dict(lock.get("holds") or {})

    def registration_absent_op(self, event_id, email):
        return ("ConditionCheck", self.registrations_table.delete_op(
            {"event_id": event_id, "email": email}, condition=NOT_REGISTERED))
