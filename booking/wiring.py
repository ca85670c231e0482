"""The composition root: settings become objects here, and only here.

``store_from_settings`` builds the store (one DynamoDB client and the table prefix);
``service_from_settings`` reads the booking settings once and builds the graph on it: the
retry policy, the request log (with its outbox), the guarded strategies (each given the
store and both) and the ``BookingService``; ``mail_sender`` builds the e-mail sender
beside it. ``web_settings`` and ``worker_settings`` give the public pages, the admin and
the commands what they need: ``web_settings`` is read once and again after any setting
changes (Django's ``setting_changed``, so ``override_settings`` holds), ``worker_settings``
afresh on each call.
Nothing else reads ``django.conf.settings`` (but ``config/`` and ``booking/checks.py``).
The process keeps one store and one service (``get_store``, ``get_booking_service``); tests and
harnesses build their own graphs on stores of their own (``harness.controls``) and put
them in place with ``use_service``.
"""
import logging
import threading
from typing import TYPE_CHECKING, cast
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

from django.conf import settings
from django.core.signals import setting_changed

from booking.checkin.passes import PassSigner
from booking.dynamo.access import Store
from booking.dynamo.client import ClientConfig, make_client
from booking.dynamo.history import RequestHistory
from booking.dynamo.leases import Leases
from booking.dynamo.rate_limits import RateCounters
from booking.mail.sender import MailSender, decision_mailer
from booking.exactly_once.outbox import Outbox
from booking.exactly_once.request_log import RequestLog
from booking.service import BookingService
from booking.service.shedding import CoolDown
from booking.strategies.base import RetryPolicy
from booking.strategies.streams.decider import StreamDecider

if TYPE_CHECKING:
    from booking.strategies.streams import StreamsStrategy
from booking.dynamo.webhooks import WebhookDeliveries, WebhookEndpoints
from booking.webhooks.delivery import RetryRule, WebhookSender
from booking.webhooks.fanout import Fanout
from booking.webhooks.addresses import PublicUrls
from booking.webhooks.registry import WebhookRegistry

DAY = 86400
# The abuse limits (booking/entry/limits.py) by name, and the setting that gives each rate.
RATE_SETTINGS = {"signup": "BOOKING_SIGNUP_RATE", "cancel": "BOOKING_CANCEL_RATE",
                 "signup_email": "BOOKING_SIGNUP_EMAIL_RATE", "admin_login": "ADMIN_LOGIN_RATE",
                 "api_token": "API_TOKEN_RATE", "resend": "BOOKING_RESEND_RATE",
                 "resend_mail": "BOOKING_RESEND_MAIL_RATE",
                 "access_code": "BOOKING_ACCESS_CODE_RATE"}

_service: BookingService | None = None
_store: Store | None = None
_lock = threading.RLock()


@dataclass(frozen=True)
class WebSettings:
    """What the public pages and the admin need from the settings."""

    site_url: str  # every absolute link is built on it, never on a request's Host
    form_max_age: int  # seconds a signup form's one-time token stays valid
    content_security_policy: str  # with {nonce} for the response's nonce; "" for none
    permissions_policy: str
    trusted_proxy_count: int  # proxies whose X-Forwarded-For entry is believed
    rates: dict  # abuse limit name -> its rate text ("10/10m" or "off")
    default_strategy: str  # the admin's preselected size
    max_body_bytes: int  # a request body over this answers 413 before anything reads it
    max_json_bytes: int  # a JSON body a view reads (Django's DATA_UPLOAD_MAX_MEMORY_SIZE too)
    queue_deadline: float  # seconds a changing request may have waited since the proxy took it


@dataclass(frozen=True)
class WorkerSettings:
    """What the booking worker and the replay command need from the settings."""

    worker_interval: float  # seconds between passes over the waiting lists and codes
    outbox_interval: float  # seconds between looks at the outbox (the e-mails owed)
    decider_interval: float  # seconds the streams decider rests at the shards' ends
    replay_lease_seconds: float  # how long a replay_failed run's lease lasts
    webhook_interval: float  # seconds between looks for webhook deliveries due


