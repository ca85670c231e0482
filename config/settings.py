"""Settings, read from the environment (and an optional .env file) via django-environ.

Every variable is documented in .env.example and the README.
"""
from pathlib import Path

import environ

BASE_DIR = Path(__file__).resolve().parent.parent

env = environ.Env()
environ.Env.read_env(BASE_DIR / ".env", overwrite=False)

SECRET_KEY = env("SECRET_KEY", default="insecure-dev-key-change-me-in-production")
DEBUG = env.bool("DEBUG", default=False)
ALLOWED_HOSTS = env.list("ALLOWED_HOSTS", default=["127.0.0.1", "localhost"])

INSTALLED_APPS = [
    "django.contrib.admin",
    "django.contrib.auth",
    "django.contrib.contenttypes",
    "django.contrib.sessions",
    "django.contrib.messages",
    "django.contrib.staticfiles",
    "booking",
]

MIDDLEWARE = [
    "django.middleware.security.SecurityMiddleware",
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
            ],
        },
    },
]

WSGI_APPLICATION = "config.wsgi.application"

# Django's own tables only (users, sessions, admin log). Events live in DynamoDB.
DATABASES = {"default": env.db("DATABASE_URL", default=f"sqlite:///{BASE_DIR / 'db.sqlite3'}")}

AUTH_PASSWORD_VALIDATORS = [
    {"NAME": "django.contrib.auth.password_validation.UserAttributeSimilarityValidator"},
    {"NAME": "django.contrib.auth.password_validation.MinimumLengthValidator"},
    {"NAME": "django.contrib.auth.password_validation.CommonPasswordValidator"},
    {"NAME": "django.contrib.auth.password_validation.NumericPasswordValidator"},
]

LANGUAGE_CODE = "en-us"
TIME_ZONE = env("TIME_ZONE", default="UTC")
USE_I18N = True
USE_TZ = True

STATIC_URL = "static/"
STATICFILES_DIRS = [BASE_DIR / "static"]
STATIC_ROOT = BASE_DIR / "var" / "staticfiles"

DEFAULT_AUTO_FIELD = "django.db.models.BigAutoField"

# Bounded request size: the signup form is small.
DATA_UPLOAD_MAX_MEMORY_SIZE = env.int("DATA_UPLOAD_MAX_MEMORY_SIZE", default=64 * 1024)

# --- DynamoDB -----------------------------------------------------------------
# Empty DYNAMODB_ENDPOINT_URL means "AWS's own endpoint for AWS_REGION".
DYNAMODB_ENDPOINT_URL = env("DYNAMODB_ENDPOINT_URL", default="http://127.0.0.1:8001")
AWS_REGION = env("AWS_REGION", default="us-east-1")
DYNAMODB_TABLE_PREFIX = env("DYNAMODB_TABLE_PREFIX", default="booking-")
DYNAMODB_CONNECT_TIMEOUT = env.float("DYNAMODB_CONNECT_TIMEOUT", default=2.0)
DYNAMODB_READ_TIMEOUT = env.float("DYNAMODB_READ_TIMEOUT", default=5.0)
DYNAMODB_RETRY_MODE = env("DYNAMODB_RETRY_MODE", default="standard")
DYNAMODB_MAX_ATTEMPTS = env.int("DYNAMODB_MAX_ATTEMPTS", default=4)
DYNAMODB_MAX_POOL_CONNECTIONS = env.int("DYNAMODB_MAX_POOL_CONNECTIONS", default=64)

