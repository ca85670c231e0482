"""Settings, read from the environment (and an optional .env file) via django-environ.

Every variable is defined once, in config/settings_reference.py (its default, kind and
meaning), which also writes .env.example and docs/reference/settings.md; this module reads
the environment only through ``setting(NAME)``.
"""
from pathlib import Path
from urllib.parse import urlsplit

import environ
from django.core.exceptions import ImproperlyConfigured

from config.settings_reference import reader

BASE_DIR = Path(__file__).resolve().parent.parent

env = environ.Env()
environ.Env.read_env(BASE_DIR / ".env", overwrite=False)
setting = reader(env)

DEBUG = setting("DEBUG")
DEVELOPMENT_SECRET_KEY = "insecure-dev-key-change-me-in-production"
SECRET_KEY = setting("SECRET_KEY", default=DEVELOPMENT_SECRET_KEY if DEBUG else "")
ALLOWED_HOSTS = setting("ALLOWED_HOSTS")
# Earlier keys, still accepted for what they signed (sessions, links) while a rotation settles.
SECRET_KEY_FALLBACKS = setting("SECRET_KEY_FALLBACKS")


def _strong_secret_key(key: str) -> bool:
    """Django's own deploy check (security.W009): long, varied, not a development key."""
    return (len(key) >= 50 and len(set(key)) >= 5 and key != DEVELOPMENT_SECRET_KEY
            and not key.startswith("django-insecure"))


if not DEBUG and not _strong_secret_key(SECRET_KEY):
    # Everything signed (sessions, messages, CSRF, form tokens, links) would be forgeable.
    raise ImproperlyConfigured(
        "SECRET_KEY must be set to a random value of at least 50 characters when DEBUG is "
        "off. Generate one with: python -c 'import secrets; print(secrets.token_urlsafe(50))'"
        " (or set DEBUG=true for local development).")

INSTALLED_APPS = [
    "django.contrib.admin",
    "django.contrib.auth",
    "django.contrib.contenttypes",
    "django.contrib.sessions",
    "django.contrib.messages",
    "django.contrib.staticfiles",
    "booking",
    "booking.api.apps.ApiConfig",
    # Organizers, teams and their rights (booking/organizers/rights.py).
    "booking.organizers.apps.OrganizersConfig",
    # The JSON API (docs/api.md): DRF, its OpenAPI schema, Swagger UI / Redoc served from
    # our own static files (the sidecar), never a CDN.
    "rest_framework",
    "drf_spectacular",
    "drf_spectacular_sidecar",
    # manage.py dynamodb_local: AWS's DynamoDB Local for development and tests.
    "localdynamo",
]
# manage.py torture and bench_booking, and the controls tests build: tools of the project,
# never the product. Installed for development (DEBUG) and tests, or when INSTALL_HARNESS
# asks (e.g. a benchmark run against AWS with DEBUG off).
INSTALL_HARNESS = setting("INSTALL_HARNESS", default=DEBUG)
if INSTALL_HARNESS:
    INSTALLED_APPS.append("harness")

MIDDLEWARE = [
    "django.middleware.security.SecurityMiddleware",
    "whitenoise.middleware.WhiteNoiseMiddleware",
    "booking.web.middleware.FormBodyMiddleware",
    "booking.web.middleware.SecurityHeadersMiddleware",
    "booking.web.middleware.QueueDeadlineMiddleware",
    "django.contrib.sessions.middleware.SessionMiddleware",
    "django.middleware.common.CommonMiddleware",
    "django.middleware.csrf.CsrfViewMiddleware",
    "django.contrib.auth.middleware.AuthenticationMiddleware",
    "django.contrib.messages.middleware.MessageMiddleware",
    "django.middleware.clickjacking.XFrameOptionsMiddleware",
]

ROOT_URLCONF = "config.urls"

