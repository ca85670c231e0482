"""Fixtures: an in-process moto store for unit tests, a real embedded server for races."""
import contextlib
import copy
import os
import threading
import uuid
from urllib.parse import urlencode

import pytest
from django.test import Client
from moto import mock_aws
from moto.core.botocore_stubber import BotocoreStubber

from booking import wiring
from booking.waitlist import engine as waitlist_engine
from booking.dynamo.provision import ensure_tables
from booking.wiring import get_booking_service, reset_services
from harness.controls import control_service, local_store
from tests import conformance
from localdynamo import process as server_process
from localdynamo.faults import FaultInjector, FaultSpec
from localdynamo.proxy import FaultProxy

GUARDED = conformance.AT_ONCE  # the strategies that answer at once (tests/conformance.py)


def pytest_configure(config):
    """Every DynamoDB Local the tests start (dozens, most for under a minute) compiles with
    the JVM's quick compiler only: the optimizing one costs more CPU than a test-sized run
    gains from it (measured: 600 bookings from 8 threads, the JVM's CPU 11.4 s -> 5.4 s;
    2,400 bookings, 25.8 s -> 14.7 s). The JVM says so on stderr ("Picked up ...")."""
    os.environ.setdefault("JAVA_TOOL_OPTIONS", "-XX:TieredStopAtLevel=1")


@pytest.fixture
def dynamo(monkeypatch):
    """A fresh in-process moto DynamoDB with all tables created; this process's service is
    the test graph on it. Yields the store."""
    for name in ("AWS_ACCESS_KEY_ID", "AWS_SECRET_ACCESS_KEY"):
        monkeypatch.setenv(name, "testing")
    # moto's backend is not thread-safe (a transaction deep-copies the tables while the
    # background e-mail or offer thread deletes a row): it answers one request at a time.
    monkeypatch.setattr(BotocoreStubber, "__call__", _one_at_a_time(BotocoreStubber.__call__))
    with mock_aws():
        store = local_store(table_prefix=MOTO_PREFIX)
        use_test_service(store)
        _fresh_tables(store)
        yield store
        waitlist_engine.flush()  # offers made right after a cancellation, while the store exists
    reset_services()


# Every moto test has the same tables (its mock is its own, so no prefix need differ).
MOTO_PREFIX = "t-"
_EMPTY_TABLES: dict = {}


def _fresh_tables(store) -> None:
    """Every table, empty, as ``ensure_tables`` makes them: made once per process, then
    copied into each test's fresh mock (24 requests a test, a fifth of a second, before)."""
    from moto.core import DEFAULT_ACCOUNT_ID
    from moto.dynamodb.models import dynamodb_backends

    backend = dynamodb_backends[DEFAULT_ACCOUNT_ID][store.client.meta.region_name]
    if not _EMPTY_TABLES:
        ensure_tables(store, wait=False)
        _EMPTY_TABLES.update(copy.deepcopy(backend.tables))
    else:
        backend.tables.update(copy.deepcopy(_EMPTY_TABLES))


def _one_at_a_time(handle):
    lock = threading.RLock()

    def serialized(self, event_name, request, **kwargs):
        with lock:
            return handle(self, event_name, request, **kwargs)
    return serialized


def use_test_service(store=None, **controls):
    """Make this process's service the test graph: the product's strategies plus the
    unguarded control (``harness.controls.control_service``) on ``store`` (default: the
    current service's store)."""
    service = control_service(store=store, **controls)
    wiring.install(service)
    return service



# The address the test DNS gives every name under example.com (a public one: nothing connects
# to it, since tests that register such names fake the sending).
EXAMPLE_ADDRESS = "93.184.215.14"


@pytest.fixture(autouse=True)
def test_dns(monkeypatch):
    """Webhook URLs are resolved (booking/webhooks/addresses.py), and tests reach no DNS
    server: names under example.com resolve to a public address; others as the system says
    (``localhost`` from /etc/hosts)."""
    from booking.webhooks import addresses

    system = addresses.system_resolver

    def resolve(host, port):
        if host == "example.com" or host.endswith(".example.com"):
            return [EXAMPLE_ADDRESS]
        return system(host, port)

    monkeypatch.setattr(addresses, "system_resolver", resolve)


@pytest.fixture
def service(dynamo):
    return get_booking_service()


@pytest.fixture
def default_organizer(db):
    """The one organizer (SQL): commands and admin forms that create events without
    naming one give them to it."""
    from tests.organizers.helpers import organizer

    return organizer()


def start_server(*extra_args):
    """Start DynamoDB Local (`manage.py dynamodb_local`) on a free port (localdynamo/process.py).

    The server keeps its data in memory unless ``extra_args`` name a ``--data-dir``.
    """
    return server_process.start(*extra_args)


def stop_server(server):
    server.stop()


def start_fault_proxy(server, spec=""):
    """A fault proxy in this process in front of ``server`` (localdynamo/proxy.py).

    Its ``url`` serves DynamoDB with the spec's faults; ``injector`` scripts more.
    """
    return FaultProxy(server.url, FaultInjector(FaultSpec.parse(spec))).start()


@contextlib.contextmanager
def proxied_tables(server, prefix: str):
    """A fault proxy in front of ``server`` and fresh tables behind it (named ``prefix``
    and a random part): (proxy, store); after the block, this process's services are
    dropped and the proxy stopped."""
    proxy = start_fault_proxy(server)
    store = local_store(proxy.url, table_prefix=f"{prefix}{uuid.uuid4().hex[:8]}-")
    ensure_tables(store)
    try:
        yield proxy, store
    finally:
        reset_services()
        proxy.stop()


@pytest.fixture(scope="session")
def local_server():
    """One DynamoDB Local process shared by the whole session (tests use their own prefix)."""
    server = start_server()
    yield server
    stop_server(server)


@pytest.fixture
def server_store(local_server):
    """This process's service on the running server, with a fresh set of tables (its own
    prefix: ``get_booking_service().store.table_prefix``). Yields the server."""
    store = local_store(local_server.url, table_prefix=f"c{uuid.uuid4().hex[:8]}-")
    use_test_service(store)
    ensure_tables(store)
    yield local_server
    waitlist_engine.flush()
    reset_services()


FORM_URLENCODED = "application/x-www-form-urlencoded"


class BrowserFormClient(Client):
    """Django's test client, posting a dict the way a browser posts a form without files
    (urlencoded): the public pages refuse multipart bodies."""

    def post(self, path, data=None, content_type=FORM_URLENCODED, **extra):
        if content_type == FORM_URLENCODED and not isinstance(data, (str, bytes)):
            data = urlencode(data or {}, doseq=True)
        return super().post(path, data, content_type=content_type, **extra)


@pytest.fixture
def client(db):
    """The test client, with the SQL database a site always has (sessions, signed-in
    staff, and the limits' refusals recorded for the admin)."""
    return BrowserFormClient()


@pytest.fixture(autouse=True)
def mail_sent_before_teardown():
    """E-mails go out on a background thread: let them finish before the store goes away."""
    yield
    from booking.mail import sender as mail

    mail.flush()
