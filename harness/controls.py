"""Controls: collaborators built by tests and harnesses, never by the product or settings.

Each one breaks one guard on purpose, so that a check shown to catch it is a check that
can fail:

- ``UnguardedStrategy`` (``harness/unguarded.py``): reads the count, then writes; overbooks.
- ``ForgetfulRequestLog`` writes no request row and reads none, so bookings and
  cancellations carry no record of their request: repeats run again and reused ids run
  with their new content.
- ``BlindWriteTokens`` sends no ClientRequestToken and never recognises its own write
  after a lost answer, so a resend that applied is reported as a refusal.
- ``CarelessMailSender`` sends e-mails without the atomic counter, so senders that see
  the same outbox row at once both send it.
- ``CarelessWebhookSender`` records a webhook delivery done before it sends it, so a
  sender killed mid-send loses the delivery.
- ``CarelessStreamsStrategy`` decides a streams registration whatever its state, so a
  stream record read twice (a restart, two deciders) is decided twice.
  ``HastyRejectionStreamsStrategy`` rejects without the event item's "still full" check;
  ``StaleFullStreamsStrategy`` keeps the decider's read "full" across stream pages: both
  refuse a seat a cancellation freed.
- ``HastyShardsStrategy`` (event strategy ``hasty_shards``) answers "full" as soon as the
  shard it picked is dry, without reading the others: people are refused while seats
  are free; an order is told "full" naming the quota whose guessed shard could not take
  its seats. ``MarkingShardsStrategy`` marks the
  event (or an order's quota) sold out without checking that no seat was freed since its
  read: a cancellation's seat is refused to everyone after it.
- ``HintTrustingLockTableStrategy`` and ``HintTrustingAggregateStrategy`` answer "full"
  from this process's memory of a sell-out (``booking/strategies/sold_out.py``'s hint)
  without reading: a seat another process freed since is refused.
  ``HintTrustingSlotsStrategy`` does the same on slots.
- ``UnbumpedSlotsStrategy`` frees slots (cancellations, released holds, new slots)
  without bumping the freed epoch (``booking/strategies/slots/freed.py``): a process that
  verified the event sold out keeps refusing the freed seat. ``IndexTrustingSlotsStrategy``
  takes the free-slot index's "none free" for the answer, as slots did before it read the
  slot items themselves: a slot the (eventually consistent) index does not list yet is
  refused. ``EpochLastSlotsStrategy`` reads the freed epoch after the slot items instead of
  before: a slot freed right after its read is refused under the newer epoch.

- ``HolderBlindLockTableStrategy`` cancels the person's registration whoever holds it now,
  not only the one its cancellation read: a cancellation held in flight, landing after
  the person was told "not registered" and booked again, frees the new booking.

- ``CarelessAccessCodes`` (``with_careless_codes(service)``) checks an access code's uses
  by a read, then books with a count that checks nothing: two orders that both read "one
  use left" both book (the access-code race and the torture run catch it).

``BASELINES`` are not controls but earlier versions a benchmark compares with, side by
side in one run: ``slots_lookup_each`` is slots as it was before its free-slot pool.

``control_service`` builds a service with any of them, beside the product's strategies,
on a store the caller builds (``local_store``: another endpoint, another table prefix).
"""
import random
import threading
import time
from dataclasses import dataclass, replace
from functools import partial

import boto3

from booking.dynamo.access import Store
from booking.dynamo.client import make_client
from booking.dynamo.expressions import attr
from booking.mail.sender import SENT, MailSender
from booking.exactly_once.request_log import RequestLog
from booking.strategies import STRATEGIES
from booking.errors import AccessCodeUsedUp, EventFull
from booking.exactly_once.access_codes import code_key, why_refused
from booking.service.access_codes import AccessCodes
from booking.strategies.aggregate import AggregateStrategy
from booking.strategies.base import WriteTokens, order_full, quota_order
from booking.strategies.lock_table import LockTableStrategy
from booking.strategies.shards import ShardsStrategy
from booking.strategies.shards.seats import MARKERS, hint_key, mark_update, marker_key
from booking.strategies.slots import SlotsStrategy
from booking.strategies.slots.seats import SHUFFLE_RANGE, partition
from booking.strategies.slots.freed import epoch_key
from booking.strategies.streams import StreamsStrategy
from booking.dynamo.expressions import Members, Update, kind_of  # the streams controls rebuild a decision

from booking.webhooks.delivery import DELIVERED, RETRYING, WebhookSender

from .unguarded import UnguardedStrategy

_session = boto3.session.Session()
_session_lock = threading.Lock()

CONTROL_STRATEGIES = {UnguardedStrategy.name: UnguardedStrategy}
# Every strategy a test or harness may name: the product's guarded ones and the controls.
ALL_STRATEGIES = {**STRATEGIES, **CONTROL_STRATEGIES}


class ForgetfulRequestLog(RequestLog):
    def row_ops(self, request, registration):
        return []

    def answer(self, request, row):
        return None

    def recall(self, request):
        return None

    def reads(self, request):
        return []