TEMPLATES = [
    {
        "BACKEND": "django.template.backends.django.DjangoTemplates",
        "DIRS": [BASE_DIR / "templates"],
        "APP_DIRS": True,
        "OPTIONS": {
            "context_processors": [
                "django.template.context_processors.request",
                "django.contrib.auth.context_processors.auth",
                "django.contrib.messages.context_processors.messages",
                "booking.web.context_processors.page",
            ],
            # The web package's template tags (it is not an app of its own).
            "libraries": {
                "booking_calendar": "booking.web.templatetags.booking_calendar",
                "booking_orders": "booking.web.templatetags.booking_orders",
                "booking_passes": "booking.web.templatetags.booking_passes",
                "booking_answers": "booking.web.templatetags.booking_answers",
                "booking_times": "booking.web.templatetags.booking_times",
            },
        },
    },
]

WSGI_APPLICATION = "config.wsgi.application"

# Django's own tables only (users, sessions, admin log). Events live in DynamoDB.
DATABASES = {"default": setting("DATABASE_URL", default=f"sqlite:///{BASE_DIR / 'db.sqlite3'}")}

AUTH_PASSWORD_VALIDATORS = [
    {"NAME": "django.contrib.auth.password_validation.UserAttributeSimilarityValidator"},
    {"NAME": "django.contrib.auth.password_validation.MinimumLengthValidator"},
    {"NAME": "django.contrib.auth.password_validation.CommonPasswordValidator"},
    {"NAME": "django.contrib.auth.password_validation.NumericPasswordValidator"},
]

LANGUAGE_CODE = "en-us"
TIME_ZONE = setting("TIME_ZONE")
USE_I18N = True
USE_TZ = True

STATIC_URL = "static/"
STATICFILES_DIRS = [BASE_DIR / "static"]
STATIC_ROOT = setting("STATIC_ROOT", default=BASE_DIR / "var" / "staticfiles")
# WhiteNoise serves static files from the web process (any WSGI server). Manifest names
# (content hashes) let browsers cache them for a year; `collectstatic` builds them. Tests
# and DEBUG serve from the app directories without a manifest.
STORAGES = {
    "default": {"BACKEND": "django.core.files.storage.FileSystemStorage"},
    "staticfiles": {"BACKEND": setting("STATICFILES_BACKEND")},
}
WHITENOISE_USE_FINDERS = setting("WHITENOISE_USE_FINDERS", default=DEBUG)

DEFAULT_AUTO_FIELD = "django.db.models.BigAutoField"

# Bounded request size: the signup form is small.
DATA_UPLOAD_MAX_MEMORY_SIZE = setting("DATA_UPLOAD_MAX_MEMORY_SIZE")
# Any request body larger than this (by its Content-Length) answers 413 before a view, the
# CSRF check or a form reads it, on every path, the admin's included. The site takes no
# uploads, so the form limit above and a margin for multipart framing are plenty.
REQUEST_BODY_MAX_BYTES = setting("REQUEST_BODY_MAX_BYTES")

# --- DynamoDB -----------------------------------------------------------------
# Empty DYNAMODB_ENDPOINT_URL means "AWS's own endpoint for AWS_REGION".
DYNAMODB_ENDPOINT_URL = setting("DYNAMODB_ENDPOINT_URL")
AWS_REGION = setting("AWS_REGION")
DYNAMODB_TABLE_PREFIX = setting("DYNAMODB_TABLE_PREFIX")
DYNAMODB_CONNECT_TIMEOUT = setting("DYNAMODB_CONNECT_TIMEOUT")
DYNAMODB_READ_TIMEOUT = setting("DYNAMODB_READ_TIMEOUT")
DYNAMODB_RETRY_MODE = setting("DYNAMODB_RETRY_MODE")
DYNAMODB_MAX_ATTEMPTS = setting("DYNAMODB_MAX_ATTEMPTS")
DYNAMODB_MAX_POOL_CONNECTIONS = setting("DYNAMODB_MAX_POOL_CONNECTIONS")