_web_settings: list[WebSettings] = []  # the one read, until a setting changes


def _settings_changed(**_kwargs) -> None:
    _web_settings.clear()


setting_changed.connect(_settings_changed, dispatch_uid="booking.wiring.web_settings")


def web_settings() -> WebSettings:
    """The web's settings as they are now (read once: every request asks, several times)."""
    if not _web_settings:
        _web_settings.append(_read_web_settings())
    return _web_settings[0]


def _read_web_settings() -> WebSettings:
    return WebSettings(
        site_url=settings.SITE_URL, form_max_age=settings.BOOKING_FORM_MAX_AGE,
        content_security_policy=settings.CONTENT_SECURITY_POLICY,
        permissions_policy=settings.PERMISSIONS_POLICY,
        trusted_proxy_count=settings.TRUSTED_PROXY_COUNT,
        rates={name: getattr(settings, setting) for name, setting in RATE_SETTINGS.items()},
        default_strategy=settings.BOOKING_DEFAULT_STRATEGY,
        max_body_bytes=settings.REQUEST_BODY_MAX_BYTES,
        max_json_bytes=min(settings.REQUEST_BODY_MAX_BYTES,
                           settings.DATA_UPLOAD_MAX_MEMORY_SIZE or settings.REQUEST_BODY_MAX_BYTES),
        queue_deadline=settings.BOOKING_QUEUE_DEADLINE)


def worker_settings() -> WorkerSettings:
    """The worker's settings as they are now."""
    return WorkerSettings(worker_interval=settings.BOOKING_WORKER_INTERVAL,
                          outbox_interval=settings.BOOKING_OUTBOX_INTERVAL,
                          decider_interval=settings.BOOKING_DECIDER_INTERVAL,
                          replay_lease_seconds=settings.BOOKING_REPLAY_LEASE_SECONDS,
                          webhook_interval=settings.WEBHOOK_INTERVAL)


def client_config() -> ClientConfig:
    """How to reach DynamoDB, from the settings."""
    return ClientConfig(
        endpoint_url=settings.DYNAMODB_ENDPOINT_URL, region=settings.AWS_REGION,
        connect_timeout=settings.DYNAMODB_CONNECT_TIMEOUT,
        read_timeout=settings.DYNAMODB_READ_TIMEOUT, retry_mode=settings.DYNAMODB_RETRY_MODE,
        max_attempts=settings.DYNAMODB_MAX_ATTEMPTS,
        max_pool_connections=settings.DYNAMODB_MAX_POOL_CONNECTIONS)


def project_dir() -> Path:
    """The project's directory (BASE_DIR): where relative data paths start."""
    return Path(settings.BASE_DIR)


def store_from_settings() -> Store:
    """A new store: a client for the configured endpoint, the configured table prefix."""
    config = client_config()
    return Store(make_client(config), table_prefix=settings.DYNAMODB_TABLE_PREFIX,
                 streams_client=lambda: make_client(config, "dynamodbstreams"))


def get_store() -> Store:
    """This process's store: the service's, or built from settings on first use."""
    global _store
    with _lock:
        if _service is not None:
            return _service.store
        if _store is None:
            _store = store_from_settings()
        return _store


