"""The waiting list: queue for a full event, get a freed seat held for you for a while.

(Over 300 lines on purpose: join, offer, expire, close, accept and leave are the
transitions of one entry item, each conditional on the others' results; they read
together.)

Entries (``WAITING_LIST`` table) are keyed by (event, e-mail key), so one entry per person
is a conditional put. Join order is a ``position`` taken from the event's counter item in
the same transaction as the entry (``next_position = :read``, version-checked), so positions are
gap-free and an entry is visible only after every entry before it: offering "the first
``waiting`` entry by position" is offering in join order.

When a seat frees, ``offer_next`` holds it for the first waiting person (the strategy's
own time-released hold) in one transaction with the entry's change from
``waiting`` to ``offered`` (conditional on it) and the offer e-mail's outbox row. Two
workers offering at once cannot both offer one entry, nor hold more seats than are free.
An offer lapses by time alone: after ``offer_expires_at`` the hold no longer counts, the
accept's condition refuses, and the next offer (or a booking) takes the seat over;
``expire`` only records it (``expired``) and hands the seat on. Accepting turns the hold
into the registration in one transaction with the entry (``booked``), the request row and
the confirmation's outbox row (``booking/exactly_once/request_log.py``): exactly once, like ``book``.

A join comes from a confirmed address (double opt-in): a request to join stores nothing
but the e-mail that answers it (``request_join``: an outbox row), and the line is joined
only from that e-mail's link. So an entry's position is the order of confirmation, and an
address nobody confirmed never stands in line or holds a seat.
"""
import hashlib
import logging
import uuid
from collections.abc import Callable, Iterable
from datetime import datetime
from datetime import timezone as dt_timezone
from typing import Any

from booking.background import Background
from booking.dynamo import items
from booking.dynamo.access import CONDITION_FAILED as CCF, Store, TransactionCancelled
from booking.dynamo.tables import WAITING_LIST
from booking.errors import (AlreadyRegistered, AlreadyWaiting, EventFull, InvalidBooking, NotWaiting,
                     OfferExpired)
from booking.dynamo.expressions import Actions, attr, projection
from booking.dynamo.expressions import ConditionCheck, Member, Members, Put, Update
from booking.models import (BOOKED, EXPIRED, LEFT, OFFER, OFFERED, WAITING, WAITLIST_JOIN,
                            WAITLIST_REMOVED, Event, Order, Registration, WaitlistEntry)
from booking.exactly_once.request_log import MISMATCH, Request, RequestLog
from booking.exactly_once.riders import Riders
from booking.strategies.base import RetryPolicy, now_ms  # holds, offers and entries keep epoch milliseconds

logger = logging.getLogger(__name__)
COUNTER = "#counter"  # a stored value, not an expression: the counter item's sort key (no '@')
ENDED_RETENTION = 30 * 86400  # ended entries stay listed this long (TTL cleans up)
STATUS, NEXT_POSITION = attr("status"), attr("next_position")
# Joining: the counter as read (none yet, or still this value), and no open entry.
NO_OPEN_ENTRY = attr("email").not_exists() | STATUS.is_in(LEFT, EXPIRED, BOOKED)
OPEN = STATUS.is_in(WAITING, OFFERED)