# --- Booking ------------------------------------------------------------------
BOOKING_DEFAULT_STRATEGY = env("BOOKING_DEFAULT_STRATEGY", default="lock_table")
# Our own retries of contended writes (transaction conflicts, lost slot races).
BOOKING_MAX_RETRIES = env.int("BOOKING_MAX_RETRIES", default=10)
BOOKING_RETRY_BASE_DELAY = env.float("BOOKING_RETRY_BASE_DELAY", default=0.01)
BOOKING_RETRY_MAX_DELAY = env.float("BOOKING_RETRY_MAX_DELAY", default=0.5)
# Test-only: widen the unguarded strategy's read-then-write window (milliseconds).
BOOKING_UNGUARDED_RACE_DELAY_MS = env.float("BOOKING_UNGUARDED_RACE_DELAY_MS", default=0.0)
# Test-only: switch off recognising one's own write after an ambiguous resend (the control
# that proves the fault checks can see a false "already registered").
BOOKING_DISABLE_AMBIGUITY_CHECKS = env.bool("BOOKING_DISABLE_AMBIGUITY_CHECKS", default=False)

LOGGING = {
    "version": 1,
    "disable_existing_loggers": False,
    "handlers": {"console": {"class": "logging.StreamHandler"}},
    "root": {"handlers": ["console"], "level": env("LOG_LEVEL", default="INFO")},
    "loggers": {"botocore": {"level": "WARNING"}, "urllib3": {"level": "WARNING"}},
}

# --- Web signup: e-mail and signed links (booking/views.py, booking/links.py) ---------
# EMAIL_URL picks the backend: consolemail:// (default: printed to the server's output),
# filemail:////abs/dir (4 slashes), smtp://host:25, smtp+tls://user:pass@host:587,
# smtp+ssl://user:pass@host:465.
# A booking never depends on the mail: its e-mail is an outbox row written with the seat,
# sent right after the request and by `manage.py booking_worker`; failures are replayed.
_email = env.email_url("EMAIL_URL", default="consolemail://")
EMAIL_BACKEND = _email["EMAIL_BACKEND"]
for _key in ("EMAIL_HOST", "EMAIL_PORT", "EMAIL_HOST_USER", "EMAIL_HOST_PASSWORD",
             "EMAIL_USE_TLS", "EMAIL_USE_SSL", "EMAIL_FILE_PATH"):
    if _email.get(_key) not in (None, ""):
        globals()[_key] = _email[_key]
DEFAULT_FROM_EMAIL = env("DEFAULT_FROM_EMAIL", default="Event booking <noreply@localhost>")
# Seconds before an unresponsive SMTP server is given up on (the signup waits for it).
EMAIL_TIMEOUT = env.int("EMAIL_TIMEOUT", default=10)
# The site's address, for links in e-mails sent by the booking worker (e-mails sent right
# after a web request link to the address that request came in on).
BOOKING_SITE_URL = env("BOOKING_SITE_URL", default="http://127.0.0.1:8000")
# Seconds a booking_worker waits between looks at the outbox.
BOOKING_WORKER_INTERVAL = env.float("BOOKING_WORKER_INTERVAL", default=5.0)
# Seconds a signup form's one-time token stays valid (then the form asks for a reload).
BOOKING_FORM_MAX_AGE = env.int("BOOKING_FORM_MAX_AGE", default=24 * 3600)

# --- Capacity checks (manage.py check_capacity --repair) -------------------------------
# Seconds a repair's lease lasts; a crashed repair blocks others for at most this long.
BOOKING_REPAIR_LEASE_SECONDS = env.float("BOOKING_REPAIR_LEASE_SECONDS", default=300.0)

# --- Exactly-once requests and e-mails (docs/exactly-once.md) -------------------------
# Seconds after which an e-mail send's `started` row counts as crashed (another may send).
BOOKING_REQUEST_STALE_SECONDS = env.float("BOOKING_REQUEST_STALE_SECONDS", default=30.0)
# Days request rows and e-mail history are kept (a repeat after that runs as new; TTL cleans up).
BOOKING_REQUEST_HISTORY_DAYS = env.float("BOOKING_REQUEST_HISTORY_DAYS", default=7.0)
# Seconds a `replay_failed` run's lease lasts (a crashed run blocks others this long).
BOOKING_REPLAY_LEASE_SECONDS = env.float("BOOKING_REPLAY_LEASE_SECONDS", default=300.0)