class UnfencedRequestLog(RequestLog):
    """Tells a refusal after a lost attempt without closing that attempt: the attempt may
    still land after the person was told "full" (``RequestLog.fence``)."""

    def fence(self, request):
        return None


class UnfencedReaskLog(RequestLog):
    """Tells a re-ask's refusal without fencing the earlier askings: an attempt of one of
    them left unfenced (its own fence could not be written) may still land after the
    person was told "full" (``RequestLog.fence_asked_again``)."""

    def fence_asked_again(self, request, *, known=None):
        return None


class BlindWriteTokens(WriteTokens):
    """No request token, and a refusal that found one's own write is taken as a refusal."""

    def client_token(self, registration_id, purpose):
        return None

    def is_mine(self, stored, registration):
        return False


class CarelessMailSender(MailSender):
    """Sends every owed e-mail it sees, without claiming it with the atomic counter."""

    def send(self, message, *, event=None, retry_failed=False):
        self._deliver(message, event or self.events(message["event_id"]),
                      self._passes(message))
        self.outbox.done(message["message_id"])
        return SENT


def local_store(endpoint_url: str = "", *, table_prefix: str, **client_options) -> Store:
    """A store of its own for a test or harness: a new client for ``endpoint_url`` (empty:
    the default endpoint, which moto's mock answers) with the configured client options
    (timeouts, retries) except those given, and its own table prefix."""
    from booking import wiring

    config = replace(wiring.client_config(), endpoint_url=endpoint_url, **client_options)
    with _session_lock:  # one session: its loaded models make each new client quick
        client = make_client(config, session=_session)

    def streams_client():
        with _session_lock:
            return make_client(config, "dynamodbstreams", session=_session)
    return Store(client, table_prefix=table_prefix, streams_client=streams_client)


def control_service(*, store: Store | None = None, race_delay_ms: float = 0.0,
                    request_history: bool = True, ambiguity_checks: bool = True,
                    requests: RequestLog | None = None, **options):
    """The product's service (``booking.wiring``) on ``store`` (default: this process's),
    plus the unguarded control strategy (``race_delay_ms`` between its read and its write)
    and, when switched off, the request-row-less log and the blind write tokens (or the
    given ``requests`` log)."""
    from booking import wiring

    store = store or wiring.get_store()
    if requests is None and not request_history:
        requests = ForgetfulRequestLog(store)
    return wiring.service_from_settings(
        store=store, extra_strategies={
            "unguarded": partial(UnguardedStrategy, race_delay_ms=race_delay_ms),
            HastyShardsStrategy.name: HastyShardsStrategy, **BASELINES},
        requests=requests, tokens=None if ambiguity_checks else BlindWriteTokens(), **options)


class HastyRejectionStreamsStrategy(StreamsStrategy):
    """Rejects without checking the event is still full: once it found an event full, a
    seat freed by a cancellation meanwhile is refused to the next request all the same."""

    def decision(self, registration, order, status, now):
        members = super().decision(registration, order, status, now)
        return Members((name, op) for name, op in members if kind_of(op) != "ConditionCheck")


class StaleFullStreamsStrategy(StreamsStrategy):
    """Keeps a consistent read's "full" for every later stream page, not just its own: a
    seat freed between two pages is refused to the next request."""

    def __init__(self, **kwargs):
        super().__init__(**kwargs)
        self._read_once: dict = {}  # event id -> the event item as first read

    def decide_all(self, registrations, *, now=None):
        for registration in registrations:
            yield registration, self._decide(registration, now, self._read_once)


class HintTrustingStreamsStrategy(StreamsStrategy):
    """Once it saw a request of the event rejected, says "full" without reading: a seat
    freed since is refused to the next person."""

    def full_by_reading(self, event, registration, order, riders):
        if self.sold_out.any_for(event.id):
            raise EventFull()
        return None


class CarelessStreamsStrategy(StreamsStrategy):
    """Decides a registration whatever its state: a record read twice is decided twice."""

    def decidable(self, registration):
        return attr("registration_id").eq(registration.registration_id) & attr("status").exists()


class CarelessWebhookSender(WebhookSender):
    """Marks the claimed delivery done, then sends it: killed in between, it is lost."""

    def send(self, delivery, endpoint):
        attempt = int(delivery["attempts"])
        self.deliveries.delivered(delivery["delivery_id"], self._entry(attempt, self.clock(), 0, ""),
                                  now=self.clock())
        _, error, _ = self._post(delivery, endpoint)
        return RETRYING if error else DELIVERED


class HastyShardsStrategy(ShardsStrategy):
    """Answers "full" when the shard it picked is dry, without looking at the others (an
    order: naming the first quota its guessed shards could not take)."""

    name = "hasty_shards"

    def elsewhere(self, event_id, order, marker=None):
        quotas = quota_order(order)
        seen_dry = [quota for quota in quotas if self.dry.get(hint_key(event_id, quota)).dry]
        raise order_full(order, (seen_dry or quotas)[0]) from None


