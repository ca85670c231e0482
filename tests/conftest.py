"""Fixtures: an in-process moto store for unit tests, a real embedded server for races."""
import uuid
from urllib.parse import urlencode

import pytest
from django.test import Client
from moto import mock_aws

from booking import waiting_list, wiring
from booking.dynamo.client import reset_clients
from booking.dynamo.provision import ensure_tables
from booking.wiring import get_booking_service, reset_services
from harness.controls import control_service
from localdynamo import process as server_process
from localdynamo.faults import FaultInjector, FaultSpec
from localdynamo.proxy import FaultProxy

GUARDED = ("aggregate", "lock_table", "slots")


@pytest.fixture
def dynamo(settings, monkeypatch):
    """A fresh in-process moto DynamoDB with all tables created."""
    for name in ("AWS_ACCESS_KEY_ID", "AWS_SECRET_ACCESS_KEY"):
        monkeypatch.setenv(name, "testing")
    settings.DYNAMODB_ENDPOINT_URL = ""
    settings.DYNAMODB_TABLE_PREFIX = f"t{uuid.uuid4().hex[:8]}-"
    with mock_aws():
        reset_clients()
        use_test_service()
        ensure_tables(wait=False)
        yield
        waiting_list.flush()  # offers made right after a cancellation, while the store exists
    reset_clients()
    reset_services()


def use_test_service(**controls):
    """Make this process's service the test graph: the product's strategies plus the
    unguarded control (``harness.controls.control_service``), built from the settings."""
    service = control_service(**controls)
    wiring.install(service)
    return service


@pytest.fixture
def service(dynamo):
    return get_booking_service()


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


@pytest.fixture(scope="session")
def local_server():
    """One DynamoDB Local process shared by the whole session (tests use their own prefix)."""
    server = start_server()
    yield server
    stop_server(server)


@pytest.fixture
def server_store(local_server, settings):
    """Point this process at the running server with a fresh set of tables."""
    settings.DYNAMODB_ENDPOINT_URL = local_server.url
    settings.DYNAMODB_TABLE_PREFIX = f"c{uuid.uuid4().hex[:8]}-"
    reset_clients()
    use_test_service()
    ensure_tables()
    yield local_server
    waiting_list.flush()
    reset_clients()
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
def client():
    return BrowserFormClient()


@pytest.fixture(autouse=True)
def mail_sent_before_teardown():
    """E-mails go out on a background thread: let them finish before the store goes away."""
    yield
    from booking import mail

    mail.flush()