# --- Booking ------------------------------------------------------------------
BOOKING_DEFAULT_STRATEGY = setting("BOOKING_DEFAULT_STRATEGY")
# Our own retries of contended writes (transaction conflicts, lost slot races).
BOOKING_MAX_RETRIES = setting("BOOKING_MAX_RETRIES")
BOOKING_RETRY_BASE_DELAY = setting("BOOKING_RETRY_BASE_DELAY")
BOOKING_RETRY_MAX_DELAY = setting("BOOKING_RETRY_MAX_DELAY")
# Every booking's time budget in all, and the pause after a throttle (docs/reliability.md).
BOOKING_REQUEST_DEADLINE = setting("BOOKING_REQUEST_DEADLINE")
BOOKING_SHED_SECONDS = setting("BOOKING_SHED_SECONDS")
# A changing request that waited longer than this since the proxy took it is refused
# before it runs (booking/web/middleware.py, QueueDeadlineMiddleware).
BOOKING_QUEUE_DEADLINE = setting("BOOKING_QUEUE_DEADLINE")
# Test controls (the unguarded strategy, no request rows, no ambiguity checks, a race
# delay) are not settings: tests and harnesses build them (harness/controls.py).

LOGGING = {
    "version": 1,
    "disable_existing_loggers": False,
    # Secrets of links ("Bad Request: /cancel/<token>/") redacted in every line.
    # Refusals (409: "full", ...) are answers, not server warnings (config/log_filters.py).
    "filters": {"redact_secrets": {"()": "config.log_redaction.RedactSecrets"},
                "skip_refusals": {"()": "config.log_filters.SkipRefusals"}},
    "handlers": {"console": {"class": "logging.StreamHandler",
                             "filters": ["redact_secrets"]}},
    "root": {"handlers": ["console"], "level": setting("LOG_LEVEL")},
    "loggers": {"botocore": {"level": "WARNING"}, "urllib3": {"level": "WARNING"},
                "django.request": {"filters": ["skip_refusals"]}},
}

# --- Web signup: e-mail and signed links (booking/web/, booking/links.py) -------------
# EMAIL_URL picks the backend: consolemail:// (default: printed to the server's output),
# filemail:////abs/dir (4 slashes), smtp://host:25, smtp+tls://user:pass@host:587,
# smtp+ssl://user:pass@host:465.
# A booking never depends on the mail: its e-mail is an outbox row written with the seat,
# sent right after the request and by `manage.py booking_worker`; failures are replayed.
_email = setting("EMAIL_URL")
EMAIL_BACKEND = _email["EMAIL_BACKEND"]
for _key in ("EMAIL_HOST", "EMAIL_PORT", "EMAIL_HOST_USER", "EMAIL_HOST_PASSWORD",
             "EMAIL_USE_TLS", "EMAIL_USE_SSL", "EMAIL_FILE_PATH"):
    if _email.get(_key) not in (None, ""):
        globals()[_key] = _email[_key]
DEFAULT_FROM_EMAIL = setting("DEFAULT_FROM_EMAIL")
# Seconds before an unresponsive SMTP server is given up on (the signup waits for it).
EMAIL_TIMEOUT = setting("EMAIL_TIMEOUT")
# Seconds a booking_worker waits between looks at the outbox.
BOOKING_WORKER_INTERVAL = setting("BOOKING_WORKER_INTERVAL")
BOOKING_OUTBOX_INTERVAL = setting("BOOKING_OUTBOX_INTERVAL")
# Seconds a signup form's one-time token stays valid (then the form asks for a reload).
BOOKING_FORM_MAX_AGE = setting("BOOKING_FORM_MAX_AGE")

# --- Capacity checks (manage.py check_capacity --repair) -------------------------------
# Seconds a repair's lease lasts; a crashed repair blocks others for at most this long.
BOOKING_REPAIR_LEASE_SECONDS = setting("BOOKING_REPAIR_LEASE_SECONDS")

# --- Exactly-once requests and e-mails (docs/exactly-once.md) -------------------------
# Seconds after which an e-mail send's `started` row counts as crashed (another may send).
BOOKING_REQUEST_STALE_SECONDS = setting("BOOKING_REQUEST_STALE_SECONDS")
# Days request rows and e-mail history are kept (a repeat after that runs as new; TTL cleans up).
BOOKING_REQUEST_HISTORY_DAYS = setting("BOOKING_REQUEST_HISTORY_DAYS")
# Seconds a `replay_failed` run's lease lasts (a crashed run blocks others this long).
BOOKING_REPLAY_LEASE_SECONDS = setting("BOOKING_REPLAY_LEASE_SECONDS")

