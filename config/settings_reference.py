"""Every environment variable the project reads, defined once.

``config/settings.py`` reads its environment only through :func:`reader` (a name missing
here is a ``KeyError``), ``booking/checks.py`` takes the numbers it checks from here
(``positive=True``), and ``.env.example`` and the docs' settings page
(``docs/reference/settings.md``) are written from here::

    python -m config.settings_reference --write     # or: make settings-files
    python -m config.settings_reference --check     # exit 1 if either file is stale

``tests/config/test_settings_reference.py`` fails when one of them names a variable this
list does not, or this list one that nothing reads.
"""
from __future__ import annotations

import argparse
import sys
import textwrap
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
ENV_EXAMPLE = ROOT / ".env.example"
SETTINGS_PAGE = ROOT / "docs" / "reference" / "settings.md"

COMPUTED = object()  # a default settings.py works out (from DEBUG, BASE_DIR, ...)


@dataclass(frozen=True)
class Setting:
    name: str
    default: object  # the value when unset, or COMPUTED (then ``default_text`` says how)
    kind: str  # str | bool | int | float | list | path | db_url | email_url
    description: str
    section: str
    default_text: str = ""  # the default as the docs show it, when not plainly ``default``
    example: str | None = None  # the value .env.example shows (default: the default)
    positive: bool = False  # `manage.py check` refuses 0, negative or infinite (booking.E003)
    read_by: str = "config/settings.py"


S = Setting
DJANGO, DYNAMO, BOOKING, MAIL, EXACTLY_ONCE, WAITLIST, SECURITY, LIMITS, WEBHOOKS, \
    METRICS, RUN, SERVE, GUNICORN, LOCAL = (
        "Django", "DynamoDB", "Booking", "E-mail and the worker", "Exactly once",
        "Waiting list", "Production security", "Abuse limits", "Webhooks",
        "Metrics and logs", "make run", "make serve", "gunicorn", "The local store (DynamoDB Local)")

