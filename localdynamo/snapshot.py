"""Snapshots: moto's whole DynamoDB state and the token table, pickled into one file.

A snapshot is written by a forked child so that the server keeps answering while a large
store is pickled. The fork happens while the server holds its request lock, so the
child's copy of memory is exactly the state after the last logged record, whatever the
parent does next. The child writes a temporary file, fsyncs it and renames it into
place, so a snapshot file is either complete or absent.

File layout: MAGIC, the pickle, then a trailer with the pickle's length and CRC-32.
Pickles are tied to moto's classes: moto's version is stored and checked on load.
"""
import gc
import logging
import os
import pickle
import struct
import traceback
import zlib
from pathlib import Path

import moto
from moto.dynamodb.models import dynamodb_backends

from .journal import fsync_directory

logger = logging.getLogger(__name__)

MAGIC = b"LOCALDYNAMO-SNAPSHOT-1\n"
TRAILER = struct.Struct("<QI")  # pickle length, CRC-32 of the pickle


class DamagedSnapshot(Exception):
    """The newest snapshot cannot be read back."""


def snapshot_name(seq: int) -> str:
    return f"snapshot-{seq:016d}.pickle"


def snapshot_paths(directory: Path) -> list[Path]:
    return sorted(directory.glob("snapshot-*.pickle"))


def snapshot_seq(path: Path) -> int:
    return int(path.stem.split("-", 1)[1])


def capture(seq: int, tokens) -> dict:
    """The state to pickle: every account's and region's DynamoDB backend, and tokens."""
    backends = [(account, region, backend.__dict__)
                for account, region, backend in dynamodb_backends.iter_backends()]
    return {"seq": seq, "moto": moto.__version__, "tokens": tokens.entries,
            "backends": backends}


def restore(state: dict, tokens) -> None:
    """Install a loaded snapshot into moto's backends and the token table."""
    for account, region, attributes in state["backends"]:
        dynamodb_backends[account][region].__dict__.update(attributes)
    tokens.entries = state["tokens"]


class _ChecksumWriter:
    def __init__(self, handle):
        self.handle, self.length, self.crc = handle, 0, 0

    def write(self, data) -> int:
        self.crc = zlib.crc32(data, self.crc)
        self.length += len(data)
        return self.handle.write(data)


def write(directory: Path, state: dict) -> Path:
    """Write ``state`` durably and atomically as the snapshot for its sequence number."""
    final = directory / snapshot_name(state["seq"])
    temporary = directory / f"{final.name}.{os.getpid()}.tmp"
    # Owner-only, like the log: the items hold people's names and e-mail addresses.
    fd = os.open(temporary, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
    with os.fdopen(fd, "wb") as handle:
        handle.write(MAGIC)
        writer = _ChecksumWriter(handle)
        pickle.dump(state, writer, protocol=pickle.HIGHEST_PROTOCOL)
        handle.write(TRAILER.pack(writer.length, writer.crc))
        handle.flush()
        os.fsync(handle.fileno())
    os.rename(temporary, final)
    fsync_directory(directory)
    return final


def read(path: Path) -> dict:
    """Load and verify one snapshot file."""
    data = path.read_bytes()
    if not data.startswith(MAGIC) or len(data) < len(MAGIC) + TRAILER.size:
        raise DamagedSnapshot(f"{path} is not a snapshot written by this server.")
    length, crc = TRAILER.unpack_from(data, len(data) - TRAILER.size)
    body = memoryview(data)[len(MAGIC):len(data) - TRAILER.size]
    if len(body) != length or zlib.crc32(body) != crc:
        raise DamagedSnapshot(f"{path} fails its checksum: the file was damaged.")
    # Loading creates millions of objects; the cyclic GC would rescan them many times.
    enabled = gc.isenabled()
    gc.disable()
    try:
        state = pickle.loads(body)
    except Exception as exc:
        raise DamagedSnapshot(
            f"{path} cannot be loaded with moto {moto.__version__} ({exc}). It was probably "
            "written by another moto version: install the one in requirements.txt, or move "
            "the data directory away to start empty."
        ) from exc
    finally:
        if enabled:
            gc.enable()
    if state.get("moto") != moto.__version__:
        logger.warning("Snapshot %s was written with moto %s; running %s.",
                       path.name, state.get("moto"), moto.__version__)
    return state


def write_in_background(directory: Path, seq: int, tokens) -> int:
    """Fork a child that writes the snapshot of the current state; return its pid."""
    pid = os.fork()
    if pid:
        return pid
    code = 1
    try:
        # Drop the child's copies of sockets and of the lock file: a snapshot that is
        # still being written must not hold a client connection or the data directory.
        os.closerange(3, os.sysconf("SC_OPEN_MAX"))
        gc.disable()
        write(directory, capture(seq, tokens))
        code = 0
    except BaseException:
        # Raw fd writes: another thread may have held the stderr buffer's lock at fork.
        os.write(2, f"snapshot {seq} failed:\n{traceback.format_exc()}".encode())
    finally:
        os._exit(code)
