"""Starting DynamoDB Local: free ports, the data-directory lock, readiness, the child JVM."""
import ctypes
import fcntl
import os
import signal
import socket
import subprocess
import time
from pathlib import Path

LOCK_NAME = ".dynamodb_local.lock"
PR_SET_PDEATHSIG = 1
# Files of the project's earlier embedded server, which DynamoDB Local cannot read.
EARLIER_FORMAT = ("wal-*.log", "snapshot-*.pickle")


class DataDirInUse(RuntimeError):
    """Another DynamoDB Local already keeps its data in this directory."""


def free_port(host: str) -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as probe:
        probe.bind((host, 0))
        return probe.getsockname()[1]


def check_port_free(host: str, port: int) -> None:
    """Raise OSError when ``host:port`` cannot be listened on (busy, or not our address)."""
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as probe:
        probe.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        probe.bind((host, port))


def lock_data_dir(directory: Path) -> int:
    """Create ``directory`` and lock it; return the lock's descriptor (inherited by the JVM).

    The lock lives as long as any process holding the descriptor: across ``exec`` it is the
    store's own, so a crashed store frees it and a running one keeps others out.
    """
    directory.mkdir(parents=True, exist_ok=True)
    descriptor = os.open(directory / LOCK_NAME, os.O_RDWR | os.O_CREAT, 0o644)
    try:
        fcntl.flock(descriptor, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except BlockingIOError:
        os.close(descriptor)
        raise DataDirInUse(
            f"{directory} is in use by another dynamodb_local. Processes can share one store: "
            "point DYNAMODB_ENDPOINT_URL at it instead of starting a second one.") from None
    os.set_inheritable(descriptor, True)
    return descriptor


def earlier_format_files(directory: Path) -> list[Path]:
    return [path for pattern in EARLIER_FORMAT for path in directory.glob(pattern)]


def die_with_parent() -> None:
    """In a child before exec: get SIGKILL when the parent dies, even by ``kill -9``."""
    libc = ctypes.CDLL(None, use_errno=True)
    libc.prctl(PR_SET_PDEATHSIG, signal.SIGKILL)


def spawn(argv: list[str], lock: int | None) -> subprocess.Popen:
    """Run the JVM as a child that dies with this process, holding the data-directory lock."""
    return subprocess.Popen(argv, preexec_fn=die_with_parent,
                            pass_fds=(lock,) if lock is not None else ())


def wait_until_listening(host: str, port: int, process: subprocess.Popen | None = None,
                         timeout: float = 120) -> None:
    """Wait until ``host:port`` accepts connections; fail if ``process`` exits first."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if process is not None and process.poll() is not None:
            raise RuntimeError(f"DynamoDB Local exited with status {process.returncode}")
        try:
            socket.create_connection((host, port), timeout=1).close()
            return
        except OSError:
            time.sleep(0.05)
    raise RuntimeError(f"DynamoDB Local did not listen on {host}:{port} within {timeout:g} s")
