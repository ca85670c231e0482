"""The fault proxy, seen by a raw client with retries off: each kind, counts, seeds, scripts.

Most tests put an in-process proxy in front of the session's DynamoDB Local; two start
``manage.py dynamodb_local --faults`` itself (the proxy on the port, the JVM behind it).
"""
import json
import re
import socket
import time
import urllib.error
import urllib.request
import uuid

import pytest
from botocore.exceptions import ClientError, HTTPClientError

from localdynamo.faults import FaultInjector, FaultSpec, FaultSpecError
from tests.conftest import start_fault_proxy, start_server, stop_server

from .conftest import admin, create_simple_table, raw_client

MIXED = "throttle=0.2,lost_response=0.3,error500=0.2,seed=11"
PUTS = 30


@pytest.fixture
def launch(local_server):
    started = []

    def launch(spec=""):
        proxy = start_fault_proxy(local_server, spec)
        started.append(proxy)
        return proxy

    yield launch
    for proxy in started:
        proxy.stop()


def fault_counts(server):
    with urllib.request.urlopen(f"{server.url}/_localdynamo/faults", timeout=30) as response:
        return json.loads(response.read())


def new_table(client):
    name = f"items-{uuid.uuid4().hex[:8]}"
    create_simple_table(client, name)
    return name


def put_outcome(client, table, key):
    """Put one item with no retry; say what the client saw."""
    try:
        client.put_item(TableName=table, Item={"pk": {"S": key}})
        return "ok"
    except HTTPClientError:
        return "lost"
    except ClientError as exc:
        status = exc.response["ResponseMetadata"]["HTTPStatusCode"]
        return f'{status} {exc.response["Error"]["Code"]}'


def stored(client, table, key):
    """Read until an answer gets through the faults; True when the item exists."""
    for _ in range(60):
        try:
            return "Item" in client.get_item(TableName=table, Key={"pk": {"S": key}},
                                             ConsistentRead=True)
        except (HTTPClientError, ClientError):
            continue
    raise AssertionError("no read got through")


def run_puts(server):
    client = raw_client(server, attempts=1)
    table = new_table(client)
    return client, table, [put_outcome(client, table, f"k{n}") for n in range(PUTS)]


def test_faults__mixed_spec__each_kind_seen_by_a_client_without_retries(launch):
    server = launch(MIXED)
    client, table, outcomes = run_puts(server)
    counts = fault_counts(server)

    assert set(outcomes) == {"ok", "lost", "400 ProvisionedThroughputExceededException",
                             "500 InternalServerError"}
    assert counts == {"throttle": outcomes.count("400 ProvisionedThroughputExceededException"),
                      "error500": outcomes.count("500 InternalServerError"),
                      "lost_response": outcomes.count("lost"), "delay": 0}
    for n, outcome in enumerate(outcomes):
        # A lost response was applied; a throttle or a 500 was not.
        assert stored(client, table, f"k{n}") == (outcome in ("ok", "lost")), (n, outcome)


def test_faults__same_seed__same_faults_in_the_same_order(launch):
    *_, first = run_puts(launch(MIXED))
    *_, second = run_puts(launch(MIXED))
    *_, other_seed = run_puts(launch(MIXED.replace("seed=11", "seed=12")))

    assert first == second
    assert first != other_seed


def test_faults__control_plane_calls__never_faulted(launch):
    server = launch("throttle=1")
    client = raw_client(server, attempts=1)

    table = f"items-{uuid.uuid4().hex[:8]}"
    create_simple_table(client, table, ttl_attribute="expires_at")
    client.describe_table(TableName=table)
    client.list_tables()
    client.describe_time_to_live(TableName=table)

    assert fault_counts(server)["throttle"] == 0
    assert put_outcome(client, table, "k") == "400 ProvisionedThroughputExceededException"
    assert fault_counts(server)["throttle"] == 1


def test_faults__delay__data_plane_request_takes_at_least_the_delay(launch):
    server = launch("delay_ms=300-300")
    client = raw_client(server, attempts=1)
    table = new_table(client)

    started = time.perf_counter()
    client.put_item(TableName=table, Item={"pk": {"S": "k"}})

    assert time.perf_counter() - started >= 0.3
    assert fault_counts(server)["delay"] == 1


def test_faults__zero_spec__counts_and_no_faults(launch):
    server = launch("seed=1")
    *_, outcomes = run_puts(server)

    assert fault_counts(server) == {"throttle": 0, "lost_response": 0, "error500": 0,
                                    "delay": 0}
    assert set(outcomes) == {"ok"}


