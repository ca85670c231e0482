"""The log's framing: intact records read back, a torn last record is detected and cut."""
import pytest

from localdynamo.journal import (
    HEADER, SegmentWriter, cut_torn_tail, frame, read_segment, segment_name, segment_paths,
)
from localdynamo.wire import Call


def write_records(path, count):
    writer = SegmentWriter(path)
    for seq in range(1, count + 1):
        writer.append(Call("PutItem", b'{"n": %d}' % seq, "us-east-1", "123456789012",
                           1.5, seq).encode())
    writer.close()


def test_read_segment__intact_records__all_read_back_in_order(tmp_path):
    path = tmp_path / segment_name(1)
    write_records(path, 3)

    payloads, good_end, size = read_segment(path)

    calls = [Call.decode(p) for p in payloads]
    assert [(c.seq, c.body, c.operation) for c in calls] == [
        (1, b'{"n": 1}', "PutItem"), (2, b'{"n": 2}', "PutItem"), (3, b'{"n": 3}', "PutItem")]
    assert good_end == size


@pytest.mark.parametrize("tear", [
    lambda record: record[:3],  # crash inside the header
    lambda record: record[:HEADER.size + 5],  # crash inside the payload
    lambda record: record[:-1] + bytes([record[-1] ^ 0xFF]),  # last byte never reached disk
    lambda record: b"\0" * len(record),  # size grew, data never written
])
def test_read_segment__torn_last_record__dropped_and_cut_off(tmp_path, tear):
    path = tmp_path / segment_name(1)
    write_records(path, 2)
    intact_size = path.stat().st_size
    with open(path, "ab") as handle:
        handle.write(tear(frame(b'{"seq":3}\n{"torn": true}')))

    payloads, good_end, size = read_segment(path)
    cut_torn_tail(path, good_end)

    assert len(payloads) == 2
    assert good_end == intact_size < size
    assert path.stat().st_size == intact_size


def test_segment_paths__sorted_by_first_sequence_number(tmp_path):
    for first in (120, 7, 1000):
        (tmp_path / segment_name(first)).touch()

    assert [p.name for p in segment_paths(tmp_path)] == [
        segment_name(7), segment_name(120), segment_name(1000)]
