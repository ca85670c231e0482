"""Fixtures: an in-process moto store for unit tests, a real embedded server for races."""
import os
import subprocess
import sys
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


@pytest.fixture(scope="session")
def local_server():
    """One embedded DynamoDB server process for the session (switch interval 1e-5)."""
    process = subprocess.Popen(
        [sys.executable, "manage.py", "dynamodb_local", "--port", "0", "--switch-interval", "1e-5"],
        cwd=ROOT, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
        env={**os.environ, "PYTHONUNBUFFERED": "1"},
    )
    line = process.stdout.readline()
    if "listening on" not in line:
        process.kill()
        raise RuntimeError(f"dynamodb_local did not start: {line}{process.stdout.read()}")
    url = line.split("listening on ", 1)[1].split()[0]
    yield RunningServer(process, url)
    process.terminate()
    process.wait(timeout=10)


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
