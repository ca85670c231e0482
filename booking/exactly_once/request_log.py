"""Request rows: the booking's own write is the record of the request (docs/exactly-once.md).

Every booking and cancellation carries a request id (the signup form's one-time token, or
``request_id=`` on the service). The strategy's own transaction puts, beside the seat, one
*request row* keyed by that id, only if no live row holds it:

    Put requests[request_id] = {operation, fingerprint, content, registration}
        if attribute_not_exists(request_id) OR ttl <= :at

So "this request booked (or cancelled) this registration" commits atomically with the
seat, in the same one request. What follows for a request id:

- the write applied: the row exists. A repeat (any time within retention, also after the
  registration was cancelled) is refused by the row's condition, and the refusal carries
  the row, which answers with the same registration; no seat is touched;
- the write was refused (full, already registered, not registered): nothing was written,
  so a repeat simply runs again (the person asked again). Nothing else re-runs it;
- a live row with other content (another event, person, or operation): ``InvalidBooking``
  ("This form was already used for a different booking."), nothing stored.

An attempt whose answer was lost may still be in flight, and apply after a later attempt
of the same request was refused ("full") and a seat was freed. So before a refusal is told
after such an attempt, the service *fences* the request (``fence``): a row that names the
asking's attempt (``Request.attempt``) as closed. Every attempt's row put carries its
attempt and is refused by a fence that names it:

    ... OR (attribute_exists(fenced) AND NOT contains(fenced, :attempt)
            AND (attribute_not_exists(closed) OR closed < :generation))

so a late attempt applies nothing, while the person asking again (a new attempt) runs as
ever. A fence also closes every attempt of its asking's generation and before
(``Request.generation``: 0 for a first asking, a later asking's time): a re-ask's refusal
is told after its fence (``fence_asked_again``), which closes the earlier askings'
attempts whose ids it never knew. The fence's own put fails only on a real row: the
request applied, and that row answers.

A row is deterministic in its request (its times come from the request), so a resent
transaction is byte for byte the same and its ClientRequestToken answers it.

The outbox rows of the e-mails a booking or cancellation owes ride in the same
transaction (``booking/exactly_once/outbox.py``).
"""
import hashlib
import json
import time
import uuid
from dataclasses import dataclass, field, replace


from booking.dynamo import items
from booking.dynamo.access import ConditionFailed, Store, Table, Unavailable
from booking.dynamo.expressions import Condition, attr
from booking.dynamo.expressions import Put, Write
from booking.dynamo.tables import REQUESTS
from booking.errors import InvalidBooking, StillDeciding
from booking.models import Registration
from booking.exactly_once.outbox import Outbox

MISMATCH = "This form was already used for a different booking."
# A request row's put: no live row, or only a fence that closes neither this attempt nor
# its generation (``closed``: the highest generation a fence closed).
def row_absent_or_open(at: int, attempt: str, generation: int) -> Condition:
    return (_absent(at) | attr("fenced").exists() & ~attr("fenced").contains(attempt)
            & (attr("closed").not_exists() | attr("closed").lt(generation)))


def _absent(now: int) -> Condition:
    """No live row: none, or one whose ``ttl`` passed (TTL deletes late)."""
    return attr("request_id").not_exists() | attr("ttl").le(now)

FENCED_OUT = ("Another asking of this request took its place: send the same request again "
              "(the same request id) to learn its outcome.")


@dataclass(frozen=True)
class Request:
    request_id: str
    operation: str  # "book" or "cancel"
    content: dict = field(hash=False)  # normalized: event_id, email, name or registration_id
    at: float = 0.0  # epoch seconds when the service received it
    # This asking of the request (its re-sends included): what a fence closes.
    attempt: str = field(default_factory=lambda: uuid.uuid4().hex, compare=False)
    # 0 for a first asking; a later asking's own (its time in ms): a fence closes every
    # attempt of its generation and before, so a re-ask's fence closes the earlier askings'
    # attempts, whose ids it does not know (``RequestLog.fence``).
    generation: int = field(default=0, compare=False)

    def asked_again(self) -> "Request":
        """This request as a later asking of it (a re-ask): its generation is its time."""
        return replace(self, generation=max(1, int(self.at * 1000)))

    @classmethod
    def booking(cls, registration: Registration) -> "Request":
        content: dict[str, object] = {"event_id": registration.event_id,
                                      "email": registration.email, "name": registration.name}
        if registration.ticket_counts is not None:  # an order: its tickets are its content
            content["tickets"] = dict(registration.ticket_counts)
        if registration.access_code:  # a code's booking: the code is part of its content
            content["access_code"] = registration.access_code
        # Each asking makes a new registration id; the strategy rebuilds this very request.
        # A registration booked without a request id rebuilds a request without one (None).
        return cls(registration.request_id, "book", content,  # type: ignore[arg-type]
                   registration.registered_at.timestamp(), attempt=registration.registration_id)

    @classmethod
    def cancellation(cls, request_id: str, event_id: str, email: str,
                     registration_id: str | None, at: float,
                     tickets: dict | None = None) -> "Request":
        content: dict[str, object] = {"event_id": event_id, "email": email,
                                      "registration_id": registration_id}
        if tickets is not None:  # part of an order
            content["tickets"] = dict(tickets)
        return cls(request_id, "cancel", content, at)

    @property
    def fingerprint(self) -> str:
        payload = json.dumps([self.operation, self.content], sort_keys=True)
        return hashlib.sha256(payload.encode()).hexdigest()


