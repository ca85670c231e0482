"""Waiting-list controls: collaborators built by tests, never by the product or settings.

``CarelessAcceptStrategy`` is the lock-table strategy with an accept that ignores time
(``CarelessStreamsAcceptStrategy`` is the same for ``streams``): it turns the person's
hold into a registration without the condition that the hold is theirs and unexpired.
When a lapsed hold was already taken over by a booking, the
careless accept books a seat that no longer exists, so the event overbooks: a race test
that sees no violation with it is a test that cannot fail.

``CapacityOnlyOrderHoldStrategy`` is the lock-table strategy whose offer on an event with
orders holds the order's seats in the capacity quota only (the first quota it touches),
and accepts and releases only there: a further quota's seats are never reserved for the
offer, so a booking takes them and the accept overbooks that quota.

The double opt-in's controls replace the service's waiting list (``waitlist_control``):
``UnconfirmedJoinWaitlist`` puts a request to join in line at once, as before the
confirmation link, so made-up addresses stand in line and hold seats;
``ReusableLinkWaitlist`` confirms with a fresh request id every time, so a used link
(after its owner left, or by a replay) joins again.
"""
import uuid

from booking.dynamo import items
from booking.models import CAPACITY_QUOTA, CONFIRMED
from booking.strategies.lock_table import LockTableStrategy
from booking.service.waitlist import WaitlistService
from booking.strategies.streams import StreamsStrategy


class CarelessAcceptStrategy(LockTableStrategy):
    name = "careless_accept"
    guarded = False

    def accept_ops(self, event, registration, order, *, now, ref, holder=None):
        return [
            ("quota:capacity", ("Update", self.locks.update_op(
                {"event_id": event.id}, "REMOVE holds.#email SET version = version + :one",
                condition="attribute_exists(event_id)", names={"#email": registration.email},
                values={":one": 1}))),
            ("registration", ("Put", self.registrations_table.put_op(
                items.registration_item(registration), condition="attribute_not_exists(email)"))),
        ]


class CapacityOnlyOrderHoldStrategy(LockTableStrategy):
    """Holds, accepts and releases an offer's seats in the capacity's lock item only."""

    name = "careless_order_hold"
    guarded = False

    def hold_items(self, event, order):
        return [item for item in super().hold_items(event, order)
                if item[0] == f"quota:{CAPACITY_QUOTA}"]


class CarelessStreamsAcceptStrategy(StreamsStrategy):
    """The streams strategy with the same careless accept: the confirmed registration is
    put whether or not the person's hold is still there (the next offer may have taken
    the lapsed hold over, and counted the seat again)."""

    name = "careless_streams_accept"
    guarded = False

    def accept_ops(self, event, registration, order, *, now, ref, holder=None):
        return [
            ("event", ("Update", self.events.update_op(
                {"event_id": event.id}, "REMOVE holds.#email",
                condition="attribute_exists(event_id)", names={"#email": registration.email}))),
            ("registration", ("Put", self.registrations_table.put_op(
                items.registration_item(registration, status=CONFIRMED)))),
        ]


class UnconfirmedJoinWaitlist(WaitlistService):
    def request_to_join_waiting_list(self, event_id, *, name, email, request_id=None,
                                     tickets=None):
        self.join_waiting_list(event_id, name=name, email=email, request_id=request_id,
                               tickets=tickets)
        return {}


class ReusableLinkWaitlist(WaitlistService):
    def confirm_waiting_list(self, event_id, *, name, email, request_id, requested_at,
                             tickets=None):
        return super().confirm_waiting_list(event_id, name=name, email=email,
                                            request_id=uuid.uuid4().hex,
                                            requested_at=requested_at, tickets=tickets)


class CarelessOptInWaitlist(UnconfirmedJoinWaitlist, ReusableLinkWaitlist):
    """Both at once: one race shows that each of its checks can fail."""


WAITLIST_CONTROLS = {"unconfirmed_join": UnconfirmedJoinWaitlist,
                     "reusable_link": ReusableLinkWaitlist,
                     "careless_opt_in": CarelessOptInWaitlist}


def waitlist_control_service(*, waitlist_control: str | None = None, **options):
    """The product's service from settings plus the careless-accept control strategies;
    with ``waitlist_control`` (a ``WAITLIST_CONTROLS`` name) its waiting list is that
    careless one."""
    from booking import wiring

    service = wiring.service_from_settings(
        extra_strategies={CarelessAcceptStrategy.name: CarelessAcceptStrategy,
                          CarelessStreamsAcceptStrategy.name: CarelessStreamsAcceptStrategy,
                          CapacityOnlyOrderHoldStrategy.name: CapacityOnlyOrderHoldStrategy},
        **options)
    if waitlist_control:
        real = service.waitlist
        service.waitlist = WAITLIST_CONTROLS[waitlist_control](
            catalog=real.catalog, bookings=real.bookings, requests=real.requests,
            engine=real.engine, confirm_seconds=real.confirm_seconds)
    return service