class MarkingShardsStrategy(ShardsStrategy):
    """Marks the event (or an order's quotas) sold out whatever happened since its read
    (no epoch check)."""

    def mark_sold_out(self, event_id, seen, sold_out):
        if not sold_out:
            return
        mark = mark_update({quota: seen[quota].full_until() for quota in sold_out},
                           seen[sold_out[0]].marker or {})
        self.store.transact_write([Update(self.locks, marker_key(event_id, copy), mark)
                                   for copy in range(MARKERS)])


class HintTrustingLockTableStrategy(LockTableStrategy):
    """lock_table answering "full" from its memory of a sell-out."""

    def read_first(self, event, registration, order, riders):
        raise EventFull()


class HintTrustingAggregateStrategy(AggregateStrategy):
    """aggregate answering "full" from its memory of a sell-out."""

    def read_first(self, event, registration, order, riders):
        if self.sold_out.any_for(event.id):
            raise EventFull()
        return order


class HintTrustingSlotsStrategy(SlotsStrategy):
    """slots answering "full" from its memory of a sell-out."""

    def full_by_reading(self, event, registration, order, riders):
        for quota in order.seats:
            if self.sold_out.mark(partition(event.id, quota)) is not None:
                raise order_full(order, quota)
        return None


HINT_TRUSTING = {"lock_table": HintTrustingLockTableStrategy,
                 "streams": HintTrustingStreamsStrategy,
                 "aggregate": HintTrustingAggregateStrategy,
                 "slots": HintTrustingSlotsStrategy}


class HolderBlindLockTableStrategy(LockTableStrategy):
    """lock_table whose cancellation removes the person's registration whoever holds it
    now, not only the one it read (or the link named): a cancellation held in flight
    frees a registration booked after it was sent."""

    def removal_op(self, stored, keep, condition, **options):
        return super().removal_op(stored, keep, attr("email").exists() | condition, **options)


class UnbumpedSlotsStrategy(SlotsStrategy):
    """slots whose freeing writes leave the freed epoch alone."""

    def freed_ops(self, event_id):
        return []


class EpochLastSlotsStrategy(SlotsStrategy):
    """slots that reads the freed epoch after the slot items, not before them."""

    def see_slots(self, event_id, part, now=None):
        seen = super().see_slots(event_id, part, now)
        return replace(seen, epoch=int(self.locks.get(epoch_key(event_id))["epoch"]))


class IndexTrustingSlotsStrategy(SlotsStrategy):
    """slots that believes the free-slot index when it lists no free slot."""

    def see_slots(self, event_id, part, now=None):
        return replace(super().see_slots(event_id, part, now), free=[])


class LookupEachSlotsStrategy(SlotsStrategy):
    """slots before its free-slot pool: every booking looks up eight free slots itself."""

    name = "slots_lookup_each"

    def pooled(self, part, needed):
        start = random.randrange(SHUFFLE_RANGE)
        found = self._eight(part, "free_in = :e AND shuffle >= :start", {":start": start})
        if not found:
            found = self._eight(part, "free_in = :e", {})
        random.shuffle(found)
        return found

    def _eight(self, part, condition, values):
        return [item["slot"] for item in self.slots.query(
            index="free_slots", key_condition=condition, values={":e": part, **values},
            limit=8)]


BASELINES = {LookupEachSlotsStrategy.name: LookupEachSlotsStrategy}


class CarelessAccessCodes(AccessCodes):
    """Checks a code's uses by a read, then books with a count that checks nothing (the
    check before the lock: eventyay's and pretix's bug). Two orders that both read "one
    use left" both write: the access-code races must catch it over its limit."""

    def __init__(self, *, delay_ms: float = 20.0, **kwargs):
        super().__init__(**kwargs)
        self.delay = delay_ms / 1000

    def use(self, event, access_code, tickets):
        use = super().use(event, access_code, tickets)
        if use is None:
            return None
        found = self.table.get(code_key(event.id, use.code))
        if found is None or int(found.get("uses", 0)) >= int(found["max_uses"]):
            raise why_refused(found, use.ticket_types, use.now) if found is None \
                else AccessCodeUsedUp()
        time.sleep(self.delay)  # between the read and the write, as a busy server would
        return _UncheckedUse(self.table, event.id, use.code)


@dataclass(frozen=True)
class _UncheckedUse:
    """The careless control's rider: ``ADD uses 1`` without the condition."""

    table: object
    event_id: str
    code: str

    def members(self, answer, *, notice=True):
        return [("access_code", ("Update", self.table.update_op(
            code_key(self.event_id, self.code), "ADD uses :one", values={":one": 1})))]

    def answer(self, refusal):
        return None


def with_careless_codes(service, *, delay_ms: float = 20.0):
    """``service`` with ``CarelessAccessCodes`` in place of its access codes."""
    careless = CarelessAccessCodes(store=service.store, catalog=service.catalog,
                                   requests=service.requests,
                                   delay_ms=delay_ms)
    service.codes = service.bookings.codes = careless
    return service
