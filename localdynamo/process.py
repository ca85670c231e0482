"""Run the embedded DynamoDB as a child process on a free port (tests and the torture run).

The child is ``manage.py dynamodb_local --port 0`` with its output in a log file; the
URL is read from its "listening on" line, so no port is ever guessed.
"""
import json
import os
import subprocess
import sys
import tempfile
import time
import urllib.request
from dataclasses import dataclass
from pathlib import Path

PROJECT_DIR = Path(__file__).resolve().parent.parent
START_TIMEOUT_SECONDS = 30


@dataclass
class ServerProcess:
    process: subprocess.Popen
    url: str
    log_path: Path

    def fault_counts(self) -> dict:
        """Faults injected so far, by kind (empty when injection is off)."""
        with urllib.request.urlopen(f"{self.url}/_localdynamo/faults", timeout=30) as answer:
            return json.loads(answer.read())

    def stop(self) -> None:
        terminate(self.process)


def terminate(process: subprocess.Popen, timeout: float = 10) -> None:
    """Ask a child to stop; kill it if it has not stopped within ``timeout`` seconds."""
    process.terminate()
    try:
        process.wait(timeout=timeout)
    except subprocess.TimeoutExpired:
        process.kill()
        process.wait(timeout=timeout)


def start(*extra_args: str) -> ServerProcess:
    """Start a server (in memory unless ``extra_args`` name a ``--data-dir``); wait for it."""
    log = tempfile.NamedTemporaryFile("w+", prefix="dynamodb_local-", suffix=".log",
                                      delete=False)
    storage = [] if "--data-dir" in extra_args else ["--in-memory"]
    process = subprocess.Popen(
        [sys.executable, "manage.py", "dynamodb_local", "--port", "0", *storage, *extra_args],
        cwd=PROJECT_DIR, stdout=log, stderr=subprocess.STDOUT,
        env={**os.environ, "PYTHONUNBUFFERED": "1"},
    )
    log_path = Path(log.name)
    deadline = time.monotonic() + START_TIMEOUT_SECONDS
    while time.monotonic() < deadline and process.poll() is None:
        output = log_path.read_text()
        if "listening on" in output:
            return ServerProcess(process, output.split("listening on ", 1)[1].split()[0],
                                 log_path)
        time.sleep(0.05)
    process.kill()
    raise RuntimeError(f"dynamodb_local did not start:\n{log_path.read_text()}")
