"""Commands fail with a clear message and a documented exit status, never a traceback."""
import socket
from io import StringIO

import pytest
from django.core.management import CommandError, call_command

from booking.wiring import reset_services


@pytest.fixture
def unreachable_store(settings):
    with socket.socket() as probe:  # a port nothing listens on
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    settings.DYNAMODB_ENDPOINT_URL = f"http://127.0.0.1:{port}"
    settings.DYNAMODB_MAX_ATTEMPTS = 1
    reset_services()
    yield
    reset_services()


@pytest.mark.parametrize(("command", "status"), [
    (["check_capacity"], 4),
    (["replay_failed"], 1),
    (["list_events"], 1),
])
def test_command__store_unreachable__clear_error_and_status(unreachable_store, command, status):
    with pytest.raises(CommandError) as raised:
        call_command(*command, stdout=StringIO(), stderr=StringIO())

    assert "temporarily unavailable" in str(raised.value)
    assert raised.value.returncode == status


def test_replay_failed__unparsable_since__usage_error(service):
    with pytest.raises(CommandError) as raised:
        call_command("replay_failed", "--since", "yesterday", stdout=StringIO())

    assert "ISO 8601" in str(raised.value) and raised.value.returncode == 2


@pytest.mark.parametrize(("arguments", "message"), [
    (["--strategies", "aggregate,nope"], "Unknown strategy nope"),
    (["--processes", "0"], "--processes must be at least 1"),
    (["--ops", "-5"], "--ops must be at least 1"),
    (["--capacity", "500", "--strategies", "aggregate"], "more than aggregate supports"),
    (["--demand", "4"], "--demand must be at least 5"),
    (["--faults", "throttle=2"], "Bad --faults"),
    (["--faults", "meteor=0.1"], "unknown fault 'meteor'"),
    (["--unguarded-race-delay-ms", "-1"], "cannot be negative"),
])
def test_torture__bad_arguments__usage_error_before_anything_runs(arguments, message):
    with pytest.raises(CommandError) as raised:
        call_command("torture", *arguments, stdout=StringIO())

    assert message in str(raised.value) and raised.value.returncode == 2
