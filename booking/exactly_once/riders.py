"""Riders: members the service adds to a booking's or cancellation's one write.

A strategy writes the seat members (its guard); the service hands it ``Riders``, whose
members ride in the same transaction: the request row and the e-mail's outbox row today
(``request_log.py``, ``outbox.py``), an access code's use or an order's answers next. A
strategy never builds a rider and never knows which ride: it adds ``riders.members(...)``
to its write and asks ``riders.answer(refusal)`` first when the write is refused. A rider
decodes its own refusal: it answers (the request had already applied) or raises its own
error. Each rider's members carry names of their own (``request``, ``outbox``...).

A ``SideRead`` (the entry point's abuse limits: was this asking counted before?) rides in
the strategy's first read the same way: its keys go into ``reads()``, and ``answer_read``
hands it the rows found for them, so a booking answered from that read costs one request.
"""
from dataclasses import dataclass
from typing import Protocol

from booking.dynamo.access import Table
from booking.dynamo.expressions import Member, Refusal
from booking.models import CANCELLATION, CONFIRMATION, Registration
from booking.exactly_once.request_log import Request, RequestLog

# The most members the riders of one write add: a cancellation's request row, its e-mail's
# outbox row, its passes, its code's use given back, its answers' removal and its count
# (``cancellations.py``). A strategy whose write grows with the order bounds the order by
# it, without knowing which riders ride.
MOST_RIDER_MEMBERS = 6


class Rider(Protocol):
    """One kind of member that rides on the seats' write."""

    def members(self, answer: Registration, *, notice: bool) -> list[tuple[str, Member]]:
        """Named members for a write whose answer is ``answer``; ``notice``: the write owes
        its e-mail now (False for a booking decided later)."""
        ...

    def answer(self, refusal: Refusal) -> Registration | None:
        """The answer when one of this rider's members refused the write, or None; raises
        the rider's own error when its refusal is the answer."""
        ...


class SideRead(Protocol):
    """Items someone else wants read in the same consistent batch as the request row."""

    def reads(self) -> list[tuple[Table, dict]]:
        """(table, key) pairs to read."""
        ...

    def found(self, rows: list[dict | None]) -> None:
        """The items read for ``reads()``, in its order (None: absent)."""
        ...


@dataclass(frozen=True)
class RequestRider:
    """The request row (exactly once) and the outbox row of the e-mail the write owes."""

    log: RequestLog
    request: Request

    def members(self, answer: Registration, *, notice: bool = True) -> list[tuple[str, Member]]:
        named: list[tuple[str, Member]] = [("request", op)
                                           for op in self.log.row_ops(self.request, answer)]
        if notice:
            kind = CONFIRMATION if self.request.operation == "book" else CANCELLATION
            ops = self.log.outbox.ops(kind, answer, at=int(self.request.at))
            named += [(f"outbox:{index}", op) for index, op in enumerate(ops)]
        return named

    def answer(self, refusal: Refusal) -> Registration | None:
        return self.log.refused_answer(self.request, refusal.old("request")) \
            if refusal.refused("request") else None


@dataclass(frozen=True)
class Riders:
    """Every rider of one request's write, the request's own first: what a strategy is
    handed with a booking or a cancellation."""

    log: RequestLog
    request: Request
    others: tuple[Rider, ...] = ()
    side: SideRead | None = None  # read along in the strategy's first read (``reads``)

    @property
    def riders(self) -> tuple[Rider, ...]:
        return (RequestRider(self.log, self.request), *self.others)

    def members(self, answer: Registration, *, notice: bool = True) -> list[tuple[str, Member]]:
        """Every rider's members for a write that answers ``answer``."""
        return [named for rider in self.riders for named in rider.members(answer, notice=notice)]

    def answer(self, refusal: Refusal) -> Registration | None:
        """The first rider's answer to ``refusal`` (the request's own first), or None."""
        for rider in self.riders:
            answered = rider.answer(refusal)
            if answered is not None:
                return answered
        return None

    def recall(self) -> Registration | None:
        """What this request already did (one consistent read of its row), or None."""
        return self.log.recall(self.request)

    def reads(self) -> list[tuple[Table, dict]]:
        """Reads to add to a batch that should also recall the request (and the side
        read's items, after the request's)."""
        side = self.side.reads() if self.side is not None else []
        return [*self.log.reads(self.request), *side]

    def answer_read(self, rows: list[dict | None]) -> Registration | None:
        """What the rows read for ``reads()`` answer: the request's registration when its
        row shows it applied (None: nothing applied); the side read gets its rows."""
        own = len(self.log.reads(self.request))
        if self.side is not None:
            self.side.found(rows[own:])
        return self.log.answer(self.request, rows[0]) if own else None
