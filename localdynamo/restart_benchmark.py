"""Measure how long the durable server takes to come back with many items.

Run from the project root (it starts ``manage.py dynamodb_local`` itself)::

    .venv/bin/python -m localdynamo.restart_benchmark --items 100000

It fills a temporary data directory with a registrations-shaped table (with a global
secondary index) through BatchWriteItem, then kills the server with SIGKILL and
restarts it twice: once as the load left it (newest background snapshot + log tail),
once right after an explicit snapshot. Each restart is timed from process start until
it listens (Python, Django and moto imports included), and every item is counted back.
"""
import argparse
import json
import signal
import subprocess
import sys
import tempfile
import time
import urllib.request
from pathlib import Path

import boto3

ROOT = Path(__file__).resolve().parent.parent
TABLE = "registrations"


def start(data_dir: Path, log: Path) -> tuple[subprocess.Popen, str, float]:
    """Start a server; return it, its URL and the seconds until it listened."""
    started = time.perf_counter()
    handle = open(log, "w")
    process = subprocess.Popen(
        [sys.executable, "manage.py", "dynamodb_local", "--port", "0", "--data-dir", str(data_dir)],
        cwd=ROOT, stdout=handle, stderr=subprocess.STDOUT)
    while "listening on" not in log.read_text():
        if process.poll() is not None:
            raise SystemExit(log.read_text())
        time.sleep(0.01)
    seconds = time.perf_counter() - started
    url = log.read_text().split("listening on ", 1)[1].split()[0]
    return process, url, seconds


def client(url: str):
    return boto3.client("dynamodb", endpoint_url=url, region_name="us-east-1",
                        aws_access_key_id="local", aws_secret_access_key="local")


def create_and_fill(dynamodb, items: int) -> None:
    dynamodb.create_table(
        TableName=TABLE, BillingMode="PAY_PER_REQUEST",
        KeySchema=[{"AttributeName": "event_id", "KeyType": "HASH"},
                   {"AttributeName": "email", "KeyType": "RANGE"}],
        AttributeDefinitions=[{"AttributeName": "event_id", "AttributeType": "S"},
                              {"AttributeName": "email", "AttributeType": "S"}],
        GlobalSecondaryIndexes=[{
            "IndexName": "by_email", "Projection": {"ProjectionType": "ALL"},
            "KeySchema": [{"AttributeName": "email", "KeyType": "HASH"},
                          {"AttributeName": "event_id", "KeyType": "RANGE"}]}],
    )
    for start_at in range(0, items, 25):
        batch = [{"PutRequest": {"Item": registration(n)}}
                 for n in range(start_at, min(start_at + 25, items))]
        dynamodb.batch_write_item(RequestItems={TABLE: batch})


def registration(n: int) -> dict:
    return {
        "event_id": {"S": f"event-{n % 200:04d}"},
        "email": {"S": f"person{n}@example.com"},
        "name": {"S": f"Person {n}"},
        "registered_at": {"S": "2025-01-01T10:00:00+00:00"},
        "registration_id": {"S": f"{n:032x}"},
    }


def count(dynamodb) -> int:
    pages = dynamodb.get_paginator("scan").paginate(TableName=TABLE, Select="COUNT")
    return sum(page["Count"] for page in pages)


def restart(process, data_dir: Path, log: Path, label: str, expected: int):
    process.send_signal(signal.SIGKILL)
    process.wait()
    process, url, seconds = start(data_dir, log)
    recovered = log.read_text().splitlines()[0]
    found = count(client(url))
    print(f"{label}: listening after {seconds:.2f} s; {found} items back.\n  {recovered}")
    assert found == expected, f"expected {expected} items"
    return process, url


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--items", type=int, default=100_000)
    items = parser.parse_args().items
    with tempfile.TemporaryDirectory(prefix="restart-benchmark-") as scratch:
        data_dir, log = Path(scratch) / "dynamodb", Path(scratch) / "server.log"
        process, url, cold = start(data_dir, log)
        print(f"empty start: listening after {cold:.2f} s")
        loading = time.perf_counter()
        create_and_fill(client(url), items)
        print(f"loaded {items} items in {time.perf_counter() - loading:.1f} s")
        process, url = restart(process, data_dir, log, "kill -9 after the load", items)
        request = urllib.request.Request(f"{url}/_localdynamo/snapshot", method="POST")
        print("snapshot", json.loads(urllib.request.urlopen(request, timeout=600).read()))
        files = sorted(f"{p.name} ({p.stat().st_size / 1e6:.1f} MB)" for p in data_dir.iterdir())
        print("data directory:", ", ".join(files))
        process, _ = restart(process, data_dir, log, "kill -9 after a snapshot", items)
        process.kill()
        process.wait()


if __name__ == "__main__":
    main()
