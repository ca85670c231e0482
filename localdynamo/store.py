"""The data directory: its lock, the write-ahead log, snapshots, and recovery.

    LOCK                     flock()ed by the server that owns the directory; holds its pid
    wal-<first seq>.log      log segments, see journal.py
    snapshot-<seq>.pickle    the whole state after record <seq>, see snapshot.py

Recovery loads the newest snapshot and replays the log records after it. A background
snapshot is started once the log written since the last one holds ``snapshot_every``
seconds of apply work, so replay at start-up stays about that short however large the
store grows. When a snapshot is complete, the segments and snapshots it covers are
deleted (that is the log truncation).
"""
import fcntl
import logging
import os
import signal
import threading
import time
from dataclasses import dataclass
from pathlib import Path

from . import snapshot
from .journal import (
    DamagedLog, SegmentWriter, cut_torn_tail, first_seq, fsync_directory, read_segment,
    segment_name, segment_paths,
)
from .wire import Call

logger = logging.getLogger(__name__)

DEFAULT_SNAPSHOT_EVERY = 2.0  # seconds of replay work in the log
RETRY_FAILED_SNAPSHOT_AFTER = 30.0
SNAPSHOT_TIMEOUT = 600.0


class DataDirInUse(Exception):
    """Another server holds the data directory's lock."""


@dataclass
class Recovery:
    snapshot_seq: int  # 0 when there was no snapshot
    replayed: int  # log records applied after the snapshot
    failed: int  # replayed records that moto refused this time (see docs)
    torn_bytes: int  # bytes of a torn last record, cut off
    load_seconds: float
    replay_seconds: float


