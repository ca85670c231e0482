"""A cancellation's rider: the order's passes refuse at the door from the same write.

A whole cancellation marks the order cancelled (every pass refuses an entry; one already
inside can still leave). A cancellation of part of an order cancels unused passes of the
types it gives back (never admitted on any list, the highest seats first), on condition
that none of them was admitted meanwhile: a scan conditions on the pass not cancelled, so
the scan and the cancellation cannot both win. It records which passes it cancelled under
the request's id, so a repeat answers the same passes.
"""
from booking.checkin.door import Door, layout_of, order_key
from booking.checkin.passes import pass_id
from booking.dynamo.expressions import Actions, all_of, attr
from booking.dynamo.expressions import Member, Refusal, Update
from booking.errors import BookingContention, InvalidBooking
from booking.models import Registration

USED = ("{count} {label} pass(es) of this order were already used at the door: they "
        "cannot be cancelled.")


NAMED_USED = "That pass was already used at the door or cancelled: it cannot be cancelled."
NAMED_USED_MANY = ("Some of those passes were already used at the door or cancelled: they "
                   "cannot be cancelled.")


class PassesChanged(BookingContention):
    """A pass this cancellation chose was admitted or cancelled meanwhile: choose again."""

    default_message = "A pass of this order was just scanned at the door. Please try again."


def cancelled_by(removed: Registration, order: dict, request_id: str) -> list[str]:
    """The passes a cancellation cancelled: a part's, as its write recorded them; a whole
    order's, every seat not cancelled before (``order``: its door item)."""
    if removed.part_request_id is not None:
        return list(order.get(f"by:{request_id}", []))
    layout = layout_of(order, removed.tickets)
    gone = set(order.get("cancelled", ()))
    return [pass_id(removed.registration_id, n) for n in range(1, len(layout) + 1)
            if str(n) not in gone]


class PassCancellation:
    """The ``passes`` member of a cancellation (``Riders.others``).

    ``whole``: the order as read before the write (its layout before any part was
    cancelled), needed for a part's first cancellation; None for a whole cancellation."""

    def __init__(self, door: Door, request_id: str, whole: Registration | None = None,
                 seats: tuple[int, ...] | None = None):
        self.door = door
        self.request_id = request_id
        self.whole = whole
        self.seats = seats  # the seats named (``release_of``), else chosen by type

    def members(self, answer: Registration, *, notice: bool = True) -> list[tuple[str, Member]]:
        if answer.part_request_id is None:  # the whole order: no read, no condition
            return [("passes", Update(self.door.table, order_key(answer.registration_id),
                                      Actions().set("cancelled_all", True)
                                      .set("event_id", answer.event_id)))]
        order = self.door.order_item(answer.registration_id)
        if self.whole is None or self.whole.registration_id != answer.registration_id:
            raise PassesChanged()
        layout = layout_of(order, self.whole.tickets)
        seats = (self._named(order, layout, answer.tickets) if self.seats
                 else self._choose(order, layout, answer.tickets))
        admitted, cancelled = attr("admitted"), attr("cancelled")
        unused = [~admitted.contains(seat) & ~cancelled.contains(seat) for seat in seats]
        return [("passes", Update(
            self.door.table, order_key(answer.registration_id),
            Actions().set("layout", attr("layout").if_not_exists(layout))
            .set("event_id", answer.event_id)
            .set(f"by:{self.request_id}",
                 [pass_id(answer.registration_id, int(n)) for n in seats])
            .add(cancelled, set(seats)),
            all_of([attr("cancelled_all").not_exists(), *unused])))]

    @staticmethod
    def _choose(order: dict, layout: list[str], release: dict[str, int]) -> list[str]:
        """Seats (as strings) to cancel: per type, unused ones, highest first."""
        used = set(order.get("admitted", ())) | set(order.get("cancelled", ()))
        chosen = []
        for ticket_type, count in sorted(release.items()):
            free = [str(n) for n in range(len(layout), 0, -1)
                    if layout[n - 1] == ticket_type and str(n) not in used]
            if len(free) < count:
                from booking.models import ticket_label
                raise InvalidBooking(USED.format(count=count - len(free),
                                                 label=ticket_label(ticket_type)),
                                     field="tickets")
            chosen.extend(free[:count])
        return chosen

    def _named(self, order: dict, layout: list[str], release: dict[str, int]) -> list[str]:
        """The seats named (as strings), if they are of ``release``'s types and counts and
        still unused (or cancelled by this very request: a repeat, answered as the first)."""
        assert self.seats is not None
        named = [str(n) for n in self.seats]
        kinds: dict[str, int] = {}
        for seat in self.seats:
            kinds[layout[seat - 1]] = kinds.get(layout[seat - 1], 0) + 1
        if kinds != release:
            raise PassesChanged()
        if set(named) <= set(n.rsplit("-", 1)[1] for n in order.get(f"by:{self.request_id}", ())):
            return named  # applied already: the request's own row answers the repeat
        used = [n for n in named if n in set(order.get("admitted", ()))
                | set(order.get("cancelled", ()))]
        if used:
            raise InvalidBooking(NAMED_USED if len(used) == 1 else NAMED_USED_MANY,
                                 field="passes")
        return named

    def answer(self, refusal: Refusal) -> Registration | None:
        if refusal.refused("passes"):
            raise PassesChanged()
        return None