SETTINGS: tuple[Setting, ...] = (
    # --- Django
    S("SECRET_KEY", COMPUTED, "str",
      "Signs sessions, forms and e-mailed links. With DEBUG off the project refuses to "
      "start without 50+ random characters: "
      "python -c 'import secrets; print(secrets.token_urlsafe(50))'", DJANGO,
      default_text="none (a development key only with DEBUG=true)", example=""),
    S("SECRET_KEY_FALLBACKS", [], "list",
      "Earlier keys still accepted (sessions, e-mailed links) while a rotation settles.",
      DJANGO, example=""),
    S("DEBUG", False, "bool", "Django's debug mode; `make run` and `make dynamodb` set true.",
      DJANGO),
    S("INSTALL_HARNESS", COMPUTED, "bool",
      "Install the project's tools (manage.py torture, bench_booking): with DEBUG, and "
      "always in tests. Never in production.", DJANGO, default_text="the value of DEBUG",
      example="false"),
    S("ALLOWED_HOSTS", ["127.0.0.1", "localhost"], "list", "Host names the site answers to.",
      DJANGO),
    S("DATABASE_URL", COMPUTED, "db_url",
      "Django's own tables only (users, sessions, admin log); events live in DynamoDB.",
      DJANGO, default_text="sqlite:///db.sqlite3", example="sqlite:///db.sqlite3"),
    S("TIME_ZONE", "UTC", "str",
      "Default time zone of new events (an IANA name; each event can have its own).", DJANGO),
    S("LOG_LEVEL", "INFO", "str", "The root logger's level.", DJANGO),
    S("DATA_UPLOAD_MAX_MEMORY_SIZE", 65536, "int",
      "Largest accepted form fields, in bytes (Django's own limit).", DJANGO),
    S("REQUEST_BODY_MAX_BYTES", 131072, "int",
      "A request body larger than this (by its Content-Length) answers 413 before anything "
      "reads it, on every path.", DJANGO),
    S("STATIC_ROOT", COMPUTED, "path",
      "Where `collectstatic` puts the static files that WhiteNoise serves.", DJANGO,
      default_text="var/staticfiles", example="var/staticfiles"),
    S("STATICFILES_BACKEND", "whitenoise.storage.CompressedManifestStaticFilesStorage", "str",
      "Django's static files storage (tests use plain StaticFilesStorage).", DJANGO),
    S("WHITENOISE_USE_FINDERS", COMPUTED, "bool",
      "Serve static files from the app directories without `collectstatic`.", DJANGO,
      default_text="the value of DEBUG", example="false"),
    # --- DynamoDB
    S("DYNAMODB_ENDPOINT_URL", "http://127.0.0.1:8001", "str",
      "The local store that `make run` starts (DynamoDB Local); empty means AWS's endpoint "
      "for AWS_REGION.", DYNAMO),
    S("AWS_REGION", "us-east-1", "str", "DynamoDB's region.", DYNAMO),
    S("DYNAMODB_TABLE_PREFIX", "booking-", "str",
      "Prefix of every table name (several installations can share one account).", DYNAMO),
    S("DYNAMODB_CONNECT_TIMEOUT", 2.0, "float", "Seconds to connect to DynamoDB.", DYNAMO),
    S("DYNAMODB_READ_TIMEOUT", 5.0, "float", "Seconds to wait for DynamoDB's answer.", DYNAMO),
    S("DYNAMODB_RETRY_MODE", "standard", "str",
      "botocore's retry mode (standard, adaptive, legacy) for throttles and 5xx.", DYNAMO),
    S("DYNAMODB_MAX_ATTEMPTS", 4, "int", "botocore's attempts per call.", DYNAMO),
    S("DYNAMODB_MAX_POOL_CONNECTIONS", 64, "int", "HTTP connections per process.", DYNAMO),
    # --- Booking
    S("BOOKING_DEFAULT_STRATEGY", "lock_table", "str",
      "Strategy of new events: aggregate, lock_table, slots, shards or streams "
      "(see Choosing a strategy).", BOOKING),
    S("BOOKING_MAX_RETRIES", 10, "int",
      "Our own bounded retries of contended writes (exponential backoff, full jitter).",
      BOOKING, positive=True),
    S("BOOKING_RETRY_BASE_DELAY", 0.01, "float", "Seconds: the first retry's backoff.",
      BOOKING),
    S("BOOKING_RETRY_MAX_DELAY", 0.5, "float", "Seconds: the longest retry backoff.",
      BOOKING, positive=True),
    S("BOOKING_REQUEST_DEADLINE", 3.0, "float",
      "Seconds a booking, cancellation or re-check may take in all: botocore's retries, "
      "ours and the resolution of a lost answer together. Past it the answer is "
      "\"pending, ask again with the same key\" (API 202, the form's re-check page).",
      BOOKING, positive=True),
    S("BOOKING_QUEUE_DEADLINE", 4.5, "float",
      "Seconds a request that changes something (any POST, PUT, PATCH or DELETE) may have "
      "waited since the proxy in front took it (its X-Request-Start header, set by "
      "config/nginx.conf) before it runs: older, it answers 503 with Retry-After and does "
      "nothing, since its client has likely given up and asked again. Keep it under your "
      "clients' timeout and a little under the proxy's upstream timeout (make serve: "
      "BOOKING_REQUEST_DEADLINE + 2 = 5 s). Without the header (no proxy, runserver) nothing is "
      "checked.", BOOKING, positive=True),
    S("BOOKING_SHED_SECONDS", 1.0, "float",
      "Seconds an event's new bookings are answered \"busy, try again\" (429 with "
      "Retry-After) without a write after the store throttled it.", BOOKING, positive=True),
    S("BOOKING_FORM_MAX_AGE", 86400, "int",
      "Seconds a signup form's one-time token stays valid (then the form asks for a reload).",
      BOOKING, positive=True),
    S("BOOKING_REPAIR_LEASE_SECONDS", 300.0, "float",
      "Seconds a `check_capacity --repair` lease lasts if its holder crashes.", BOOKING,
      positive=True),
    S("BOOKING_DECIDER_INTERVAL", 0.2, "float",
      "Seconds the worker's stream decider waits after catching up (streams strategy).",
      BOOKING, positive=True),
    # --- E-mail and the worker
    S("EMAIL_URL", "consolemail://", "email_url",
      "Where e-mails go: consolemail:// (printed), filemail:////abs/dir (four slashes), "
      "smtp+tls://user:password@smtp.example.com:587, smtp+ssl://... for port 465.", MAIL),
    S("DEFAULT_FROM_EMAIL", "Event booking <noreply@localhost>", "str", "The sender address.",
      MAIL),
    S("EMAIL_TIMEOUT", 10, "int",
      "Seconds to wait for the SMTP server; a failed send never undoes a booking "
      "(`replay_failed` sends it later).", MAIL),
    S("BOOKING_WORKER_INTERVAL", 5.0, "float",
      "Seconds between the booking worker's passes over the waiting lists and access codes.",
      MAIL, positive=True),
    S("BOOKING_OUTBOX_INTERVAL", 0.5, "float",
      "Seconds between the booking worker's looks at the outbox: the e-mails owed, which "
      "only the worker sends (a confirmation goes out within about this long).",
      MAIL, positive=True),
    # --- Exactly once
    S("BOOKING_REQUEST_STALE_SECONDS", 30.0, "float",
      "An e-mail send `started` this long ago without an outcome counts as crashed; another "
      "sender may send it.", EXACTLY_ONCE, positive=True),
    S("BOOKING_REQUEST_HISTORY_DAYS", 7.0, "float",
      "Days request rows and e-mail send history are kept (then TTL deletes them).",
      EXACTLY_ONCE, positive=True),
    S("BOOKING_REPLAY_LEASE_SECONDS", 300.0, "float",
      "Seconds a `replay_failed` run's lease lasts.", EXACTLY_ONCE, positive=True),
    # --- Waiting list
    S("BOOKING_WAITLIST_OFFER_SECONDS", 86400.0, "float",
      "Seconds an offer holds a freed seat for the first person in line.", WAITLIST,
      positive=True),
    S("BOOKING_WAITLIST_CONFIRM_SECONDS", 172800.0, "float",
      "Seconds a confirmation link joins the line (at most BOOKING_REQUEST_HISTORY_DAYS).",
      WAITLIST, positive=True),
    # --- Production security
    S("SITE_URL", COMPUTED, "str",
      "The public origin every link in e-mails is built from (never the request's Host).",
      SECURITY, default_text="https:// + the first ALLOWED_HOSTS entry "
      "(http://127.0.0.1:8000 with DEBUG)", example="https://events.example.com"),
    S("SECURE_SSL_REDIRECT", COMPUTED, "bool", "Redirect HTTP to HTTPS.", SECURITY,
      default_text="true when DEBUG is off", example="true"),
    S("SESSION_COOKIE_SECURE", COMPUTED, "bool", "Session cookie over HTTPS only.", SECURITY,
      default_text="true when DEBUG is off", example="true"),
    S("CSRF_COOKIE_SECURE", COMPUTED, "bool", "CSRF cookie over HTTPS only.", SECURITY,
      default_text="true when DEBUG is off", example="true"),
    S("SECURE_HSTS_SECONDS", COMPUTED, "int", "HSTS max-age (0: no HSTS).", SECURITY,
      default_text="31536000 (a year) when DEBUG is off, else 0", example="31536000"),
    S("SECURE_HSTS_INCLUDE_SUBDOMAINS", COMPUTED, "bool", "HSTS for subdomains too.", SECURITY,
      default_text="true when DEBUG is off", example="true"),
    S("SECURE_HSTS_PRELOAD", COMPUTED, "bool", "HSTS preload.", SECURITY,
      default_text="true when DEBUG is off", example="true"),
    S("CSRF_TRUSTED_ORIGINS", COMPUTED, "list", "Origins allowed to post forms.", SECURITY,
      default_text="SITE_URL's origin", example="https://events.example.com"),
    S("SECURE_PROXY_SSL_HEADER", [], "list",
      "Behind a TLS-terminating proxy that always sets it: HTTP_X_FORWARDED_PROTO,https.",
      SECURITY, example="HTTP_X_FORWARDED_PROTO,https"),
    S("TRUSTED_PROXY_COUNT", 0, "int",
      "Proxies you run in front that append to X-Forwarded-For (0: use the peer address); "
      "the client address decides rate limits.", SECURITY),
    # --- Abuse limits
    S("BOOKING_SIGNUP_RATE", "200/10m", "str",
      "Signup form posts per client address (N/period like 200/10m, 5/h, 100/d, or off): "
      "one address can be a whole office, campus or the desk at the venue.", LIMITS),
    S("BOOKING_CANCEL_RATE", "100/10m", "str", "Cancellations per client address.", LIMITS),
    S("BOOKING_SIGNUP_EMAIL_RATE", "5/h", "str",
      "Signups per e-mail address from one client address (a form counts once).", LIMITS),
    S("BOOKING_RESEND_RATE", "50/10m", "str",
      "\"Resend my confirmation\" requests per client address.", LIMITS),
    S("BOOKING_RESEND_MAIL_RATE", "3/h", "str",
      "Confirmations resent per registration (then the form sends nothing).", LIMITS),
    S("BOOKING_ACCESS_CODE_RATE", "10/10m", "str",
      "Bookings with a wrong access code per client address (a right code gives its "
      "attempt back).", LIMITS),
    S("ADMIN_LOGIN_RATE", "10/15m", "str",
      "Admin login attempts per address and per user name, each reserved before the "
      "password check (a right password gives it back).", LIMITS),
    S("API_TOKEN_RATE", "600/m", "str", "JSON API requests per organizer token.", LIMITS),
    # --- Webhooks
    S("WEBHOOK_INTERVAL", 1.0, "float",
      "Seconds between the worker's looks for webhook deliveries due.", WEBHOOKS,
      positive=True),
    S("WEBHOOK_DELIVERY_DEADLINE", COMPUTED, "float",
      "Seconds one delivery attempt may take as a whole (connect, TLS, send, the answer's "
      "headers): a receiver still answering then has failed.", WEBHOOKS,
      default_text="WEBHOOK_TIMEOUT_SECONDS, else 10", example="10", positive=True),
    S("WEBHOOK_TIMEOUT_SECONDS", 10.0, "float",
      "The name WEBHOOK_DELIVERY_DEADLINE had before; read only when that is unset.",
      WEBHOOKS, example=""),
    S("WEBHOOK_ALLOWED_HOSTS", [], "list",
      "Hosts a webhook may reach although they are not public addresses, http:// too: for "
      "development only (e.g. 127.0.0.1,localhost); `manage.py check` warns when set with "
      "DEBUG off.", WEBHOOKS, example=""),
    S("WEBHOOK_RETRY_BASE_SECONDS", 10.0, "float",
      "Backoff after failed attempt n: base x 2^(n-1) seconds (less up to a fifth) ...",
      WEBHOOKS, positive=True),
    S("WEBHOOK_RETRY_MAX_SECONDS", 3600.0, "float", "... at most this many seconds.",
      WEBHOOKS, positive=True),
    S("WEBHOOK_DISABLE_AFTER_SECONDS", 86400.0, "float",
      "An endpoint whose deliveries all failed this long is disabled (the admin shows why).",
      WEBHOOKS, positive=True),
    # --- Metrics and logs
    S("METRICS_ENABLED", False, "bool", "The Prometheus endpoint /metrics (off: 404).",
      METRICS),
    S("METRICS_ALLOWED_IPS", ["127.0.0.1", "::1"], "list",
      "TCP peers (addresses or CIDR networks, never X-Forwarded-For) that may scrape it; "
      "a request that came through a proxy needs the token.",
      METRICS),
    S("METRICS_BEARER_TOKEN", "", "str",
      "Or a request with Authorization: Bearer <token> may (empty: no token).", METRICS),
    S("METRICS_BACKLOG_SECONDS", 60.0, "float",
      "Seconds between two counts of the outbox backlog (a Scan).", METRICS),
    S("LOG_JSON", False, "bool",
      "One JSON object per log line, with the HTTP request id and each booking's request id.",
      METRICS),
    S("BOOKING_ENVIRONMENT", "production", "str",
      "The installation's name on AWS (the template's Environment; the outbox metric's "
      "dimension).", METRICS),
    S("PROMETHEUS_MULTIPROC_DIR", "", "str",
      "Under gunicorn with several workers: an empty directory per start, so a scrape sums "
      "them (read by prometheus_client).", METRICS, example="/run/booking/prometheus",
      read_by="prometheus_client"),
    # --- make run
    S("RUN_ADDRESS", "127.0.0.1:8000", "str",
      "Where `make run`'s development server listens.", RUN, read_by="scripts/run.sh"),
    # --- make serve
    S("SERVE_ADDRESS", "127.0.0.1:8000", "str", "Where nginx listens.", SERVE,
      read_by="scripts/serve.sh"),
    S("SERVE_APP_ADDRESS", "127.0.0.1:8001", "str", "Where gunicorn listens behind it.", SERVE,
      read_by="scripts/serve.sh"),
    S("SERVE_CLIENT_TIMEOUT", 10, "int",
      "Seconds for a whole request header (slow clients closed).", SERVE,
      read_by="scripts/serve.sh"),
    S("SERVE_RUNTIME", "var/serve", "str", "nginx's config, pid and logs.", SERVE,
      read_by="scripts/serve.sh"),
    S("SERVE_WARM_TIMEOUT", 60, "int",
      "Seconds nginx waits for every gunicorn worker to warm up before it opens anyway.",
      SERVE, read_by="scripts/serve.sh"),
    # --- gunicorn
    S("GUNICORN_BIND", "127.0.0.1:8000", "str", "Where gunicorn listens.", GUNICORN,
      read_by="config/gunicorn.conf.py"),
    S("WEB_CONCURRENCY", COMPUTED, "int", "Worker processes.", GUNICORN,
      default_text="2 x CPUs + 1, at most 9", example="", read_by="config/gunicorn.conf.py"),
    S("GUNICORN_THREADS", 8, "int", "Threads per worker.", GUNICORN,
      read_by="config/gunicorn.conf.py"),
    S("GUNICORN_TIMEOUT", 30, "int", "Seconds a worker may be silent before a restart.",
      GUNICORN, read_by="config/gunicorn.conf.py"),
    S("GUNICORN_GRACEFUL_TIMEOUT", 30, "int", "Seconds to finish requests on restart.",
      GUNICORN, read_by="config/gunicorn.conf.py"),
    S("GUNICORN_KEEPALIVE", 5, "int", "Seconds a kept-alive connection waits.", GUNICORN,
      read_by="config/gunicorn.conf.py"),
    S("GUNICORN_MAX_REQUESTS", 2000, "int", "Requests before a worker restarts.", GUNICORN,
      read_by="config/gunicorn.conf.py"),
    S("GUNICORN_MAX_REQUESTS_JITTER", 200, "int", "Randomness added to that number.",
      GUNICORN, read_by="config/gunicorn.conf.py"),
    S("GUNICORN_BACKLOG", 16, "int",
      "Connections waiting to be accepted: a short line, so a full pool answers 503 at "
      "once (nginx) rather than queueing.", GUNICORN, read_by="config/gunicorn.conf.py"),
    S("GUNICORN_WORKER_CONNECTIONS", 0, "int",
      "Connections a worker takes at once (0: as many as GUNICORN_THREADS).", GUNICORN,
      read_by="config/gunicorn.conf.py"),
    S("FORWARDED_ALLOW_IPS", "127.0.0.1", "str",
      "Proxies gunicorn takes X-Forwarded-* from.", GUNICORN, read_by="config/gunicorn.conf.py"),
    S("GUNICORN_ACCESS_LOG", "-", "str", "Access log file (-: standard output).", GUNICORN,
      read_by="config/gunicorn.conf.py"),
    S("GUNICORN_LOG_LEVEL", "info", "str", "gunicorn's log level.", GUNICORN,
      read_by="config/gunicorn.conf.py"),
    # --- The local store
    S("LOCAL_DYNAMODB_DATA_DIR", "var/dynamodb", "str",
      "Where DynamoDB Local keeps its data (relative to the project; empty: in memory).",
      LOCAL, read_by="localdynamo"),
    S("LOCAL_DYNAMODB_FAULTS", "", "str",
      "Fault spec: a proxy in front of DynamoDB Local that throttles, fails, delays or drops "
      "answers.", LOCAL,
      example="throttle=0.05,lost_response=0.02,error500=0.01,delay_ms=0-20,seed=7",
      read_by="localdynamo"),
    S("LOCAL_DYNAMODB_CAPACITY", "", "str",
      "Capacity spec: the same proxy enforces DynamoDB's per-partition limits.", LOCAL,
      example="partition_wcu=1000,partition_rcu=3000,scale=0.01,burst_s=0",
      read_by="localdynamo"),
    S("DYNAMODB_LOCAL_DIR", "", "str",
      "A DynamoDB Local 3.3.1 you already have (else it is fetched once into ~/.cache/).",
      LOCAL, example="/opt/dynamodb_local", read_by="localdynamo"),
    S("DYNAMODB_LOCAL_JAR", "", "str", "The same, named by its jar.", LOCAL,
      example="/opt/dynamodb_local/DynamoDBLocal.jar", read_by="localdynamo"),
    S("DYNAMODB_LOCAL_JAVA_OPTIONS", "", "str",
      "Extra JVM options for DynamoDB Local (make test sets these two).", LOCAL,
      example="-XX:TieredStopAtLevel=1 -XX:+UseSerialGC", read_by="localdynamo"),
    S("JAVA_HOME", "", "str", "The Java 17+ that runs it (empty: java on the PATH).", LOCAL,
      example="/usr/lib/jvm/java-17-openjdk-amd64", read_by="localdynamo"),
)

