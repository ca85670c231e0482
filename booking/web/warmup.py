"""A web worker's warm-up, before it takes its first request (gunicorn's
``post_worker_init``, config/gunicorn.conf.py).

A worker that has just started pays for its first requests: the DynamoDB client is made
(botocore loads its service model), the first connections to the store are opened, the
URL routes import every view, and each template is compiled on first use. Paid by the
first people of a drop, this is seconds (docs/scaling.md). Here the worker pays it
itself, with nothing written:

1. the store is reached as a page reaches it (``BookingService.warm_up``: the event
   page's read of an id no event has). While the store cannot answer, the worker logs
   why at each attempt and keeps trying: it takes no traffic until it can (the other
   workers serve). When the store says the tables do not exist, that is a deployment's
   mistake, not a moment's: ``NotReady`` is raised, and gunicorn stops with its message.
2. the public pages' and e-mails' templates are compiled (Django's cached loader keeps
   them; the admin's are left to the organizers' first visit);
3. an event page and an API event of that unknown id are asked of the application
   itself, from as many threads at once as the worker has (each opens the store
   connection its thread will use): both answer 404 when warm.
"""
import logging
import sys
import threading
import time
from concurrent.futures import ThreadPoolExecutor
from io import BytesIO
from pathlib import Path
from urllib.parse import urlsplit

from django.template import engines
from django.template.loader import get_template

from booking.errors import BookingContention, StoreUnavailable
from booking.service import WARM_UP_EVENT_ID
from booking.wiring import get_booking_service, web_settings

PATHS = (f"/events/{WARM_UP_EVENT_ID}/", f"/api/v1/events/{WARM_UP_EVENT_ID}/")
RETRY_SECONDS = 1.0


class NotReady(Exception):
    """The store says the deployment's tables do not exist: no retry will help."""


def warm_up(app, *, threads: int, log, alive=lambda: True, notify=lambda: None,
            clock=time.monotonic, sleep=time.sleep) -> dict | None:
    """Warm this worker (the module's steps) and return what was done; None when the
    worker was told to stop before the store answered. ``app`` is the WSGI application,
    ``log`` a logger, ``notify`` tells gunicorn the worker is alive while it waits."""
    started = clock()
    service = get_booking_service()  # the store's client is made here
    attempts = 0
    while True:
        attempts += 1
        try:
            service.warm_up()
            break
        except StoreUnavailable as error:
            if error.missing_table:
                log.error("Warm-up: %s This worker does not start.", error.message)
                raise NotReady(error.message) from error
            log.warning("Warm-up: the store does not answer (%s); this worker takes no "
                        "traffic until it does. Trying again.", error.message)
        except BookingContention as error:
            log.warning("Warm-up: the store is busy (%s); this worker takes no traffic "
                        "until it answers. Trying again.", error.message)
        notify()
        if not alive():
            return None
        sleep(RETRY_SECONDS)
    reached = clock() - started
    templates = compile_templates()
    statuses = ask_the_app(app, max(1, threads))
    done = {"store_attempts": attempts, "store_seconds": round(reached, 3),
            "templates": templates, "requests": statuses,
            "seconds": round(clock() - started, 3)}
    log.info("Warm-up done in %.2f s: store reached in %.2f s (%d attempt(s)), %d templates "
             "compiled, %d requests through the app %s", done["seconds"], reached, attempts,
             templates, sum(statuses.values()), statuses)
    return done


PUBLIC_TEMPLATES = ("base.html", "booking/")  # the public pages' and e-mails' (not the admin's)


def compile_templates() -> int:
    """Compile the public pages' and e-mails' templates from the project's template
    directories (the cached loader keeps each): how many."""
    count = 0
    for engine in engines.all():
        for directory in getattr(engine, "template_dirs", ()):
            root = Path(directory)
            for path in sorted(root.rglob("*.html")) + sorted(root.rglob("*.txt")):
                name = path.relative_to(root).as_posix()
                if name == PUBLIC_TEMPLATES[0] or name.startswith(PUBLIC_TEMPLATES[1]):
                    get_template(name, using=engine.name)
                    count += 1
    return count


def ask_the_app(app, threads: int) -> dict:
    """Each of ``PATHS`` asked of ``app`` from ``threads`` threads at once: the count of
    answers by "path status"."""
    counts: dict[str, int] = {}
    lock = threading.Lock()

    def one(_):
        for path in PATHS:
            status = _get(app, path)
            key = f"{path.split('/')[1]} {status}"
            with lock:
                counts[key] = counts.get(key, 0) + 1

    # Django logs each 404 as a warning: these are the warm-up's own, not a visitor's.
    quiet = logging.getLogger("django.request")
    level = quiet.level
    quiet.setLevel(logging.ERROR)
    try:
        with ThreadPoolExecutor(threads) as pool:
            list(pool.map(one, range(threads)))
    finally:
        quiet.setLevel(level)
    return counts


def _get(app, path: str) -> str:
    """GET ``path`` of the WSGI ``app`` as a request to the site's own address: its
    status code."""
    site = urlsplit(web_settings().site_url)
    https = site.scheme == "https"
    environ = {"REQUEST_METHOD": "GET", "PATH_INFO": path, "QUERY_STRING": "",
               "SERVER_NAME": site.hostname or "localhost",
               "SERVER_PORT": str(site.port or (443 if https else 80)),
               "HTTP_HOST": site.netloc, "SERVER_PROTOCOL": "HTTP/1.1",
               "REMOTE_ADDR": "127.0.0.1", "wsgi.version": (1, 0),
               "wsgi.url_scheme": site.scheme or "http", "wsgi.input": BytesIO(b""),
               "wsgi.errors": sys.stderr, "wsgi.multithread": True,
               "wsgi.multiprocess": True, "wsgi.run_once": False}
    seen = []
    body = app(environ, lambda status, headers, exc_info=None: seen.append(status))
    try:
        for _ in body:
            pass
    finally:
        close = getattr(body, "close", None)
        if close is not None:
            close()
    return seen[0].split(" ", 1)[0] if seen else "?"
