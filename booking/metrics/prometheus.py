"""Prometheus metrics of the product, and the hooks that feed them.

Kept out of the domain code's way: ``instrument_store`` registers botocore event handlers
on the store's DynamoDB client (as ``booking/dynamo/metrics.py`` does for benchmarks),
``instrument_service`` observes the service's answers (book, cancel, accept an offer) where
they leave the service, and ``count_mail_failures`` listens to the mail sender's error
log. ``booking.wiring.observe`` installs them on the process's service; the endpoint is
``booking/web/metrics.py``.

The metrics (all prefixed ``booking_``):

- ``bookings_total{strategy,outcome}``: confirmed, pending (``streams``), rejected (full),
  already_registered, closed, unknown (``OutcomeUnknown``), contention, unavailable,
  invalid, not_found, error; ``cancellations_total{strategy,outcome}`` likewise;
- ``dynamodb_requests_total{operation}`` (HTTP requests sent, retries included),
  ``dynamodb_request_seconds{operation}`` (a call's latency, its retries included),
  ``dynamodb_throttles_total{operation}``, ``dynamodb_conditional_failures_total{operation}``
  (a cancelled transaction counts its refused conditions),
  ``dynamodb_transaction_conflicts_total``, ``dynamodb_errors_total{operation,code}``;
- ``waitlist_offers_total``: offers made (an offer's outbox row committed);
- ``email_failures_total``: e-mail sends that failed (they stay owed);
- at scrape time: ``outbox_backlog`` (e-mails owed), ``decider_seconds_behind`` and
  ``deciders_running`` (from the stream deciders' heartbeat rows).
"""
import logging
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager

from prometheus_client import CollectorRegistry, Counter, Histogram
from prometheus_client.core import GaugeMetricFamily

from booking import errors
from booking.dynamo.tables import OUTBOX
from booking.metrics.backlog import outbox_backlog
from booking.metrics.logs import booking_request_id, bound
from booking.models import OFFER
from booking.models import Answered

logger = logging.getLogger("booking.metrics")
REGISTRY = CollectorRegistry(auto_describe=True)

BOOKINGS = Counter("booking_bookings_total", "Booking requests answered, by outcome",
                   ["strategy", "outcome"], registry=REGISTRY)
CANCELLATIONS = Counter("booking_cancellations_total", "Cancellations answered, by outcome",
                        ["strategy", "outcome"], registry=REGISTRY)
REQUESTS = Counter("booking_dynamodb_requests_total", "DynamoDB HTTP requests sent",
                   ["operation"], registry=REGISTRY)
LATENCY = Histogram("booking_dynamodb_request_seconds",
                    "DynamoDB call latency (botocore's retries included)", ["operation"],
                    registry=REGISTRY,
                    buckets=(.002, .005, .01, .025, .05, .1, .25, .5, 1, 2.5, 5, 10))
THROTTLES = Counter("booking_dynamodb_throttles_total", "DynamoDB attempts throttled",
                    ["operation"], registry=REGISTRY)
CONDITION_FAILURES = Counter("booking_dynamodb_conditional_failures_total",
                             "Conditions DynamoDB refused", ["operation"], registry=REGISTRY)
CONFLICTS = Counter("booking_dynamodb_transaction_conflicts_total",
                    "Transactions cancelled by a conflicting transaction", registry=REGISTRY)
STORE_ERRORS = Counter("booking_dynamodb_errors_total", "DynamoDB calls that failed",
                       ["operation", "code"], registry=REGISTRY)
OFFERS = Counter("booking_waitlist_offers_total", "Waiting-list offers made", registry=REGISTRY)
CHECKIN_SCANS = Counter("booking_checkin_scans_total", "Scans at the door, by answer",
                        ["status", "direction"], registry=REGISTRY)
MAIL_FAILURES = Counter("booking_email_failures_total", "E-mail sends that failed",
                        registry=REGISTRY)

THROTTLE_CODES = {"ProvisionedThroughputExceededException", "ThrottlingException",
                  "RequestLimitExceeded", "Throttling"}
OUTCOMES = [
    (errors.EventFull, "rejected"), (errors.AlreadyRegistered, "already_registered"),
    (errors.BookingClosed, "closed"), (errors.OutcomeUnknown, "unknown"),
    (errors.BookingContention, "contention"), (errors.StoreUnavailable, "unavailable"),
    (errors.InvalidBooking, "invalid"), (errors.EventNotFound, "not_found"),
    (errors.NotRegistered, "not_registered"),
]
_installed_lock = threading.Lock()


def outcome_of(error: BaseException) -> str:
    for kind, name in OUTCOMES:
        if isinstance(error, kind):
            return name
    return "error"


# --- DynamoDB: botocore event hooks on the store's client -------------------------------

