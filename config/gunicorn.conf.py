"""gunicorn settings for production: `make serve`, or
`gunicorn -c config/gunicorn.conf.py` (docs/deployment.md).

Threaded workers (gthread): a booking spends most of its time waiting on DynamoDB, so
each process serves many requests at once. Run it behind a buffering reverse proxy
(nginx): the proxy absorbs slow clients, so a thread is only held while Django works.
Each value can be changed by the environment variable named beside it, or by
GUNICORN_CMD_ARGS / command-line flags, which gunicorn applies on top of this file.
"""
import multiprocessing
import os


def _int(name: str, default: int) -> int:
    return int(os.environ.get(name, default))


wsgi_app = "config.wsgi:application"
# Where the proxy reaches the app; 0.0.0.0:8000 only if the proxy runs on another host.
bind = os.environ.get("GUNICORN_BIND", "127.0.0.1:8000")
worker_class = "gthread"
workers = _int("WEB_CONCURRENCY", min(2 * multiprocessing.cpu_count() + 1, 9))
threads = _int("GUNICORN_THREADS", 8)
# A full pool answers 503 at once rather than queueing past a booking's deadline: a worker
# takes no more connections than it has threads (gthread would otherwise accept up to
# 1,000 and queue their requests inside), and the kernel holds only a short line of
# connections not yet taken; beyond it nginx's connect times out in a second and answers
# 503 with Retry-After (config/nginx.conf, docs/scaling.md).
worker_connections = _int("GUNICORN_WORKER_CONNECTIONS", 0) or threads
# Seconds a worker may be silent before it is restarted (a request stuck that long is
# lost anyway: DynamoDB calls time out after DYNAMODB_READ_TIMEOUT and bounded retries).
timeout = _int("GUNICORN_TIMEOUT", 30)
graceful_timeout = _int("GUNICORN_GRACEFUL_TIMEOUT", 30)
keepalive = _int("GUNICORN_KEEPALIVE", 5)
# Restart workers now and then, so a slow leak can never grow without bound.
max_requests = _int("GUNICORN_MAX_REQUESTS", 2000)
max_requests_jitter = _int("GUNICORN_MAX_REQUESTS_JITTER", 200)
backlog = _int("GUNICORN_BACKLOG", 16)
# Request-line and header limits. The line's is gunicorn's largest, above what nginx's
# header buffer (8k, config/nginx.conf) passes: nginx answers a longer one itself (a
# problem+json 414 under /api/), so gunicorn's HTML 414 is never what a client meets.
limit_request_line = 8190
limit_request_fields = 100
limit_request_field_size = 8190
# Only these addresses may set X-Forwarded-Proto/-For for gunicorn (the proxy's).
forwarded_allow_ips = os.environ.get("FORWARDED_ALLOW_IPS", "127.0.0.1")
accesslog = os.environ.get("GUNICORN_ACCESS_LOG", "-")
# The access log never holds a link's secret (/cancel/<token>/, ...): redacted.
logger_class = "config.gunicorn_logging.RedactingLogger"
errorlog = "-"
loglevel = os.environ.get("GUNICORN_LOG_LEVEL", "info")
# Load the app before forking: a configuration error stops the master at once, and
# workers share the loaded code.
preload_app = True


def post_worker_init(worker):
    """Take traffic only when warm: the store's client made and reached, the public
    templates compiled, a page and an API answer asked of the app from every thread
    (booking/web/warmup.py). While the store cannot answer, the worker logs why and waits
    (the other workers serve); when the store says the tables do not exist, gunicorn
    stops with that message."""
    from booking.web.warmup import warm_up

    warm_up(worker.wsgi, threads=worker.cfg.threads, log=worker.log,
            alive=lambda: worker.alive, notify=worker.notify)
    # scripts/serve.sh opens the front door (starts nginx) once every worker has said so.
    warm_dir = os.environ.get("GUNICORN_WARM_DIR")
    if warm_dir:
        with open(os.path.join(warm_dir, str(os.getpid())), "w"):
            pass