def service_from_settings(*, store: Store | None = None, extra_strategies: dict | None = None,
                          requests=None, tokens=None,
                          default_strategy: str | None = None) -> BookingService:
    """A new service built from the current settings; the keyword arguments replace parts
    of the graph (tests and harnesses only)."""
    store = store or get_store()
    return tell_webhooks_of_scans(BookingService(
        store=store,
        default_strategy=default_strategy or settings.BOOKING_DEFAULT_STRATEGY,
        retry=RetryPolicy(max_attempts=settings.BOOKING_MAX_RETRIES,
                          base_delay=settings.BOOKING_RETRY_BASE_DELAY,
                          max_delay=settings.BOOKING_RETRY_MAX_DELAY),
        requests=requests or RequestLog(
            store, outbox=Outbox(store), retention_seconds=settings.BOOKING_REQUEST_HISTORY_DAYS * DAY),
        tokens=tokens,
        extra_strategies=extra_strategies,
        repair_lease_seconds=settings.BOOKING_REPAIR_LEASE_SECONDS,
        waitlist_offer_seconds=settings.BOOKING_WAITLIST_OFFER_SECONDS,
        waitlist_confirm_seconds=settings.BOOKING_WAITLIST_CONFIRM_SECONDS,
        default_time_zone=settings.TIME_ZONE,
        deadline_seconds=settings.BOOKING_REQUEST_DEADLINE,
        cool_down=CoolDown(settings.BOOKING_SHED_SECONDS),
        pass_signer=pass_signer(),
    ))


def pass_signer() -> PassSigner:
    """Signs passes' codes with a key per event derived from SECRET_KEY; codes signed with
    a key of SECRET_KEY_FALLBACKS still scan (a rotated secret does not end passes)."""
    return PassSigner(settings.SECRET_KEY.encode("utf-8"),
                      fallbacks=[key.encode("utf-8")
                                 for key in settings.SECRET_KEY_FALLBACKS])


def tell_webhooks_of_scans(service: BookingService) -> BookingService:
    """Owe ``checkin.admitted`` / ``checkin.conflict`` deliveries after each decided scan
    (a failing fan-out is logged; the door's answer stands)."""
    fanout = webhook_fanout(service)

    def observer(checkin_list, result):
        if result.status != "admitted" and not result.conflict:
            return
        try:
            fanout.scan(checkin_list, result, lambda: service.get_event(checkin_list.event_id))
        except Exception:  # the scan is decided and recorded; the hook is a follow-up
            logging.getLogger("booking.webhooks").exception("check-in fan-out failed")

    service.checkin.observers.append(observer)
    return service


def get_booking_service() -> BookingService:
    """This process's service, built from settings on first use."""
    global _service
    with _lock:
        if _service is None:
            _service = observe(service_from_settings())
        return _service


def mail_sender(service: BookingService | None = None, *, stale_seconds: float | None = None,
                email_backend: str | None = None, sender_class=MailSender) -> MailSender:
    """The e-mail sender for ``service`` (this process's by default), from settings; the
    keyword arguments replace parts of it (harnesses only)."""
    service = service or get_booking_service()
    return sender_class(
        events=service.get_event, outbox=service.requests.outbox,
        history=RequestHistory(service.store),
        email_backend=email_backend or settings.EMAIL_BACKEND, site_url=settings.SITE_URL,
        retention_seconds=settings.BOOKING_REQUEST_HISTORY_DAYS * DAY,
        stale_seconds=(settings.BOOKING_REQUEST_STALE_SECONDS if stale_seconds is None
                       else stale_seconds),
        fanout=webhook_fanout(service), passes=service.passes,
        answers=service.questions.store)


def webhook_fanout(service: BookingService) -> Fanout:
    """What turns ``service``'s outbox rows into webhook deliveries."""
    return Fanout(endpoints=WebhookEndpoints(service.store),
                  deliveries=WebhookDeliveries(service.store),
                  availability=service.availability, waiting_entry=service.waiting_entry,
                  retention_seconds=settings.BOOKING_REQUEST_HISTORY_DAYS * DAY,
                  answers=service.questions.store.read)


def webhook_url_policy(*, resolver=None) -> PublicUrls:
    """The rule for endpoint URLs: public addresses only, but the WEBHOOK_ALLOWED_HOSTS
    (development); ``resolver`` replaces the system's (tests)."""
    return PublicUrls(allowed_hosts=tuple(settings.WEBHOOK_ALLOWED_HOSTS), resolver=resolver)


