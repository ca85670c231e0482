"""A worker takes traffic only when warm (booking/web/warmup.py, gunicorn's
``post_worker_init`` in config/gunicorn.conf.py): the service built and the store reached
with the event page's own read, every template compiled, a page and an API answer asked of
the application from each of the worker's threads, nothing written. A worker whose store
does not answer logs why and keeps waiting (never takes traffic); tables that do not exist
stop it with that message. In-process, on moto (the unreachable store: a closed port)."""
import runpy
from io import StringIO
from pathlib import Path

import pytest
from django.core.handlers.wsgi import WSGIHandler
from django.core.management import CommandError, call_command
from django.template import engines

from booking.service import WARM_UP_EVENT_ID
from booking.web.warmup import NotReady, warm_up
from booking.wiring import install, service_from_settings
from harness.controls import local_store
from harness.serving import free_port

HOOKS = runpy.run_path(str(Path(__file__).resolve().parents[2] / "config" / "gunicorn.conf.py"))
WRITES = {"PutItem", "UpdateItem", "DeleteItem", "TransactWriteItems", "BatchWriteItem"}


class Log:
    def __init__(self):
        self.lines = []

    def _say(self, level):
        return lambda message, *args: self.lines.append((level, message % args))

    def __getattr__(self, level):
        return self._say(level)


class Worker:
    """What the hook reads of gunicorn's worker."""

    def __init__(self, wsgi, threads=3, alive_for=None):
        self.wsgi, self.log, self.notified = wsgi, Log(), 0
        self.cfg = type("Cfg", (), {"threads": threads})()
        self.alive_for = alive_for

    @property
    def alive(self):
        return self.alive_for is None or self.notified < self.alive_for

    def notify(self):
        self.notified += 1


def recorded_calls(store) -> list:
    calls = []
    store.client.meta.events.register(
        "before-parameter-build.dynamodb",
        lambda model=None, params=None, **_: calls.append((model.name, params)))
    return calls


def test_post_worker_init__store_reached_templates_compiled_app_asked_nothing_written(
        dynamo, db):
    calls = recorded_calls(dynamo)
    worker = Worker(WSGIHandler(), threads=3)

    HOOKS["post_worker_init"](worker)

    [(level, done)] = worker.log.lines
    assert level == "info" and done.startswith("Warm-up done")
    # The event page's read, of an id no event has: once to reach the store, then once
    # per thread for the page and once for the API's event, each answered 404.
    assert "{'events 404': 3, 'api 404': 3}" in done
    reads = [p for name, p in calls if name == "GetItem"
             and p["Key"] == {"event_id": {"S": WARM_UP_EVENT_ID}}]
    assert len(reads) == 1 + 3 + 3
    assert not [name for name, _ in calls if name in WRITES]
    cached = {name for loader in engines["django"].engine.template_loaders
              for name in getattr(loader, "get_template_cache", {})}
    assert {"booking/event_detail.html", "booking/booked.html", "booking/error.html",
            "booking/in_progress.html"} <= cached


def test_warm_up__store_unreachable__says_why_and_never_asks_the_app(settings, db):
    settings.BOOKING_REQUEST_DEADLINE = 0.5
    store = local_store(f"http://127.0.0.1:{free_port()}", table_prefix="w-",
                        max_attempts=1)
    install(service_from_settings(store=store))
    asked = []
    worker = Worker(lambda *args: asked.append(args), alive_for=2)

    done = warm_up(worker.wsgi, threads=2, log=worker.log, alive=lambda: worker.alive,
                   notify=worker.notify, sleep=lambda seconds: None)

    assert done is None and asked == []  # stopped while waiting: no traffic taken
    assert [level for level, _ in worker.log.lines] == ["warning", "warning"]
    assert all("does not answer" in line and "takes no traffic" in line
               for _, line in worker.log.lines)


def test_warm_up__tables_missing__the_worker_does_not_start(dynamo, db):
    install(service_from_settings(store=dynamo.with_prefix("missing-")))
    worker = Worker(WSGIHandler())

    with pytest.raises(NotReady, match="tables do not exist"):
        HOOKS["post_worker_init"](worker)
    assert worker.log.lines[0][0] == "error"


def test_booking_worker__tables_missing__stops_with_the_message(dynamo):
    install(service_from_settings(store=dynamo.with_prefix("missing-")))
    with pytest.raises(CommandError, match="tables do not exist"):
        call_command("booking_worker", "--no-decider", stdout=StringIO(), stderr=StringIO())