def instrument_store(store) -> None:
    """Count and time this store's DynamoDB calls (idempotent)."""
    client = store.client
    with _installed_lock:
        if getattr(client, "_booking_metrics", False):
            return
        client._booking_metrics = True
    outbox = store.name(OUTBOX)
    events = client.meta.events

    def before_call(context=None, **kwargs):
        if context is not None:
            context["booking_metrics_start"] = time.perf_counter()

    def provide_params(model=None, params=None, context=None, **kwargs):
        if context is not None:
            if model.name == "TransactWriteItems":
                context["booking_metrics_offers"] = sum(
                    1 for item in (params or {}).get("TransactItems", [])
                    if item.get("Put", {}).get("TableName") == outbox
                    and item["Put"].get("Item", {}).get("kind") == {"S": OFFER})

    def before_send(request=None, **kwargs):
        target = request.headers.get("X-Amz-Target", b"") if request is not None else b""
        target = target.decode() if isinstance(target, bytes) else str(target)
        REQUESTS.labels(target.rsplit(".", 1)[-1] or "unknown").inc()

    def needs_retry(response=None, operation=None, **kwargs):
        if response is not None and operation is not None:
            code = (response[1] or {}).get("Error", {}).get("Code", "")
            if code in THROTTLE_CODES:
                THROTTLES.labels(operation.name).inc()

    def after_call(http_response=None, parsed=None, model=None, context=None, **kwargs):
        operation = model.name
        start = (context or {}).get("booking_metrics_start")
        if start is not None:
            LATENCY.labels(operation).observe(time.perf_counter() - start)
        error = (parsed or {}).get("Error", {}).get("Code", "")
        if not error:
            offers = (context or {}).get("booking_metrics_offers", 0)
            if offers:
                OFFERS.inc(offers)
            return
        STORE_ERRORS.labels(operation, error).inc()
        if error == "ConditionalCheckFailedException":
            CONDITION_FAILURES.labels(operation).inc()
        elif error == "TransactionCanceledException":
            reasons = [r.get("Code") for r in parsed.get("CancellationReasons", [])]
            refused = reasons.count("ConditionalCheckFailed")
            if refused:
                CONDITION_FAILURES.labels(operation).inc(refused)
            if "TransactionConflict" in reasons:
                CONFLICTS.inc()
        elif error in ("TransactionConflictException", "TransactionInProgressException"):
            CONFLICTS.inc()

    events.register("provide-client-params.dynamodb", provide_params,
                    unique_id="booking-metrics-params")
    events.register("before-call.dynamodb", before_call, unique_id="booking-metrics-call")
    events.register("before-send.dynamodb", before_send, unique_id="booking-metrics-send")
    events.register("needs-retry.dynamodb", needs_retry, unique_id="booking-metrics-retry")
    events.register("after-call.dynamodb", after_call, unique_id="booking-metrics-after")


# --- The service: where it answers ------------------------------------------------------

def instrument_service(service) -> None:
    """Count the service's answers by strategy and outcome, and bind each booking's request
    id for the logs (idempotent): an observer of its bookings, cancellations and accepted
    offers (``BookingService.observers``) and of its scans at the door."""
    if getattr(service, "_booking_metrics", False):
        return
    service._booking_metrics = True
    service.checkin.observers.append(
        lambda _list, result: CHECKIN_SCANS.labels(result.status, result.direction).inc())
    names = {id(strategy): name for name, strategy in service.catalog.strategies.items()}

    def strategy_name(event_id) -> str:
        try:
            return names.get(id(service.catalog.strategy_for(event_id)), "other")
        except Exception:  # noqa: BLE001 - an unknown event: its outcome says so
            return "unknown"

    @contextmanager
    def answered(operation: str, event_id, request_id, answer: Answered) -> Iterator[None]:
        counter = CANCELLATIONS if operation == "cancel" else BOOKINGS
        started = time.perf_counter()
        outcome = "error"
        with bound(booking_request_id, request_id):
            try:
                yield
                outcome = answer.status
            except BaseException as exc:
                outcome = outcome_of(exc)
                raise
            finally:
                strategy = strategy_name(event_id)
                counter.labels(strategy, outcome).inc()
                logger.info("%s %s", operation, outcome, extra={"fields": {
                    "operation": operation, "outcome": outcome,
                    **({"request_id": request_id} if request_id else {}),
                    "strategy": strategy, "event_id": str(event_id),
                    "duration_ms": round((time.perf_counter() - started) * 1000, 1)}})

    service.observers.append(answered)


# --- E-mail failures: the sender logs each one at ERROR ---------------------------------

class _MailFailures(logging.Handler):
    def emit(self, record):
        if record.levelno >= logging.ERROR:
            MAIL_FAILURES.inc()


def count_mail_failures() -> None:
    """Count the mail sender's failed sends (it logs each at ERROR; idempotent)."""
    sender_logger = logging.getLogger("booking.mail.sender")
    with _installed_lock:
        if not any(isinstance(h, _MailFailures) for h in sender_logger.handlers):
            sender_logger.addHandler(_MailFailures(level=logging.ERROR))


# --- Read at scrape time ---------------------------------------------------------------

class StateCollector:
    """The outbox backlog (cached for ``backlog_seconds``) and the deciders' lag."""

    def __init__(self, service, *, backlog_seconds: float):
        self.service = service
        self.backlog_seconds = backlog_seconds
        self._backlog: tuple[int | None, float] = (None, float("-inf"))
        self._lock = threading.Lock()

    def backlog(self):
        with self._lock:
            value, at = self._backlog
            if time.monotonic() - at >= self.backlog_seconds:
                try:
                    value = outbox_backlog(self.service.store)
                except Exception:  # noqa: BLE001 - a scrape never fails on the store
                    logger.warning("Could not count the outbox backlog", exc_info=True)
                self._backlog = (value, time.monotonic())
            return value

    def collect(self):
        backlog = self.backlog()
        if backlog is not None:
            yield GaugeMetricFamily("booking_outbox_backlog", "E-mails owed (outbox rows)",
                                    value=backlog)
        try:
            lag = self.service.decider_lag()
        except Exception:  # noqa: BLE001
            return
        yield GaugeMetricFamily("booking_deciders_running",
                                "Stream deciders that reported in the last minute",
                                value=lag.get("deciders", 0))
        behind = lag.get("seconds_behind")
        if behind is not None:
            yield GaugeMetricFamily("booking_decider_seconds_behind",
                                    "Seconds since a stream decider last caught up",
                                    value=behind)