class DurableStore:
    """Owns one data directory while the server runs; call ``close()`` to release it."""

    def __init__(self, directory, *, tokens, snapshot_every: float = DEFAULT_SNAPSHOT_EVERY):
        self.directory = Path(directory).resolve()
        self.directory.mkdir(parents=True, exist_ok=True)
        self._lock_fd = lock_directory(self.directory)
        self.tokens = tokens
        self.snapshot_every = snapshot_every
        self.seq = 0  # sequence number of the last logged record
        self.log_cost = 0.0  # apply seconds of the records no complete snapshot covers
        self.writer = None
        self._mutex = threading.Lock()  # shared with the thread that awaits a snapshot
        self._snapshot_done = None  # an Event while a snapshot is being written
        self._retry_at = 0.0

    def recover(self, replay) -> Recovery:
        """Load the newest snapshot, replay the log after it through ``replay(call)``."""
        for leftover in self.directory.glob("*.tmp"):
            leftover.unlink()  # an unfinished snapshot (an orphaned writer then fails)
        started = time.perf_counter()
        newest = snapshot.snapshot_paths(self.directory)[-1:]
        if newest:
            state = snapshot.read(newest[0])
            snapshot.restore(state, self.tokens)
            self.seq = state["seq"]
        base, loaded = self.seq, time.perf_counter()
        replayed, failed, torn = self._replay_log(replay)
        self.writer = SegmentWriter(self.directory / segment_name(self.seq + 1))
        if self.log_cost >= self.snapshot_every:
            self.start_snapshot()
        return Recovery(base, replayed, failed, torn, loaded - started,
                        time.perf_counter() - loaded)

    def _replay_log(self, replay) -> tuple[int, int, int]:
        segments = segment_paths(self.directory)
        replayed = failed = torn = 0
        for index, path in enumerate(segments):
            payloads, good_end, size = read_segment(path)
            for payload in payloads:
                call = Call.decode(payload)
                if call.seq <= self.seq:
                    continue  # already in the snapshot
                if call.seq != self.seq + 1:
                    raise DamagedLog(f"{path}: records {self.seq + 1}..{call.seq - 1} are missing.")
                ok, cost = replay(call)
                replayed, failed = replayed + 1, failed + (not ok)
                self.seq, self.log_cost = call.seq, self.log_cost + cost
            if good_end < size:
                if index < len(segments) - 1:
                    raise DamagedLog(f"{path} is damaged at byte {good_end}, before the log's end.")
                torn = size - good_end
                logger.warning("Dropped a torn last log record (%d bytes) in %s.", torn, path.name)
                cut_torn_tail(path, good_end)
        return replayed, failed, torn

    def record(self, call: Call, cost: float) -> None:
        """Append a successful mutating call; return once it is on disk."""
        self.seq += 1
        call.seq = self.seq
        self.writer.append(call.encode())
        with self._mutex:
            self.log_cost += cost
            due = (self.log_cost >= self.snapshot_every and self._snapshot_done is None
                   and time.monotonic() >= self._retry_at)
        if due:
            self.start_snapshot()

    def start_snapshot(self) -> threading.Event | None:
        """Snapshot the current state in the background (call with the server's lock held).

        Returns an Event set when it is done, or None when another is still being written.
        """
        with self._mutex:
            if self._snapshot_done is not None:
                return None
            seq, cost = self.seq, self.log_cost
            # Records after ``seq`` go to a new segment, which the snapshot does not cover.
            self.writer.close()
            self.writer = SegmentWriter(self.directory / segment_name(seq + 1))
            done = self._snapshot_done = threading.Event()
            self.log_cost = 0.0
            pid = snapshot.write_in_background(self.directory, seq, self.tokens)
        threading.Thread(target=self._await_snapshot, args=(pid, seq, cost, done),
                         name=f"snapshot-{seq}", daemon=True).start()
        return done

    def _await_snapshot(self, pid: int, seq: int, cost: float, done: threading.Event) -> None:
        ok = wait_for_child(pid, SNAPSHOT_TIMEOUT) == 0
        with self._mutex:
            if ok:
                self._remove_covered(seq)
            else:
                self.log_cost += cost
                self._retry_at = time.monotonic() + RETRY_FAILED_SNAPSHOT_AFTER
                logger.error("Snapshot %d failed (see above); the log is kept.", seq)
            self._snapshot_done = None
        done.set()

    def _remove_covered(self, seq: int) -> None:
        segments = segment_paths(self.directory)
        for path, following in zip(segments, segments[1:]):
            if first_seq(following) - 1 <= seq and path != self.writer.path:
                path.unlink()
        for path in snapshot.snapshot_paths(self.directory):
            if snapshot.snapshot_seq(path) < seq:
                path.unlink()
        fsync_directory(self.directory)

    def wait_for_snapshot(self, timeout: float | None = None) -> None:
        done = self._snapshot_done
        if done is not None:
            done.wait(timeout)

    def close(self) -> None:
        """Let a running snapshot finish, close the log, release the directory."""
        self.wait_for_snapshot(timeout=60)
        if self.writer:
            self.writer.close()
        os.close(self._lock_fd)


def wait_for_child(pid: int, timeout: float) -> int:
    """Reap a child and return its exit code; SIGKILL it if it is still running by then."""
    deadline = time.monotonic() + timeout
    while True:
        finished, status = os.waitpid(pid, os.WNOHANG)
        if finished:
            return os.waitstatus_to_exitcode(status)
        if time.monotonic() > deadline:
            # A child that forked while another thread held some lock could wait forever;
            # the log is kept, so killing it loses nothing.
            os.kill(pid, signal.SIGKILL)
            deadline = float("inf")
        time.sleep(0.05)


def lock_directory(directory: Path) -> int:
    """Take the directory's exclusive lock (held until the fd closes or the process dies)."""
    fd = os.open(directory / "LOCK", os.O_RDWR | os.O_CREAT, 0o600)
    try:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except BlockingIOError:
        holder = os.pread(fd, 32, 0).decode(errors="replace").strip() or "unknown"
        os.close(fd)
        raise DataDirInUse(
            f"The data directory {directory} is in use by another dynamodb_local "
            f"(pid {holder}). Only one server may own a data directory: use the running "
            "one (point DYNAMODB_ENDPOINT_URL at it), stop it first, or pass another "
            "--data-dir."
        ) from None
    os.ftruncate(fd, 0)
    os.pwrite(fd, f"{os.getpid()}\n".encode(), 0)
    return fd
