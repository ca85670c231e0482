"""Fixtures: an in-process moto store for unit tests, a real embedded server for races."""
import os
import subprocess
import sys
import tempfile
import time
import uuid
from pathlib import Path

import pytest
from moto import mock_aws

from booking.dynamo.client import reset_clients
from booking.dynamo.provision import ensure_tables
from booking.service import get_booking_service, reset_services

ROOT = Path(__file__).resolve().parent.parent
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
        reset_services()
        ensure_tables(wait=False)
        yield
    reset_clients()
    reset_services()


@pytest.fixture
def service(dynamo):
    return get_booking_service()


class RunningServer:
    def __init__(self, process, url):
        self.process, self.url = process, url


def start_server(*extra_args):
    """Start `manage.py dynamodb_local` on a free port; its output goes to a log file.

    The server keeps its data in memory unless ``extra_args`` name a ``--data-dir``.
    """
    log = tempfile.NamedTemporaryFile("w+", prefix="dynamodb_local-", suffix=".log", delete=False)
    storage = [] if "--data-dir" in extra_args else ["--in-memory"]
    process = subprocess.Popen(
        [sys.executable, "manage.py", "dynamodb_local", "--port", "0", *storage, *extra_args],
        cwd=ROOT, stdout=log, stderr=subprocess.STDOUT, env={**os.environ, "PYTHONUNBUFFERED": "1"},
    )
    deadline = time.monotonic() + 30
    while time.monotonic() < deadline and process.poll() is None:
        output = Path(log.name).read_text()
        if "listening on" in output:
            url = output.split("listening on ", 1)[1].split()[0]
            server = RunningServer(process, url)
            server.log_path = Path(log.name)
            return server
        time.sleep(0.05)
    process.kill()
    raise RuntimeError(f"dynamodb_local did not start:\n{Path(log.name).read_text()}")


def stop_server(server):
    server.process.terminate()
    server.process.wait(timeout=10)


@pytest.fixture(scope="session")
def local_server():
    """One embedded DynamoDB server process shared by the session's race tests."""
    server = start_server()
    yield server
    stop_server(server)


@pytest.fixture
def racy_local_server():
    """A server whose threads switch every 10 microseconds, to provoke races."""
    server = start_server("--switch-interval", "1e-5")
    yield server
    stop_server(server)


@pytest.fixture
def server_store(local_server, settings):
    """Point this process at the running server with a fresh set of tables."""
    settings.DYNAMODB_ENDPOINT_URL = local_server.url
    settings.DYNAMODB_TABLE_PREFIX = f"c{uuid.uuid4().hex[:8]}-"
    reset_clients()
    reset_services()
    ensure_tables()
    yield local_server
    reset_clients()
    reset_services()