def _ended(status: str, now: int) -> Actions:
    """An entry ending as ``status`` at ``now`` (listed until TTL cleans it up)."""
    return (Actions().set(STATUS, status).set("ttl", now // 1000 + ENDED_RETENTION)
            .set("ended_at", now))


def _ms(moment: datetime | None) -> int:
    """Epoch ms of an offer's expiry (an offered entry always has one)."""
    assert moment is not None, "an offer without its expiry"
    return round(moment.timestamp() * 1000)


def _iso(epoch_ms: int) -> str:
    return datetime.fromtimestamp(epoch_ms / 1000, dt_timezone.utc).isoformat()


def accept_request_id(offer_id: str) -> str:
    """The request id of accepting one offer: a repeated accept is the same request."""
    return f"accept-{offer_id}"


class WaitlistEngine:
    """Waiting-list operations over the service's strategies (``strategy_for(event_id)``).

    ``offer_seconds``: how long an offer holds its seat (``BOOKING_WAITLIST_OFFER_SECONDS``,
    read by ``booking.wiring``). Times are epoch milliseconds (``clock``). ``event_for``:
    the event as remembered (its ticket types never change), for what an entry's order
    takes from each quota.
    """

    def __init__(self, *, store: Store, strategy_for: Callable[[str], Any],
                 requests: RequestLog, retry: RetryPolicy, offer_seconds: float,
                 event_for: Callable[..., Event], clock: Callable[[], int] = now_ms) -> None:
        self.store = store
        self.table = store.table(WAITING_LIST)
        self.strategy_for = strategy_for
        self.event_for = event_for
        self.requests = requests
        self.retry = retry
        self.offer_seconds = offer_seconds
        self.clock = clock

    # --- reads ------------------------------------------------------------------------
    def entries(self, event_id: str) -> list[WaitlistEntry]:
        """Every entry of the event (ended ones too), in join order."""
        found = [items.waitlist_entry_from_item(item) for item in self.table.query(
            key_condition=attr("event_id").eq(event_id)) if item["email"] != COUNTER]
        return sorted(found, key=lambda e: e.position)

    def entry(self, event_id: str, email: str) -> WaitlistEntry | None:
        item = self.table.get({"event_id": event_id, "email": email})
        return items.waitlist_entry_from_item(item) if item and email != COUNTER else None

    def order_of(self, entry: WaitlistEntry) -> Order:
        """What ``entry``'s order takes from each quota (one seat on a plain event)."""
        return self.event_for(entry.event_id, entry.tickets).order(entry.tickets)

    def release_expired(self, event_id: str, now: float) -> int:
        """Free the seats of the event's lapsed holds; return how many."""
        return self.strategy_for(event_id).release_expired(self.event_for(event_id), now=now)

    def events_with_open_entries(self) -> set[str]:
        """Events with someone waiting or offered (one scan; ended entries expire by TTL)."""
        found: set[str] = set()
        key = None
        while True:
            page, key = self.table.filtered_scan_page(
                filter=OPEN, projection=projection("event_id"), start_key=key, limit=500)
            found.update(item["event_id"] for item in page)
            if key is None:
                return found

    # --- joining ----------------------------------------------------------------------
    def join(self, event_id: str, *, name: str, email: str, contact: str | None,
             request_id: str, tickets: dict | None = None) -> WaitlistEntry:
        """``tickets``: the order asked for on an event with orders (validated); None on a
        plain event, whose entries store exactly what they always did."""
        now = self.clock()
        asked = {"tickets": dict(tickets)} if tickets else {}
        request = Request(request_id, "join", {"event_id": event_id, "email": email,
                                               "name": name, **asked}, now / 1000)
        strategy = self.strategy_for(event_id)
        for _ in self.retry.attempts():
            counter = self.table.get({"event_id": event_id, "email": COUNTER}) or {}
            read = counter.get("next_position", 0)
            entry = {"event_id": event_id, "email": email, "name": name, "position": read + 1,
                     "status": WAITING, "joined_at": now, "request_id": request_id,
                     **({"contact": contact} if contact else {}), **asked}
            members = Members([
                ("counter", Update(self.table, {"event_id": event_id, "email": COUNTER},
                                   Actions().set(NEXT_POSITION, read + 1),
                                   NEXT_POSITION.eq(read) if read else NEXT_POSITION.not_exists())),
                ("entry", Put(self.table, entry, NO_OPEN_ENTRY)),
                ("registration", strategy.registration_absent_op(event_id, email)),
                ("request", self._request_row(request, entry)),
            ])
            try:
                self.store.transact_write(members.operations)
                return items.waitlist_entry_from_item(entry)
            except TransactionCancelled as cancelled:
                refusal = members.refusal(cancelled)
                answered = self._answer(request, refusal.old("request"))
                if answered is not None:
                    return answered
                if refusal.refused("entry"):
                    raise AlreadyWaiting(existing=items.waitlist_entry_from_item(
                        refusal.old("entry") or {})) from None
                if refusal.refused("registration"):
                    raise AlreadyRegistered() from None
                if not (refusal.conflict or refusal.refused("counter")):
                    raise  # the counter moved (someone else joined) or a conflict: again
        raise AssertionError("unreachable: attempts() raises when spent")

    def _request_row(self, request: Request, entry: dict) -> Put:
        at = int(request.at)
        row = {"request_id": request.request_id, "operation": request.operation,
               "fingerprint": request.fingerprint, **request.content, "entry": entry,
               "created_at": at, "ttl": at + self.requests.retention_seconds}
        return Put(self.requests.table, row,
                   attr("request_id").not_exists() | attr("ttl").le(at))

    def _answer(self, request: Request, row: dict | None) -> WaitlistEntry | None:
        if row is None or row.get("ttl", 0) <= request.at:
            return None
        if row.get("fingerprint") != request.fingerprint:
            raise InvalidBooking(MISMATCH, field="request_id")
        current = self.entry(row["event_id"], row["email"])
        return current or items.waitlist_entry_from_item(row["entry"])

    # --- asking to join: an e-mail stands in for the answer --------------------------------
    def standing(self, event_id: str, email: str) -> str:
        """What the person is at the event: ``waiting`` or ``offered`` (an open entry),
        ``registered`` (the strategy's "registered", as for joining), or ``""``.

        One request whatever it finds: a transaction of two condition checks, the entry's
        and the strategy's own ``registration_absent_op``, that writes nothing. So the time
        it takes tells nobody which it found (a read of each would not: a strategy's read
        of a missing registration also reads the event)."""
        open_entry = ConditionCheck(self.table, {"event_id": event_id, "email": email},
                                    attr("email").not_exists() | ~OPEN)
        members = Members([("entry", open_entry), ("registration", self.strategy_for(
            event_id).registration_absent_op(event_id, email))])
        for _ in self.retry.attempts():
            try:
                self.store.transact_write(members.operations)
                return ""
            except TransactionCancelled as cancelled:
                refusal = members.refusal(cancelled)
                if refusal.refused("entry"):
                    return (refusal.old("entry") or {})["status"]
                if refusal.refused("registration"):
                    return "registered"
                if not refusal.conflict:
                    raise
        raise AssertionError("unreachable: attempts() raises when spent")

    def request_join(self, event_id: str, *, name: str, email: str, contact: str | None,
                     request_id: str, state: str, tickets: dict | None = None) -> dict:
        """Owe the e-mail that answers a request to join, and return its outbox row.

        ``state`` says what the owner of the address is told: ``confirm`` (the link that
        joins the line) or why nothing changed (``waiting``, ``offered``, ``registered``).
        One message per request id: a replayed form writes the same row, and the sender's
        history sends it once.
        """
        now = self.clock()
        # The address is part of the id: a request id reused for another address (an API
        # key) owes that address its own e-mail, never "already sent".
        asked = hashlib.sha256(f"{event_id}:{email}".encode()).hexdigest()[:16]
        row = {"message_id": f"{WAITLIST_JOIN}-{request_id}-{asked}", "kind": WAITLIST_JOIN,
               "event_id": event_id, "email": email, "name": name,
               "registration_id": request_id, "request_id": request_id,
               "registered_at": _iso(now), "join_state": state,
               "offer_seconds": int(self.offer_seconds), "created_at": now // 1000,
               **({"contact": contact} if contact else {}),
               **({"tickets": dict(tickets)} if tickets else {})}
        self.requests.outbox.table.put(row)
        return row

    # --- offering ---------------------------------------------------------------------
    def offer_next(self, event_id: str) -> WaitlistEntry | None:
        """Hold a free seat (the entry's order, on an event with orders) for the first
        waiting person; None when no seat or nobody. Strict line order: while the first
        person's order does not fit, nobody after them is offered anything."""
        strategy, event = self.strategy_for(event_id), self.event_for(event_id)
        refused, first = None, None
        for _ in self.retry.attempts():
            if refused is None or first is None:
                first = next((e for e in self.entries(event_id) if e.status == WAITING), None)
            if first is None:
                return None
            now = self.clock()
            until = now + int(self.offer_seconds * 1000)
            try:
                hold, ref = strategy.hold_ops(event, first.email, self.order_of(first),
                                              until=until, now=now, refused=refused)
            except EventFull:
                # An order's hold never takes a lapsed one over: free those, then try again.
                if self.release_expired(event_id, now):
                    refused = None
                    continue
                return None
            except AlreadyRegistered:  # booked a free seat meanwhile: no longer waiting
                self._end(first, BOOKED)
                refused, first = None, None
                continue
            offer_id = uuid.uuid4().hex
            members = Members(hold).add("entry", self._mark_offered(first, offer_id, until, ref, now))
            members.add("offer", self._offer_message(first, offer_id, until, now))
            try:
                self.store.transact_write(members.operations)
                return self.entry(event_id, first.email)
            except TransactionCancelled as cancelled:
                refused = members.refusal(cancelled)
                if refused.refused("entry"):
                    refused, first = None, None  # offered or left meanwhile: read again
        raise AssertionError("unreachable: attempts() raises when spent")

    def offer_all(self, event_id: str) -> int:
        """Offer every free seat to the people waiting, in order; return how many."""
        offered = 0
        while self.offer_next(event_id) is not None:
            offered += 1
        return offered

    def _mark_offered(self, entry: WaitlistEntry, offer_id: str, until: int, ref: dict,
                      now: int) -> Update:
        return Update(self.table, {"event_id": entry.event_id, "email": entry.email},
                      Actions().set(STATUS, OFFERED).set("offer_id", offer_id)
                      .set("offer_expires_at", until).set("offered_at", now).set("hold", ref),
                      STATUS.eq(WAITING) & attr("position").eq(entry.position))

    def _offer_message(self, entry: WaitlistEntry, offer_id: str, until: int, now: int) -> Put:
        row = {"message_id": f"offer-{offer_id}", "kind": OFFER, "event_id": entry.event_id,
               "email": entry.email, "name": entry.name, "registration_id": offer_id,
               "registered_at": _iso(now), "offer_expires_at": until, "created_at": now // 1000,
               **({"contact": entry.contact} if entry.contact else {}),
               **({"tickets": entry.ticket_counts} if entry.ticket_counts else {})}
        return Put(self.requests.outbox.table, row)

    # --- expiry -----------------------------------------------------------------------
    def expire(self, event_id: str) -> tuple[int, int]:
        """Record lapsed offers as ``expired``, hand their seats on in join order, then
        free what nobody waits for; return (offers expired, seats offered)."""
        now, expired = self.clock(), 0
        for entry in self._end_registered(event_id, self.entries(event_id)):
            if entry.status == OFFERED and _ms(entry.offer_expires_at) <= now:
                expired += self._end(entry, EXPIRED, offered_until=entry.offer_expires_at)
        offered = self.offer_all(event_id)  # the next offers take over lapsed holds
        self.release_expired(event_id, now)
        return expired, offered

    def _end_registered(self, event_id: str, entries: list) -> list:
        """End the open entries of people who booked a seat directly meanwhile (``booked``;
        an offer's live hold released, so its seat goes on); return the other entries."""
        if not any(entry.is_active for entry in entries):
            return entries
        strategy, now = self.strategy_for(event_id), self.clock()
        registered = {registration.email for registration in strategy.registrations(event_id)
                      if registration.is_confirmed}  # a pending request may yet be rejected
        for entry in entries:
            if entry.is_active and entry.email in registered:
                live = entry.status == OFFERED and _ms(entry.offer_expires_at) > now
                self._end(entry, BOOKED, extra=self._release(entry) if live else ())
        return [entry for entry in entries if entry.email not in registered]

    def close(self, event_id: str) -> int:
        """The event has started: end every open entry as ``expired`` (an offered seat's
        hold released with it); return how many entries ended."""
        ended = 0
        for entry in self.entries(event_id):
            if entry.status == OFFERED:
                ended += self._end(entry, EXPIRED, offered_until=entry.offer_expires_at,
                                   extra=self._release(entry)
                                   if _ms(entry.offer_expires_at) > self.clock() else ())
            elif entry.status == WAITING:
                ended += self._end(entry, EXPIRED)
        self.release_expired(event_id, self.clock())
        return ended

    def _release(self, entry: WaitlistEntry) -> list:
        """The members that free ``entry``'s offered hold."""
        return [op for _, op in self.strategy_for(entry.event_id).release_ops(
            self.event_for(entry.event_id), entry.email, self.order_of(entry),
            until=_ms(entry.offer_expires_at), ref=entry.hold)]

    def _end(self, entry: WaitlistEntry, status: str, *, offered_until: datetime | None = None,
             extra: Iterable[Member] = ()) -> int:
        """Move ``entry`` from its current state to ``status`` (1), or 0 if it moved."""
        condition = STATUS.eq(entry.status)
        if offered_until is not None:
            condition &= attr("offer_expires_at").eq(_ms(offered_until))
        update = Update(self.table, {"event_id": entry.event_id, "email": entry.email},
                        _ended(status, self.clock()), condition)
        try:
            self.store.transact_write([*extra, update])
        except TransactionCancelled as cancelled:
            if cancelled.conflict or any(r.code == CCF for r in cancelled.reasons):
                return 0  # the entry (or the hold to release) moved meanwhile
            raise
        return 1

    # --- accepting and leaving ----------------------------------------------------------
    def accept(self, event_id: str, entry: WaitlistEntry, registration: Registration,
               request: Request) -> Registration:
        """Turn ``entry``'s held seat into ``registration`` (one transaction)."""
        now = self.clock()
        strategy = self.strategy_for(event_id)
        hold = strategy.accept_ops(self.event_for(event_id), registration, self.order_of(entry),
                                   now=now, ref=entry.hold)
        mark = Update(self.table, {"event_id": event_id, "email": entry.email},
                      _ended(BOOKED, now).set("registration_id", registration.registration_id),
                      STATUS.eq(OFFERED) & attr("offer_id").eq(entry.offer_id))
        riders = Riders(self.requests, request)
        members = Members(hold).add("entry", mark).extend(riders.members(registration))
        for _ in self.retry.attempts():
            try:
                self.store.transact_write(members.operations, token=hashlib.sha256(
                    f"{registration.registration_id}:accept".encode()).hexdigest()[:36])
                return registration
            except TransactionCancelled as cancelled:
                refusal = members.refusal(cancelled)
                answered = riders.answer(refusal)
                if answered is not None:
                    return answered
                if refusal.refused("entry") or any(refusal.refused(name) for name, _ in hold):
                    raise OfferExpired() from None
                if not refusal.conflict:
                    raise
        raise AssertionError("unreachable: attempts() raises when spent")

    def leave(self, event_id: str, email: str, *, removed: bool = False) -> WaitlistEntry:
        """End the person's place in line (releasing a held seat, then offering it on).

        ``removed``: an organizer removed them; the e-mail telling them so is owed in the
        same write (``removal_message``), so it goes exactly when the place ended."""
        for _ in self.retry.attempts():
            entry = self.entry(event_id, email)
            if entry is None or not entry.is_active:
                raise NotWaiting()
            release: list = []
            if entry.status == OFFERED and _ms(entry.offer_expires_at) > self.clock():
                release = self._release(entry)
            told = (Put(self.requests.outbox.table, self.removal_message(entry)),)
            if self._end(entry, LEFT, extra=(*release, *(told if removed else ()))):
                if release:
                    self.offer_all(event_id)
                ended = self.entry(event_id, email)
                assert ended is not None, "an entry just ended is still listed"
                return ended
        raise AssertionError("unreachable: attempts() raises when spent")

    def removal_message(self, entry: WaitlistEntry) -> dict:
        """The outbox row telling ``entry``'s person an organizer removed them (one per
        place in line: positions are never reused)."""
        now = self.clock()
        return {"message_id": f"{WAITLIST_REMOVED}-{entry.event_id}-{entry.position}",
                "kind": WAITLIST_REMOVED, "event_id": entry.event_id, "email": entry.email,
                "name": entry.name, "registration_id": f"{entry.event_id}-{entry.position}",
                "registered_at": _iso(now), "created_at": now // 1000,
                **({"contact": entry.contact} if entry.contact else {})}


# --- right after a seat frees: a small pool of background threads per process ----------
# The request that freed the seat answers after its own one write; the offer follows at
# once on this pool (the booking worker is the safety net, as for e-mails).
_offers = Background("booking-offers")


def offer_soon(waitlist: WaitlistEngine, event_id: str) -> None:
    """Offer the event's free seats to its line, off the calling thread."""
    _offers.submit(_offer_logged, waitlist, event_id)


def _offer_logged(waitlist: WaitlistEngine, event_id: str) -> int:
    try:
        return waitlist.offer_all(event_id)
    except Exception:  # noqa: BLE001 - the booking worker offers it on its next pass
        logger.exception("Offering %s's freed seat left to the booking worker", event_id)
        return 0


def flush(timeout: float = 30.0) -> None:
    """Wait for the offers this process is making right now (tests, shutdown)."""
    _offers.flush(timeout)
