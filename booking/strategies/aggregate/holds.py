"""Waiting-list holds in the aggregate strategy's event item (seed 003 inside seed 004 2-1).

A hold is an entry of the event item's ``holds`` map: e-mail key -> until (epoch milliseconds).
It takes a seat like an attendee does: ``confirmed_count`` counts attendees *and* holds,
so ``book``'s unchanged condition (``confirmed_count < capacity``) already keeps the held
seat from anyone else. Time releases it: a write may take over a hold only with
``holds.#h <= :now`` in its condition (a booking when no other seat is free, or the next
offer), turning the held seat into its own without changing the count. Accepting is one
update whose condition is ``holds.#email > :now``: an offer that expires during an accept
either books or refuses, never both.
"""
from booking.dynamo.access import CONDITION_FAILED as CCF, ConditionFailed
from booking.errors import AlreadyRegistered, EventFull, EventNotFound
from booking.models import Availability
from booking.dynamo import items

BUMP = "booking_version = if_not_exists(booking_version, :zero) + :one"


def expired_holder(item: dict | None, now: float, prefer: str | None = None) -> str | None:
    """An e-mail whose hold in ``item`` has expired (``prefer``'s own first), or None."""
    holds = (item or {}).get("holds") or {}
    expired = [email for email, until in sorted(holds.items()) if until <= now]
    return prefer if prefer in expired else (expired[0] if expired else None)


def availability_of(item: dict, now: float) -> Availability:
    holds = item.get("holds") or {}
    return Availability(capacity=item["capacity"],
                        confirmed=item["confirmed_count"] - len(holds),
                        held=sum(1 for until in holds.values() if until > now))


class AggregateHolds:
    """Mixed into ``AggregateStrategy`` (which provides ``events``). ``bump`` is the SET
    clause every hold write adds: the version a repair (and an organizer's edit) checks."""

    holds_seats = True
    bump = BUMP

    def _key(self, event_id):
        return {"event_id": event_id}

    def _ensure_holds_map(self, event_id):
        try:
            self.events.update(self._key(event_id), "SET holds = if_not_exists(holds, :empty)",
                               condition="attribute_exists(event_id)", values={":empty": {}})
        except ConditionFailed:
            raise EventNotFound() from None

    def hold_ops(self, event_id, email, *, until, now, refused=None):
        names = {"#email": email}
        values = {":until": until, ":one": 1, ":zero": 0}
        if refused is None or refused.code(0) != CCF:
            if refused is None:
                self._ensure_holds_map(event_id)
            return [("Update", self.events.update_op(
                self._key(event_id),
                f"SET holds.#email = :until, confirmed_count = confirmed_count + :one, {self.bump}",
                condition="attribute_exists(event_id) AND confirmed_count < #capacity AND "
                          "attribute_not_exists(attendees.#email) AND "
                          "attribute_not_exists(holds.#email)",
                names={**names, "#capacity": "capacity"}, values=values))], {}
        old = refused.reasons[0].old_item
        if old is None:
            raise EventNotFound()
        if email in (old.get("attendees") or {}):
            raise AlreadyRegistered()
        holder = expired_holder(old, now, prefer=email)
        if holder is None:
            raise EventFull()
        expression, condition = _take_over(holder, email, "SET holds.#email = :until",
                                           self.bump)
        if holder != email:  # DynamoDB refuses names an expression does not use
            names["#h"] = holder
        return [("Update", self.events.update_op(
            self._key(event_id), expression, condition=condition,
            names=names, values={**values, ":now": now}))], {}

    def book_over_expired(self, event_id, old, registration, now):
        """The booking's update taking the seat of an expired hold in ``old``, or None."""
        holder = expired_holder(old, now)
        if holder is None or registration.email in (old.get("attendees") or {}):
            return None
        expression, condition = _take_over(holder, registration.email,
                                           "SET attendees.#email = :attendee", self.bump)
        return ("Update", self.events.update_op(
            self._key(event_id), expression, condition=condition.replace(
                " AND attribute_not_exists(holds.#email)", ""),
            names={"#email": registration.email, "#h": holder},
            values={":attendee": items.attendee_value(registration), ":now": now, ":one": 1,
                    ":zero": 0}))

    def accept_ops(self, event_id, registration, *, now, ref):
        return [("Update", self.events.update_op(
            self._key(event_id),
            f"REMOVE holds.#email SET attendees.#email = :attendee, {self.bump}",
            condition="holds.#email > :now AND attribute_not_exists(attendees.#email)",
            names={"#email": registration.email},
            values={":attendee": items.attendee_value(registration), ":now": now, ":one": 1,
                    ":zero": 0}))]

    def release_ops(self, event_id, email, *, until, ref):
        return [("Update", self.events.update_op(
            self._key(event_id),
            f"REMOVE holds.#email SET confirmed_count = confirmed_count - :one, {self.bump}",
            condition="holds.#email = :until", names={"#email": email},
            values={":until": until, ":one": 1, ":zero": 0}))]

    def release_expired(self, event_id, *, now):
        released = 0
        for email, until in self.holds(event_id).items():
            if until > now:
                continue
            try:
                self.events.update(self._key(event_id), "REMOVE holds.#h SET confirmed_count = "
                                   f"confirmed_count - :one, {self.bump}",
                                   condition="holds.#h <= :now", names={"#h": email},
                                   values={":now": now, ":one": 1, ":zero": 0})
                released += 1
            except ConditionFailed:
                pass  # taken over or released meanwhile
        return released

    def holds(self, event_id):
        item = self.events.get(self._key(event_id), projection="event_id, holds")
        if item is None:
            raise EventNotFound()
        return dict(item.get("holds") or {})

    def registration_absent_op(self, event_id, email):
        return ("ConditionCheck", self.events.delete_op(
            self._key(event_id),
            condition="attribute_exists(event_id) AND attribute_not_exists(attendees.#email)",
            names={"#email": email}))


def _take_over(holder, email, set_clause, bump):
    """(expression, condition) replacing ``holder``'s expired hold with ``set_clause``."""
    if holder == email and "holds.#email" in set_clause:
        return (f"{set_clause}, {bump}",
                "holds.#email <= :now AND attribute_not_exists(attendees.#email)")
    return (f"REMOVE holds.#h {set_clause}, {bump}",
            "holds.#h <= :now AND attribute_not_exists(attendees.#email) AND "
            "attribute_not_exists(holds.#email)")