# --- Production security (docs/deployment.md) -----------------------------------------
# On by default whenever DEBUG is off; each can be switched by its variable. Behind a
# TLS-terminating proxy, set SECURE_PROXY_SSL_HEADER so Django knows a request was HTTPS.
_secure = not DEBUG
SECURE_SSL_REDIRECT = setting("SECURE_SSL_REDIRECT", default=_secure)
SESSION_COOKIE_SECURE = setting("SESSION_COOKIE_SECURE", default=_secure)
CSRF_COOKIE_SECURE = setting("CSRF_COOKIE_SECURE", default=_secure)
SECURE_HSTS_SECONDS = setting("SECURE_HSTS_SECONDS", default=365 * 24 * 3600 if _secure else 0)
SECURE_HSTS_INCLUDE_SUBDOMAINS = setting("SECURE_HSTS_INCLUDE_SUBDOMAINS", default=_secure)
SECURE_HSTS_PRELOAD = setting("SECURE_HSTS_PRELOAD", default=_secure)
SECURE_CONTENT_TYPE_NOSNIFF = True
SECURE_REFERRER_POLICY = "same-origin"
X_FRAME_OPTIONS = "DENY"
SESSION_COOKIE_HTTPONLY = True
# Scripts, styles and images only from this site; an inline script or <style> needs the
# response's nonce ({nonce}, see booking/web/middleware.py), never 'unsafe-inline'. No
# plugins, no framing, forms post here only. The two hashes are the <style> elements the
# API docs' Redoc bundle (drf-spectacular-sidecar) adds as it loads, before it can be given
# the nonce: its scrollbar CSS, and the empty element it then fills (the sha256 of "").
# tests/browser/test_api_docs_browser.py fails if a new sidecar's CSS no longer matches.
REDOC_STYLE_HASHES = ("'sha256-QMIg+bpjm3JdElJ388KYke01izlUW0UoNOeKjpMxdgc=' "
                      "'sha256-47DEQpj8HBSa+/TImW+5JCeuQeRkm5NMpJWZG3hSuFU='")
CONTENT_SECURITY_POLICY = (
    "default-src 'self'; script-src 'self' 'nonce-{nonce}'; "
    f"style-src 'self' 'nonce-{{nonce}}' {REDOC_STYLE_HASHES}; "
    "img-src 'self' data:; object-src 'none'; base-uri 'none'; form-action 'self'; "
    "frame-ancestors 'none'")
PERMISSIONS_POLICY = ("camera=(), microphone=(), geolocation=(), payment=(), usb=(), "
                      "accelerometer=(), gyroscope=(), magnetometer=()")
# "HTTP_X_FORWARDED_PROTO,https": the header (as Django names it) and the value that means
# HTTPS. Only set it when the proxy always sets (or strips) that header itself.
_proxy_ssl_header = setting("SECURE_PROXY_SSL_HEADER")
if _proxy_ssl_header:
    if len(_proxy_ssl_header) != 2:
        raise ImproperlyConfigured(
            "SECURE_PROXY_SSL_HEADER must be two values: HEADER,VALUE "
            "(e.g. HTTP_X_FORWARDED_PROTO,https).")
    SECURE_PROXY_SSL_HEADER = tuple(_proxy_ssl_header)
# Proxies in front of the app that append to X-Forwarded-For (0: use the peer address).
# The client address decides rate limits, so never count a proxy you do not run.
TRUSTED_PROXY_COUNT = setting("TRUSTED_PROXY_COUNT")


def _default_site_url() -> str:
    if DEBUG:
        return "http://127.0.0.1:8000"
    host = next((h.lstrip(".") for h in ALLOWED_HOSTS if h not in ("*", "")), "")
    if not host:
        raise ImproperlyConfigured("Set SITE_URL (e.g. https://events.example.com) or name "
                                   "the site's host first in ALLOWED_HOSTS.")
    return f"https://{host}" if _secure else f"http://{host}"


