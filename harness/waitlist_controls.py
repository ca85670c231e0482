"""Waiting-list controls: collaborators built by tests, never by the product or settings.

``CarelessAcceptStrategy`` is the lock-table strategy with an accept that ignores time
(``CarelessStreamsAcceptStrategy`` is the same for ``streams``): it turns the person's
hold into a registration without the condition that the hold is theirs and unexpired.
When a lapsed hold was already taken over by a booking, the
careless accept books a seat that no longer exists, so the event overbooks: a race test
that sees no violation with it is a test that cannot fail.
"""
from booking.dynamo import items
from booking.models import CONFIRMED
from booking.strategies.lock_table import LockTableStrategy
from booking.strategies.streams import StreamsStrategy


class CarelessAcceptStrategy(LockTableStrategy):
    name = "careless_accept"
    guarded = False

    def accept_ops(self, event_id, registration, *, now, ref):
        return [
            ("Update", self.locks.update_op(
                {"event_id": event_id}, "REMOVE holds.#email SET version = version + :one",
                condition="attribute_exists(event_id)", names={"#email": registration.email},
                values={":one": 1})),
            ("Put", self.registrations_table.put_op(items.registration_item(registration),
                                                    condition="attribute_not_exists(email)")),
        ]


class CarelessStreamsAcceptStrategy(StreamsStrategy):
    """The streams strategy with the same careless accept: the confirmed registration is
    put whether or not the person's hold is still there (the next offer may have taken
    the lapsed hold over, and counted the seat again)."""

    name = "careless_streams_accept"
    guarded = False

    def accept_ops(self, event_id, registration, *, now, ref):
        return [
            ("Update", self.events.update_op(
                {"event_id": event_id}, "REMOVE holds.#email",
                condition="attribute_exists(event_id)", names={"#email": registration.email})),
            ("Put", self.registrations_table.put_op(
                items.registration_item(registration, status=CONFIRMED))),
        ]


def waitlist_control_service(**options):
    """The product's service from settings plus the careless-accept control strategies."""
    from booking import wiring

    return wiring.service_from_settings(
        extra_strategies={CarelessAcceptStrategy.name: CarelessAcceptStrategy,
                          CarelessStreamsAcceptStrategy.name: CarelessStreamsAcceptStrategy},
        **options)