BY_NAME = {setting.name: setting for setting in SETTINGS}
SECTIONS = tuple(dict.fromkeys(setting.section for setting in SETTINGS))


def positive_settings() -> tuple[str, ...]:
    """The durations and counts `manage.py check` refuses unless positive and finite."""
    return tuple(setting.name for setting in SETTINGS if setting.positive)


def reader(env):
    """``setting(NAME)`` for config/settings.py: reads NAME through django-environ as its
    kind, with its defined default. A COMPUTED default must be passed (``default=``); any
    other may not, so the definition's default is the one in force."""

    def setting(name: str, **computed):
        definition = BY_NAME[name]
        if (definition.default is COMPUTED) != ("default" in computed):
            raise ValueError(f"{name}: pass default= exactly when its default is computed")
        default = computed["default"] if "default" in computed else definition.default
        if isinstance(default, list):
            default = list(default)
        return getattr(env, definition.kind)(name, default=default)
    return setting


def shown(value: object) -> str:
    """A default as a person would type it into the environment."""
    if value is COMPUTED:
        return ""
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, float) and value.is_integer():
        return str(int(value))
    if isinstance(value, list):
        return ",".join(value)
    return str(value)


def env_example() -> str:
    lines = ["# Generated from config/settings_reference.py (make settings-files): edit there.",
             "# Copy to .env and uncomment what you change. Every variable is optional; the",
             "# defaults run everything locally. Outside `make run` and `make dynamodb`, set",
             "# DEBUG=true for local development: with DEBUG off the project refuses to start",
             "# without a strong SECRET_KEY. All of them: docs/reference/settings.md"]
    for section in SECTIONS:
        lines += ["", f"# --- {section} " + "-" * max(3, 84 - len(section))]
        for setting in SETTINGS:
            if setting.section != section:
                continue
            text = setting.description
            if setting.default_text:
                text += f" Default: {setting.default_text}."
            lines += [f"# {line}" for line in textwrap.wrap(text, 86)]
            value = setting.example if setting.example is not None else shown(setting.default)
            lines.append(f"# {setting.name}={value}")
    return "\n".join(lines) + "\n"


