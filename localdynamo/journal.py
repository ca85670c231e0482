"""The write-ahead log: length- and checksum-framed records in numbered segment files.

Each record is appended and fsynced before the server answers the request it describes.
A crash can therefore tear only the last record of the newest segment: reading stops at
the first record whose length or CRC-32 does not hold, and recovery cuts those bytes off.
A bad record in an older segment (which was complete and fsynced before the next one was
started) means the files were damaged, and recovery refuses to guess.
"""
import os
import struct
import zlib
from pathlib import Path

HEADER = struct.Struct("<II")  # payload length, CRC-32 of the payload
MAX_PAYLOAD = 256 * 1024 * 1024  # a longer "length" can only be a torn header
_datasync = getattr(os, "fdatasync", os.fsync)  # macOS has no fdatasync


class DamagedLog(Exception):
    """A log record before the tail is unreadable, or records are missing."""


def segment_name(first_seq: int) -> str:
    return f"wal-{first_seq:016d}.log"


def segment_paths(directory: Path) -> list[Path]:
    """The log segments in order (zero-padded names sort by first sequence number)."""
    return sorted(directory.glob("wal-*.log"))


def first_seq(path: Path) -> int:
    return int(path.stem.split("-", 1)[1])


def frame(payload: bytes) -> bytes:
    return HEADER.pack(len(payload), zlib.crc32(payload)) + payload


def read_segment(path: Path) -> tuple[list[bytes], int, int]:
    """Return the intact payloads, the offset where they end, and the file size."""
    data = path.read_bytes()
    payloads, offset = [], 0
    while offset + HEADER.size <= len(data):
        length, crc = HEADER.unpack_from(data, offset)
        end = offset + HEADER.size + length
        # Zero length is never written; all-zero bytes (size grown, data lost) read as it.
        if not 0 < length <= MAX_PAYLOAD or end > len(data):
            break
        payload = data[offset + HEADER.size:end]
        if zlib.crc32(payload) != crc:
            break
        payloads.append(payload)
        offset = end
    return payloads, offset, len(data)


def cut_torn_tail(path: Path, good_end: int) -> None:
    """Drop the bytes of a torn last record so that later appends follow intact ones."""
    with open(path, "r+b") as handle:
        handle.truncate(good_end)
        handle.flush()
        os.fsync(handle.fileno())


def fsync_directory(directory: Path) -> None:
    """Make created, renamed and deleted names in ``directory`` durable."""
    fd = os.open(directory, os.O_RDONLY)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)


class SegmentWriter:
    """Appends framed records to one segment; ``append`` returns once they are on disk."""

    def __init__(self, path: Path):
        self.path = path
        self.fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_APPEND, 0o600)
        # The segment's name must survive a crash before any acknowledged record is in it.
        fsync_directory(path.parent)

    def append(self, payload: bytes) -> None:
        view = memoryview(frame(payload))
        while view:
            view = view[os.write(self.fd, view):]
        _datasync(self.fd)

    def close(self) -> None:
        if self.fd is not None:
            os.close(self.fd)
            self.fd = None