class RequestLog:
    """Builds the request row a strategy writes, and reads answers out of such rows."""

    def __init__(self, store: Store, *, outbox: Outbox | None = None,
                 retention_seconds: float = 7 * 86400):
        self.table = store.table(REQUESTS)
        self.outbox = outbox or Outbox(store)
        self.retention_seconds = int(retention_seconds)

    def row_ops(self, request: Request, registration: Registration) -> list[Write]:
        """The request row alone, for a write that owes no e-mail yet (a provisional
        booking: its e-mail goes out with the decision). Empty without a request id."""
        at = int(request.at)
        if not request.request_id:
            return []
        row = {"request_id": request.request_id, "operation": request.operation,
               "fingerprint": request.fingerprint, **request.content,
               "registration": items.registration_item(registration),
               "created_at": at, "ttl": at + self.retention_seconds}
        return [Put(self.table, row, row_absent_or_open(at, request.attempt, request.generation))]

    def fence(self, request: Request, *, known: dict | None = None) -> Registration | None:
        """Close ``request``'s attempt (``Request.attempt``) and every attempt of its
        generation and before (``Request.generation``: for a re-ask, every earlier asking's):
        once this returns None, no write of them sent so far can still apply, so a refusal
        may be told. Returns the registration instead when the request had applied (its
        row answers), or raises MISMATCH for a row of other content. One put; two when
        another asking of the same request id was fenced before, unless ``known`` (the row
        as just read) shows that fence.
        """
        if not request.request_id:
            return None
        now = int(time.time())
        fresh = {"request_id": request.request_id, "fenced": {request.attempt}, "fences": 1,
                 "closed": request.generation, "created_at": now,
                 "ttl": now + self.retention_seconds}
        row, condition = fresh, _absent(now)
        if known is not None and "fenced" in known and known.get("ttl", 0) > now:
            row, condition = self._added(fresh, known, request)
        for _ in range(5):
            try:
                self.table.put(row, condition=condition)
                return None
            except ConditionFailed as refused:
                old = refused.old_item or self.read(request.request_id)
            if old is None:  # gone meanwhile (expired): fence afresh
                row, condition = fresh, attr("request_id").not_exists()
            elif "fenced" not in old:
                return self.answer(request, old)  # a live row of this request id
            else:  # another asking was fenced before: add this one
                row, condition = self._added(fresh, old, request)
        raise Unavailable("the request could not be fenced")

    @staticmethod
    def _added(fresh: dict, old: dict, request: Request) -> tuple[dict, Condition]:
        """The fence ``old`` with ``request``'s attempt and generation added, and the
        condition that it is still that fence."""
        row = {**fresh, "fenced": set(old["fenced"]) | {request.attempt},
               "fences": old["fences"] + 1,
               "closed": max(int(old.get("closed", 0)), request.generation)}
        return row, attr("fences").eq(old["fences"])

    def answer(self, request: Request, row: dict | None) -> Registration | None:
        """What a live row says to ``request``: its registration, or MISMATCH; None if absent
        (or only a fence: no attempt of it applied)."""
        if row is None or not request.request_id or row.get("ttl", 0) <= request.at:
            return None
        if "fenced" in row:
            return None
        if row.get("fingerprint") != request.fingerprint:
            raise InvalidBooking(MISMATCH, field="request_id")
        return items.registration_from_item(row["registration"])

    def fence_asked_again(self, request: Request, *,
                          known: dict | None = None) -> Registration | None:
        """Before a refusal of a re-ask (``Request.asked_again``) is told: ``fence`` it, so
        that an earlier asking's attempt still in flight (its own fence could not be
        written) can no longer apply; the registration when one of them applied.
        ``known``: the request row as this asking read it (None: not read)."""
        return self.fence(request, known=known)

    def refused_answer(self, request: Request, row: dict | None) -> Registration | None:
        """What the row that refused ``request``'s put answers: as ``answer``; a fence that
        closed this attempt (another asking took its place) raises ``StillDeciding``: ask
        again."""
        if row is not None and "fenced" in row and row.get("ttl", 0) > request.at and (
                request.attempt in row["fenced"]
                or int(row.get("closed", -1)) >= request.generation):
            raise StillDeciding(FENCED_OUT)
        return self.answer(request, row)

    def read(self, request_id: str) -> dict | None:
        return self.table.get({"request_id": request_id})

    def recall(self, request: Request) -> Registration | None:
        """Read back what the request did (a consistent read), or None."""
        return self.answer(request, self.read(request.request_id))

    def reads(self, request: Request) -> list[tuple[Table, dict]]:
        """(table, key) pairs to add to a batch read that should also recall the request."""
        return [(self.table, {"request_id": request.request_id})] if request.request_id else []

