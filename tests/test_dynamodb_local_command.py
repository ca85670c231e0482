import socket

import pytest
from django.core.management import CommandError, call_command


def test_dynamodb_local__port_taken__clear_error():
    with socket.socket() as busy:
        busy.bind(("127.0.0.1", 0))
        busy.listen()
        port = busy.getsockname()[1]

        with pytest.raises(CommandError, match="Is another dynamodb_local"):
            call_command("dynamodb_local", "--port", str(port), "--in-memory")
