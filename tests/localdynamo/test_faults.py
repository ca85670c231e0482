"""Fault injection, seen by a raw client with retries off: each kind, counts, seeds, scripts."""
import json
import time
import urllib.error
import urllib.request

import pytest
from botocore.exceptions import ClientError, HTTPClientError

from localdynamo.faults import FaultInjector, FaultSpec, FaultSpecError
from localdynamo.server import LocalDynamoDB
from tests.conftest import start_server, stop_server

from .conftest import admin, create_simple_table, raw_client

MIXED = "throttle=0.2,lost_response=0.3,error500=0.2,seed=11"
PUTS = 30


@pytest.fixture
def launch():
    started = []

    def launch(spec):
        server = start_server("--faults", spec)
        started.append(server)
        return server

    yield launch
    for server in started:
        stop_server(server)


def fault_counts(server):
    with urllib.request.urlopen(f"{server.url}/_localdynamo/faults", timeout=30) as response:
        return json.loads(response.read())


def put_outcome(client, key):
    """Put one item with no retry; say what the client saw."""
    try:
        client.put_item(TableName="t", Item={"pk": {"S": key}})
        return "ok"
    except HTTPClientError:
        return "lost"
    except ClientError as exc:
        status = exc.response["ResponseMetadata"]["HTTPStatusCode"]
        return f'{status} {exc.response["Error"]["Code"]}'


def stored(client, key):
    """Read until an answer gets through the faults; True when the item exists."""
    for _ in range(60):
        try:
            return "Item" in client.get_item(TableName="t", Key={"pk": {"S": key}},
                                             ConsistentRead=True)
        except (HTTPClientError, ClientError):
            continue
    raise AssertionError("no read got through")


def run_puts(server):
    client = raw_client(server, attempts=1)
    create_simple_table(client, "t")
    return client, [put_outcome(client, f"k{n}") for n in range(PUTS)]


def test_faults__mixed_spec__each_kind_seen_by_a_client_without_retries(launch):
    server = launch(MIXED)
    client, outcomes = run_puts(server)
    counts = fault_counts(server)

    assert set(outcomes) == {"ok", "lost", "400 ProvisionedThroughputExceededException",
                             "500 InternalServerError"}
    assert counts == {"throttle": outcomes.count("400 ProvisionedThroughputExceededException"),
                      "error500": outcomes.count("500 InternalServerError"),
                      "lost_response": outcomes.count("lost"), "delay": 0}
    for n, outcome in enumerate(outcomes):
        # A lost response was applied; a throttle or a 500 was not.
        assert stored(client, f"k{n}") == (outcome in ("ok", "lost")), (n, outcome)


def test_faults__same_seed__same_faults_in_the_same_order(launch):
    _, first = run_puts(launch(MIXED))
    _, second = run_puts(launch(MIXED))
    _, other_seed = run_puts(launch(MIXED.replace("seed=11", "seed=12")))

    assert first == second
    assert first != other_seed


def test_faults__control_plane_calls__never_faulted(launch):
    server = launch("throttle=1")
    client = raw_client(server, attempts=1)

    create_simple_table(client, "t", ttl_attribute="expires_at")
    client.describe_table(TableName="t")
    client.list_tables()
    client.describe_time_to_live(TableName="t")

    assert fault_counts(server)["throttle"] == 0
    assert put_outcome(client, "k") == "400 ProvisionedThroughputExceededException"
    assert fault_counts(server)["throttle"] == 1


def test_faults__delay__data_plane_request_takes_at_least_the_delay(launch):
    server = launch("delay_ms=300-300")
    client = raw_client(server, attempts=1)
    create_simple_table(client, "t")

    started = time.perf_counter()
    client.put_item(TableName="t", Item={"pk": {"S": "k"}})

    assert time.perf_counter() - started >= 0.3
    assert fault_counts(server)["delay"] == 1


def test_faults__shutdown__logs_the_counts(launch):
    server = launch("throttle=1")
    client = raw_client(server, attempts=1)
    create_simple_table(client, "t")
    put_outcome(client, "k")

    stop_server(server)

    assert "Faults injected: throttle=1, lost_response=0, error500=0, delay=0" in (
        server.log_path.read_text())


def test_faults__no_spec__no_counts_and_no_faults(launch):
    server = start_server()
    try:
        client, outcomes = run_puts(server)
        assert fault_counts(server) == {}
        assert set(outcomes) == {"ok"}
    finally:
        stop_server(server)


@pytest.mark.parametrize("spec", ["throttle=2", "lost=0.1", "delay_ms=5-1", "throttle=0.6,error500=0.6"])
def test_fault_spec__bad_text__refused(spec):
    with pytest.raises(FaultSpecError):
        FaultSpec.parse(spec)


# --- scripted faults: the next N requests, for tests that need a fault on a chosen call ---
def environ_for_operation(operation):
    return {"HTTP_X_AMZ_TARGET": f"DynamoDB_20120810.{operation}"}


def draws(injector, operations):
    return [injector.draw(environ_for_operation(op)) for op in operations]


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


def test_script__in_process_server_with_injector_and_zero_spec__faults_as_scripted():
    injector = FaultInjector(FaultSpec())
    server = LocalDynamoDB("127.0.0.1", 0, faults=injector).start()
    try:
        client = raw_client(server, attempts=1)
        create_simple_table(client, "t")
        injector.script("lost_response", 1)
        injector.script("throttle", 1)

        outcomes = [put_outcome(client, f"k{n}") for n in range(3)]

        assert outcomes == ["lost", "400 ProvisionedThroughputExceededException", "ok"]
        assert [stored(client, f"k{n}") for n in range(3)] == [True, False, True]
    finally:
        server.stop()


def test_faults_next_endpoint__server_without_faults__scripts_the_next_requests():
    server = start_server()
    try:
        client = raw_client(server, attempts=1)
        create_simple_table(client, "t")

        answer = admin(server, "faults/next?kind=throttle&count=2")
        outcomes = [put_outcome(client, f"k{n}") for n in range(3)]

        assert answer == {"scripted": "throttle", "count": 2}
        assert outcomes == ["400 ProvisionedThroughputExceededException"] * 2 + ["ok"]
        assert fault_counts(server)["throttle"] == 2
        with pytest.raises(urllib.error.HTTPError) as refused:
            admin(server, "faults/next?kind=lost&count=1")
        assert refused.value.code == 400
    finally:
        stop_server(server)
