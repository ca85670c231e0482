"""Waiting-list holds in the streams event item's holds map (``MapHolds``), counted as
taken seats; an accepted offer is a confirmed registration (docs/streams.md#waiting-list-holds).
"""
from booking.dynamo import items
from booking.dynamo.access import Table
from booking.dynamo.expressions import Actions, attr
from booking.dynamo.expressions import ConditionCheck, Member, Put
from booking.models import CONFIRMED, Event, Order, Registration
from booking.strategies.holds import MapHolds

STATUS = attr("status")
# A pending request may still be rejected and a rejected one is nothing: only a confirmed
# registration stands in the way of a hold or an accepted offer.
NOT_CONFIRMED = attr("email").not_exists() | STATUS.ne(CONFIRMED)
# Every write that moves the event item's count adds 1: the version the repair checks.
CHANGES = attr("count_changes")
BUMP = Actions().set(CHANGES, CHANGES.if_not_exists(0).plus(1))


class StreamsHolds(MapHolds):
    """Holds in the event item's holds map (``held``, set by the strategy)."""

    registrations_table: Table

    def accept_ops(self, event: Event, registration: Registration, order: Order, *,
                   now: float, ref: dict, holder: str | None = None) -> list[tuple[str, Member]]:
        """The unexpired hold removed (its seats stay counted: they become the person's)
        and the confirmed registration put (it replaces a pending request of theirs)."""
        return [*self.unhold_members(event, holder or registration.email, order, now=now),
                ("registration", Put(self.registrations_table,
                                     items.registration_item(registration, status=CONFIRMED),
                                     NOT_CONFIRMED))]

    def registration_absent_op(self, event_id: str, email: str) -> ConditionCheck:
        return ConditionCheck(self.registrations_table, {"event_id": event_id, "email": email},
                              NOT_CONFIRMED)