# The public address of the site: every absolute link (e-mails, cancellation links) is
# built from it, never from the request's Host header.
SITE_URL = (setting("SITE_URL", default=None) or _default_site_url()).rstrip("/")
_site = urlsplit(SITE_URL)
if _site.scheme not in ("http", "https") or not _site.hostname:
    raise ImproperlyConfigured(f"SITE_URL must be an http(s) URL, not {SITE_URL!r}.")
# Origins allowed to POST forms (the site's own by default): https://a.example,https://b.example
CSRF_TRUSTED_ORIGINS = setting("CSRF_TRUSTED_ORIGINS",
                               default=[f"{_site.scheme}://{_site.netloc}"])

# --- Abuse limits (booking/entry/limits.py) ------------------------------------------
# "N/period" (10/10m, 5/h, 100/d) or "off". Counted in DynamoDB, shared by every process
# and host. Signups and cancellations per client address (see TRUSTED_PROXY_COUNT); one
# address can be a whole office or campus behind one router, so the defaults are far above
# one person's use, and the limits about a person (per e-mail, per registration, per user
# name) stay tight. Organizer staff signed in are never limited on their own events:
BOOKING_SIGNUP_RATE = setting("BOOKING_SIGNUP_RATE")
BOOKING_CANCEL_RATE = setting("BOOKING_CANCEL_RATE")
# Signups per e-mail address from one client address (each sends a confirmation e-mail
# to it); a resubmission of one form (same token) counts once, and another network's
# signups for the address never spend it (docs/security.md):
BOOKING_SIGNUP_EMAIL_RATE = setting("BOOKING_SIGNUP_EMAIL_RATE")
# "Resend my confirmation" requests per client address (never the signups' allowance):
BOOKING_RESEND_RATE = setting("BOOKING_RESEND_RATE")
# Confirmations resent per registration (past it the form answers the same, and nothing
# more is sent, so nobody can flood an inbox):
BOOKING_RESEND_MAIL_RATE = setting("BOOKING_RESEND_MAIL_RATE")
# Bookings with a wrong access code per client address (each coded booking reserves an
# attempt first; a code that exists gives it back), so codes cannot be guessed:
BOOKING_ACCESS_CODE_RATE = setting("BOOKING_ACCESS_CODE_RATE")
# Admin login attempts per client address and per user name, each reserved before its
# password is checked (a right password gives it back); then even the right password is
# refused until the period has passed.
ADMIN_LOGIN_RATE = setting("ADMIN_LOGIN_RATE")
# Requests per organizer API token (docs/api.md):
API_TOKEN_RATE = setting("API_TOKEN_RATE")

# --- Waiting list (booking/waitlist/) ---------------------------------------------------
# Seconds a waiting-list offer holds its seat for the person offered it (then it passes on).
BOOKING_WAITLIST_OFFER_SECONDS = setting("BOOKING_WAITLIST_OFFER_SECONDS")
# How long a waiting-list confirmation link joins the line (at most the request history's
# retention, which remembers that it was used).
BOOKING_WAITLIST_CONFIRM_SECONDS = setting("BOOKING_WAITLIST_CONFIRM_SECONDS")

# --- Streams strategy: the stream decider inside booking_worker (booking/strategies/streams/decider.py)
# Seconds the decider waits, once it has read every shard to its end, before it looks for
# new provisional bookings again (time to decision is about this plus one transaction).
BOOKING_DECIDER_INTERVAL = setting("BOOKING_DECIDER_INTERVAL")

