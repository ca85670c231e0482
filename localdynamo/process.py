"""Run DynamoDB Local as a child process on a free port (tests and the torture run).

The child is ``manage.py dynamodb_local --port 0`` with its output in a log file; the
URL is read from its "listening on" line, so no port is ever guessed, and the store is
ready once that port accepts connections. Without ``--faults`` the child *is* the JVM
(the command execs it), so killing it is a crash of the store.
"""
import json
import os
import socket
import subprocess
import sys
import tempfile
import time
import urllib.request
from dataclasses import dataclass
from pathlib import Path

from .launch import die_with_parent

PROJECT_DIR = Path(__file__).resolve().parent.parent
START_TIMEOUT_SECONDS = 180  # the first start on a machine fetches DynamoDB Local


@dataclass
class ServerProcess:
    process: subprocess.Popen
    url: str
    log_path: Path
    proxied: bool = False  # started with --faults: the fault proxy answers on ``url``

    def fault_counts(self) -> dict:
        """Faults injected so far, by kind (empty when injection is off)."""
        if not self.proxied:
            return {}
        with urllib.request.urlopen(f"{self.url}/_localdynamo/faults", timeout=30) as answer:
            return json.loads(answer.read())

    def capacity(self) -> dict:
        """The capacity model's accounting (GET /_localdynamo/capacity)."""
        with urllib.request.urlopen(f"{self.url}/_localdynamo/capacity", timeout=30) as answer:
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
        preexec_fn=die_with_parent,  # kept across the exec: no store outlives its test run
    )
    log_path = Path(log.name)
    deadline = time.monotonic() + START_TIMEOUT_SECONDS
    url = None
    while time.monotonic() < deadline and process.poll() is None:
        output = log_path.read_text()
        if url is None and "listening on" in output:
            url = output.split("listening on ", 1)[1].split()[0]
        if url and accepts_connections(url):
            return ServerProcess(process, url, log_path, proxied=bool({"--faults", "--capacity"} & set(extra_args)))
        time.sleep(0.05)
    process.kill()
    raise RuntimeError(f"dynamodb_local did not start:\n{log_path.read_text()}")


def accepts_connections(url: str) -> bool:
    host, _, port = url.removeprefix("http://").partition(":")
    try:
        socket.create_connection((host, int(port)), timeout=1).close()
        return True
    except OSError:
        return False