def _cell(text: str) -> str:
    return text.replace("|", "\\|")


def settings_page() -> str:
    lines = ["<!-- Generated from config/settings_reference.py by `make settings-files`: edit "
             "there. -->",
             "# Settings",
             "",
             "Every setting comes from the environment, or from a `.env` file beside "
             "`manage.py` (copy `.env.example` from the repository, which lists the same "
             "variables with their defaults). Every one is optional: the defaults run everything on your "
             "machine. This page, `.env.example`, `config/settings.py` and the system checks "
             "(`manage.py check`) all read one definition, `config/settings_reference.py`, "
             "and a test fails if they disagree.",
             "",
             "With `DEBUG` off (the default outside `make run` and `make dynamodb`) the "
             "project refuses to start without a strong `SECRET_KEY`. On your own machine "
             "put `DEBUG=true` in `.env` or export it.",
             "",
             "Durations and counts marked **checked** must be positive, finite numbers: "
             "`manage.py check` refuses anything else (`booking.E003`).",
             ""]
    for section in SECTIONS:
        lines += [f"## {section}", "", "| variable | default | meaning |", "|---|---|---|"]
        for setting in SETTINGS:
            if setting.section != section:
                continue
            default = setting.default_text or shown(setting.default)
            default = f"`{default}`" if default and not setting.default_text else (
                default or "(empty)")
            meaning = _cell(setting.description)
            if setting.positive:
                meaning += " **checked**"
            if setting.read_by not in ("config/settings.py",):
                meaning += f" (read by `{setting.read_by}`)"
            lines.append(f"| `{setting.name}` | {_cell(default)} | {meaning} |")
        lines.append("")
    return "\n".join(lines)


def stale_files() -> list[Path]:
    return [path for path, text in ((ENV_EXAMPLE, env_example()),
                                    (SETTINGS_PAGE, settings_page()))
            if not path.exists() or path.read_text() != text]


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    group = parser.add_mutually_exclusive_group(required=True)
    group.add_argument("--write", action="store_true", help="write both files")
    group.add_argument("--check", action="store_true", help="exit 1 if either is stale")
    args = parser.parse_args(argv)
    if args.write:
        ENV_EXAMPLE.write_text(env_example())
        SETTINGS_PAGE.parent.mkdir(parents=True, exist_ok=True)
        SETTINGS_PAGE.write_text(settings_page())
        print(f"wrote {ENV_EXAMPLE.relative_to(ROOT)} and {SETTINGS_PAGE.relative_to(ROOT)}")
        return 0
    stale = stale_files()
    for path in stale:
        print(f"{path.relative_to(ROOT)} is stale: run make settings-files", file=sys.stderr)
    return 1 if stale else 0


if __name__ == "__main__":
    sys.exit(main())
