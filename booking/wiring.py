"""The composition root: settings become objects here, and only here.

``service_from_settings`` reads the booking settings once and builds the graph: the
retry policy, the request log (with its outbox), the guarded strategies (each given both)
and the ``BookingService``; ``mail_sender`` builds the e-mail sender beside it. Nothing
below reads ``django.conf.settings`` for booking behaviour. The process keeps one service
(``get_booking_service``); tests and harnesses build their own graphs
(``harness.controls.control_service``) and put them in place with ``use_service``.
"""
import threading
from contextlib import contextmanager

from django.conf import settings

from .mail import MailSender
from .outbox import Outbox
from .request_log import RequestLog
from .service import BookingService
from .strategies.retry import RetryPolicy

DAY = 86400

_service: BookingService | None = None
_lock = threading.Lock()


def service_from_settings(*, extra_strategies: dict | None = None, requests=None, tokens=None,
                          default_strategy: str | None = None) -> BookingService:
    """A new service built from the current settings; the keyword arguments replace parts
    of the graph (tests and harnesses only)."""
    return BookingService(
        default_strategy=default_strategy or settings.BOOKING_DEFAULT_STRATEGY,
        retry=RetryPolicy(max_attempts=settings.BOOKING_MAX_RETRIES,
                          base_delay=settings.BOOKING_RETRY_BASE_DELAY,
                          max_delay=settings.BOOKING_RETRY_MAX_DELAY),
        requests=requests or RequestLog(
            outbox=Outbox(), retention_seconds=settings.BOOKING_REQUEST_HISTORY_DAYS * DAY),
        tokens=tokens,
        extra_strategies=extra_strategies,
        repair_lease_seconds=settings.BOOKING_REPAIR_LEASE_SECONDS,
    )


def get_booking_service() -> BookingService:
    """This process's service, built from settings on first use."""
    global _service
    with _lock:
        if _service is None:
            _service = service_from_settings()
        return _service


def mail_sender(service: BookingService | None = None, *,
                stale_seconds: float | None = None) -> MailSender:
    """The e-mail sender for ``service`` (this process's by default), from settings."""
    service = service or get_booking_service()
    return MailSender(
        events=service.get_event, outbox=service.requests.outbox,
        retention_seconds=settings.BOOKING_REQUEST_HISTORY_DAYS * DAY,
        stale_seconds=(settings.BOOKING_REQUEST_STALE_SECONDS if stale_seconds is None
                       else stale_seconds))


def install(service: BookingService | None) -> BookingService | None:
    """Make ``service`` this process's service (None: build from settings on next use);
    return the one it replaces. For tests and harnesses that build their own graph."""
    global _service
    with _lock:
        previous, _service = _service, service
        return previous


@contextmanager
def use_service(service: BookingService):
    """``service`` is this process's service inside the block."""
    previous = install(service)
    try:
        yield service
    finally:
        install(previous)


def reset_services() -> None:
    """Forget this process's service; the next use builds it from the settings of then."""
    install(None)


def stream_decider(service: BookingService | None = None, *, on_decided=None):
    """The streams strategy's decider for ``service`` (this process's by default)."""
    from .decider import StreamDecider

    service = service or get_booking_service()
    return StreamDecider(service.strategy("streams"), on_decided=on_decided)