def webhook_registry(service: BookingService | None = None, *, url_policy=None,
                     resolver=None) -> WebhookRegistry:
    """Organizers' endpoints on ``service``'s store, under ``webhook_url_policy``."""
    service = service or get_booking_service()
    return WebhookRegistry(endpoints=WebhookEndpoints(service.store),
                           deliveries=WebhookDeliveries(service.store),
                           event_exists=service.get_event,
                           url_policy=url_policy or webhook_url_policy(resolver=resolver),
                           retention_seconds=settings.BOOKING_REQUEST_HISTORY_DAYS * DAY)


def webhook_sender(service: BookingService | None = None, *, url_policy=None, resolver=None,
                   sender_class=WebhookSender, **parts) -> WebhookSender:
    """The booking worker's webhook sender, from settings; the keyword arguments replace
    parts of it (tests and harnesses only)."""
    service = service or get_booking_service()
    retry = RetryRule(base_seconds=settings.WEBHOOK_RETRY_BASE_SECONDS,
                      max_seconds=settings.WEBHOOK_RETRY_MAX_SECONDS,
                      disable_after_seconds=settings.WEBHOOK_DISABLE_AFTER_SECONDS)
    return sender_class(endpoints=WebhookEndpoints(service.store),
                        deliveries=WebhookDeliveries(service.store),
                        **{"retry": retry, "deadline_seconds": settings.WEBHOOK_DELIVERY_DEADLINE,
                           "url_policy": url_policy or webhook_url_policy(resolver=resolver),
                           **parts})


def leases(service: BookingService | None = None) -> Leases:
    """The maintenance leases on ``service``'s store (this process's by default)."""
    return Leases((service or get_booking_service()).store)


def rate_counters() -> RateCounters:
    """The rate-limit counters on this process's store."""
    return RateCounters(get_store())


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
    """Forget this process's service and store; the next use builds them from the settings
    of then."""
    global _store
    install(None)
    with _lock:
        _store = None


def stream_decider(service: BookingService | None = None, *,
                   sender: MailSender | None = None) -> StreamDecider:
    """The streams strategy's decider for ``service`` (this process's by default); with
    ``sender``, each decision's e-mail goes out at once (``mail.sender.decision_mailer``)."""
    service = service or get_booking_service()
    # The catalog holds the streams strategy under its name ("streams").
    return StreamDecider(cast("StreamsStrategy", service.strategy("streams")),
                         on_decided=decision_mailer(sender) if sender is not None else None)


@dataclass(frozen=True)
class MetricsSettings:
    """What the metrics endpoint and the JSON logs need from the settings."""

    enabled: bool  # the /metrics endpoint answers at all
    allowed_ips: tuple  # peer addresses or networks (CIDR) that may scrape
    bearer_token: str  # or a request carrying this token ("" : none accepted)
    backlog_seconds: float  # how long a count of the outbox backlog is reused
    log_json: bool  # structured logs (one JSON object per line)


def metrics_settings() -> MetricsSettings:
    """The metrics' settings as they are now."""
    return MetricsSettings(
        enabled=settings.METRICS_ENABLED, allowed_ips=tuple(settings.METRICS_ALLOWED_IPS),
        bearer_token=settings.METRICS_BEARER_TOKEN,
        backlog_seconds=settings.METRICS_BACKLOG_SECONDS, log_json=settings.LOG_JSON)


def deployment_environment() -> str:
    """The installation's name (the AWS template's ``Environment`` parameter)."""
    return settings.BOOKING_ENVIRONMENT


def cloudwatch_client():
    """A CloudWatch client for the configured region (the outbox backlog probe)."""
    return make_client(ClientConfig(region=settings.AWS_REGION), "cloudwatch")


def observe(service: BookingService) -> BookingService:
    """Hook the metrics and the per-booking log fields onto ``service`` (and its store's
    client) when the metrics endpoint or JSON logs are on; return it."""
    config = metrics_settings()
    if config.enabled or config.log_json:
        from booking.metrics import prometheus

        prometheus.instrument_store(service.store)
        prometheus.instrument_service(service)
        prometheus.count_mail_failures()
    return service