def test_faults__lost_response_of_a_transaction__applied_once(launch):
    server = launch()
    client = raw_client(server, attempts=1)
    table = new_table(client)
    server.injector.script("lost_response", 1)

    with pytest.raises(HTTPClientError):
        client.transact_write_items(TransactItems=[
            {"Put": {"TableName": table, "Item": {"pk": {"S": "a"}}}},
            {"Put": {"TableName": table, "Item": {"pk": {"S": "b"}}}}])

    assert client.scan(TableName=table, Select="COUNT", ConsistentRead=True)["Count"] == 2


@pytest.mark.parametrize("spec", ["throttle=2", "lost=0.1", "delay_ms=5-1",
                                  "throttle=0.6,error500=0.6"])
def test_fault_spec__bad_text__refused(spec):
    with pytest.raises(FaultSpecError):
        FaultSpec.parse(spec)


# --- scripted faults: the next N requests, for tests that need a fault on a chosen call ---
def draws(injector, operations):
    return [injector.draw(operation) for operation in operations]


def test_script__next_requests__forced_in_order_then_random_draw_again():
    injector = FaultInjector(FaultSpec())
    injector.script("lost_response", 2)
    injector.script("throttle", 1)

    seen = draws(injector, ["PutItem", "DescribeTable", "GetItem", "UpdateItem", "PutItem"])

    assert seen == ["lost_response", None, "lost_response", "throttle", None]
    assert injector.snapshot() == {"throttle": 1, "lost_response": 2, "error500": 0, "delay": 0}


def test_script__skip_and_only_mutating__reads_pass_uncounted():
    injector = FaultInjector(FaultSpec())
    injector.script("throttle", 2, skip=1, only_mutating=True)

    seen = draws(injector, ["UpdateItem", "Query", "TransactWriteItems", "GetItem",
                            "TransactWriteItems", "TransactWriteItems"])

    assert seen == [None, None, "throttle", None, "throttle", None]


def test_script__cleared__unused_faults_reported_and_dropped():
    injector = FaultInjector(FaultSpec())
    injector.script("error500", 3)
    draws(injector, ["PutItem"])

    assert injector.clear_script() == 2
    assert draws(injector, ["PutItem"]) == [None]


@pytest.mark.parametrize("kind, count, skip", [("delay", 1, 0), ("lost", 1, 0),
                                               ("throttle", 0, 0), ("throttle", 1, -1)])
def test_script__bad_arguments__refused(kind, count, skip):
    with pytest.raises(FaultSpecError):
        FaultInjector(FaultSpec()).script(kind, count, skip=skip)


def test_script__in_process_proxy_with_zero_spec__faults_as_scripted(launch):
    server = launch()
    client = raw_client(server, attempts=1)
    table = new_table(client)
    server.injector.script("lost_response", 1)
    server.injector.script("throttle", 1)

    outcomes = [put_outcome(client, table, f"k{n}") for n in range(3)]

    assert outcomes == ["lost", "400 ProvisionedThroughputExceededException", "ok"]
    assert [stored(client, table, f"k{n}") for n in range(3)] == [True, False, True]


# --- the command: the proxy on the port, DynamoDB Local behind it ---------------------------
@pytest.fixture
def faulty_command():
    server = start_server("--faults", "seed=1")
    yield server
    if server.process.poll() is None:
        stop_server(server)


def store_port(server):
    return int(re.search(r"store on port (\d+)", server.log_path.read_text()).group(1))


def accepts(port):
    try:
        socket.create_connection(("127.0.0.1", port), timeout=1).close()
        return True
    except OSError:
        return False


def test_command_with_faults__next_endpoint_scripts__shutdown_logs_the_counts(faulty_command):
    client = raw_client(faulty_command, attempts=1)
    table = new_table(client)

    answer = admin(faulty_command, "faults/next?kind=throttle&count=2")
    outcomes = [put_outcome(client, table, f"k{n}") for n in range(3)]
    with pytest.raises(urllib.error.HTTPError) as refused:
        admin(faulty_command, "faults/next?kind=lost&count=1")
    stop_server(faulty_command)

    assert answer == {"scripted": "throttle", "count": 2}
    assert outcomes == ["400 ProvisionedThroughputExceededException"] * 2 + ["ok"]
    assert refused.value.code == 400
    assert "Faults injected: throttle=2, lost_response=0, error500=0, delay=0" in (
        faulty_command.log_path.read_text())
    assert not accepts(store_port(faulty_command))


def test_command_with_faults__killed_with_9__store_dies_with_it(faulty_command):
    port = store_port(faulty_command)
    assert accepts(port)

    faulty_command.process.kill()
    faulty_command.process.wait(timeout=10)

    deadline = time.monotonic() + 10
    while accepts(port) and time.monotonic() < deadline:
        time.sleep(0.1)
    assert not accepts(port), "DynamoDB Local outlived the command"
