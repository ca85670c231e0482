"""Waiting-list holds in the streams strategy's event item (time-limited holds inside the
stream decider's event item).

The streams event item counts its seats as the aggregate one does (``confirmed_count``,
``capacity``), so its holds are the shared holds map (``HoldsMap``): an entry of the
item's ``holds`` map, e-mail key -> until (epoch milliseconds), counted in
``confirmed_count``. So the decider's own conditions already respect a held seat: a
confirmation needs ``confirmed_count < capacity``, a rejection needs the event still full,
and a held seat counts as taken in both. A pending request arriving while the seats are
held is rejected; a hold whose time ran out goes on to the next in line (the next offer
takes it over), never to whichever request the decider reads next. Every hold write adds
1 to ``count_changes``, the version the repair checks.

Unlike ``aggregate``, a streams registration lives in its own table: a hold, and joining the line, are conditional on the person holding no
*confirmed* registration there (a pending request may still be rejected; a rejected one
is nothing); accepting removes the hold (the count stays: the seat goes from held to
confirmed) and puts the confirmed registration, in one transaction whose condition is
``holds.#email > :now``. The decider never decides it (it is not pending); a pending
request of the same person is replaced by it and so never decided either.

On an event with orders a hold takes the entry's seats in every quota count of the event
item (``hold_seats`` remembers them), so the decider's conditions over the quotas count
them as taken; accepting turns them into the confirmed order.
"""
from booking.dynamo import items
from booking.dynamo.access import Table
from booking.models import CONFIRMED
from booking.strategies.holds import HoldsMap, MapHolds

NOT_CONFIRMED = "attribute_not_exists(email) OR #status <> :confirmed"
# Every write that moves the event item's count adds 1: the version the repair checks.
BUMP = "count_changes = if_not_exists(count_changes, :zero) + :one"
BUMP_VALUES = {":one": 1, ":zero": 0}


class StreamsHolds(MapHolds):
    """The seat-holds protocol on the event item: ``registrations_table`` is the strategy's
    registrations table, ``held`` the event item's holds map (set by the strategy)."""

    registrations_table: Table
    held: HoldsMap

    holds_orders = True

    def accept_ops(self, event_id, registration, *, now, ref, order=None):
        # The status is written out: a streams registration always says what it is.
        confirmed = items.registration_item(registration, status=CONFIRMED)
        unhold = (self.held.unhold_op(event_id, registration.email, now) if order is None else
                  self.held.order_unhold_op(event_id, registration.email, order.seats, now))
        return [
            unhold,
            ("Put", self.registrations_table.put_op(
                confirmed, condition=NOT_CONFIRMED,
                names={"#status": "status"}, values={":confirmed": CONFIRMED})),
        ]

    def registration_absent_op(self, event_id, email):
        return ("ConditionCheck", self.registrations_table.delete_op(
            {"event_id": event_id, "email": email}, condition=NOT_CONFIRMED,
            names={"#status": "status"}, values={":confirmed": CONFIRMED}))