# --- JSON API (booking/api/, docs/api.md) ------------------------------------------------
REST_FRAMEWORK = {
    # JSON in and out; any other body answers 415, every refusal is problem+json.
    "DEFAULT_PARSER_CLASSES": ["booking.api.parsers.JSONParser"],
    "DEFAULT_RENDERER_CLASSES": ["rest_framework.renderers.JSONRenderer"],
    # Organizers' tokens (booking/api/auth.py); public endpoints need none.
    "DEFAULT_AUTHENTICATION_CLASSES": ["booking.api.auth.BearerToken"],
    "DEFAULT_PERMISSION_CLASSES": ["rest_framework.permissions.AllowAny"],
    "UNAUTHENTICATED_USER": None,
    "EXCEPTION_HANDLER": "booking.api.problems.exception_handler",
    "DEFAULT_SCHEMA_CLASS": "drf_spectacular.openapi.AutoSchema",
}
SPECTACULAR_SETTINGS = {
    "TITLE": "Event booking API",
    "DESCRIPTION": "Events, registrations and waiting lists. Every POST needs an "
                   "Idempotency-Key (docs/api.md).",
    "VERSION": "1.0.0",
    "SERVE_INCLUDE_SCHEMA": False,
    "SWAGGER_UI_DIST": "SIDECAR",
    "SWAGGER_UI_FAVICON_HREF": "SIDECAR",
    "REDOC_DIST": "SIDECAR",
    "POSTPROCESSING_HOOKS": ["drf_spectacular.hooks.postprocess_schema_enums",
                             "booking.api.schema.add_links"],
}
# --- Webhooks (booking/webhooks/, docs/webhooks.md): sent by booking_worker --------------
# Seconds between the worker's looks for deliveries due; seconds one attempt may take as a
# whole (connect, TLS, send, the answer's headers): a receiver still answering then has failed
# (WEBHOOK_TIMEOUT_SECONDS is the name it had before).
WEBHOOK_INTERVAL = setting("WEBHOOK_INTERVAL")
WEBHOOK_DELIVERY_DEADLINE = setting("WEBHOOK_DELIVERY_DEADLINE",
                                    default=setting("WEBHOOK_TIMEOUT_SECONDS"))
# Hosts a webhook may reach although they are not public addresses, with http:// too: for
# development only (e.g. "127.0.0.1,localhost"); empty in production (manage.py check warns).
WEBHOOK_ALLOWED_HOSTS = setting("WEBHOOK_ALLOWED_HOSTS")
# Backoff after failed attempt n: base * 2**(n-1) seconds, at most max (less up to a fifth).
WEBHOOK_RETRY_BASE_SECONDS = setting("WEBHOOK_RETRY_BASE_SECONDS")
WEBHOOK_RETRY_MAX_SECONDS = setting("WEBHOOK_RETRY_MAX_SECONDS")
# An endpoint whose deliveries all failed for this long is disabled (the admin shows why).
WEBHOOK_DISABLE_AFTER_SECONDS = setting("WEBHOOK_DISABLE_AFTER_SECONDS")

# --- Metrics, structured logs, AWS (booking/metrics/, booking/web/metrics.py; docs/deployment.md)
# The Prometheus endpoint at /metrics: off (404) unless enabled, then only for the peer
# addresses or networks listed (the scraper's; never X-Forwarded-For) or a request with
# "Authorization: Bearer <METRICS_BEARER_TOKEN>" (when that is set). A request that came
# through a proxy (it carries X-Forwarded-For or X-Forwarded-Proto) needs the token.
METRICS_ENABLED = setting("METRICS_ENABLED")
METRICS_ALLOWED_IPS = setting("METRICS_ALLOWED_IPS")
METRICS_BEARER_TOKEN = setting("METRICS_BEARER_TOKEN")
# Seconds between two counts of the outbox backlog (a Scan) for the endpoint.
METRICS_BACKLOG_SECONDS = setting("METRICS_BACKLOG_SECONDS")
# One JSON object per log line, with the HTTP request's id and each booking's request id.
LOG_JSON = setting("LOG_JSON")
if LOG_JSON:
    LOGGING["formatters"] = {"json": {"()": "booking.metrics.logs.JsonFormatter"}}
    LOGGING["handlers"]["console"]["formatter"] = "json"
# Gives every HTTP request an id (X-Request-ID from a trusted proxy, else a new one) for logs.
MIDDLEWARE = ["booking.web.metrics.RequestIdMiddleware", *MIDDLEWARE]
# The installation's name on AWS (the template's Environment parameter): the outbox
# backlog metric's dimension.
BOOKING_ENVIRONMENT = setting("BOOKING_ENVIRONMENT")
