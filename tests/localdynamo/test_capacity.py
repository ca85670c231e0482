"""The capacity model (localdynamo/capacity.py): DynamoDB's charges, its per-partition
limits, and its throttled answers, through the proxy in front of DynamoDB Local.

The charges are checked against the examples of DynamoDB's developer guide ("DynamoDB
read and write operations"): a 3,500-byte read costs one 4 KB unit, an 8 KB item 2 strongly
consistent, 1 eventually consistent or 4 transactional read units, a 10 KB read rounds up to
12 KB, a BatchGetItem of 1.5 KB and 6.5 KB items counts 12 KB, a write 1 unit per started KB.
"""
import threading
import time
import uuid

import pytest
from botocore.exceptions import ClientError

from localdynamo.capacity import (CapacityModel, CapacitySpec, CapacitySpecError, Charge,
                                  item_size, read_units, value_size, write_units)
from localdynamo.faults import FaultInjector, FaultSpec
from localdynamo.proxy import FaultProxy

from tests.conftest import start_server, stop_server

from .conftest import admin, create_simple_table, raw_client

KB = 1024


def padded(size: int, key: str = "k") -> dict:
    """An item of exactly ``size`` bytes by DynamoDB's rules (pk + pad)."""
    base = item_size({"pk": {"S": key}}) + len("pad")
    return {"pk": {"S": key}, "pad": {"S": "x" * (size - base)}}


@pytest.mark.parametrize("size, consistent, transactional, units", [
    (3500, True, False, 1),      # "reading a 3,500-byte item consumes ... a 4 KB item"
    (3500, False, False, 0.5),   # eventually consistent: half
    (8 * KB, True, False, 2),    # "8 KB: 2 read units ... strongly consistent"
    (8 * KB, False, False, 1),   # "1 read unit if you choose eventually consistent"
    (8 * KB, True, True, 4),     # "or 4 read units for a transactional read request"
    (10 * KB, True, False, 3),   # "a 10 KB item ... rounds up to 12 KB"
    (0, True, False, 1),         # an absent item still costs the least unit
])
def test_read_units__documented_examples(size, consistent, transactional, units):
    assert read_units(size, consistent=consistent, transactional=transactional) == units


@pytest.mark.parametrize("size, transactional, units", [
    (3584, False, 4),            # a 3.5 KB put: 4 (DynamoDB Local reports the same)
    (512, True, 2),              # a transactional 0.5 KB put: 2
    (1536, False, 2),            # "1.5 KB ... rounded up to 2 KB"
    (0, False, 1),               # a failed conditional write costs at least 1
    (18 * KB + 100, False, 19),  # aggregate's event item at 200 attendees
])
def test_write_units__documented_examples(size, transactional, units):
    assert write_units(size, transactional=transactional) == units


@pytest.mark.parametrize("item, size", [
    ({"pk": {"S": "abc"}}, 5),                            # name + UTF-8 value
    ({"n": {"N": "12345"}}, 1 + 4),                        # (5 digits + 1) // 2 + 1
    ({"b": {"BOOL": True}, "z": {"NULL": True}}, 4),
    ({"m": {"M": {"a": {"S": "xy"}}}}, 1 + 3 + 1 + 1 + 2),  # map: 3 + per entry 1 + name
    ({"l": {"L": [{"S": "a"}, {"S": "b"}]}}, 1 + 3 + 2 * 2),
    ({"é": {"S": "ü"}}, 4),                                # UTF-8 bytes
])
def test_item_size__names_plus_values(item, size):
    assert item_size(item) == size


def test_spec__parsed_and_refused():
    spec = CapacitySpec.parse("partition_wcu=1000,partition_rcu=3000,scale=0.01,burst_s=0")
    assert (spec.write_rate, spec.read_rate, spec.unit) == (10, 30, "item")
    assert CapacitySpec.parse("unit=key").unit == "key"
    for bad in ("scale=0", "unit=table", "wcu=3", "burst_s=-1", "scale=x"):
        with pytest.raises(CapacitySpecError):
            CapacitySpec.parse(bad)


class Clock:
    def __init__(self):
        self.now = 0.0

    def __call__(self):
        return self.now


def test_model__a_hot_partition_serves_its_rate_and_no_more():
    clock = Clock()
    model = CapacityModel(CapacitySpec(scale=0.01), clock)   # 10 WCU per second
    accepted = 0
    for step in range(600):                                  # 60 s, 100 requests a second
        clock.now = step / 10
        accepted += sum(model.admit([Charge("t", "hot", "write", 1)]) is None for _ in range(10))
    assert 600 <= accepted <= 10 * 60 + 10                  # the rate, plus one full bucket
    assert model.snapshot()["tables"]["t"]["throttles"] == 6000 - accepted


def test_model__refuses_all_or_nothing():
    model = CapacityModel(CapacitySpec(scale=0.01), Clock())
    assert model.admit([Charge("t", "a", "write", 9)]) is None
    assert model.admit([Charge("t", "b", "write", 2), Charge("t", "a", "write", 2)]) == 1
    assert model.snapshot()["tables"]["t"]["write_units"] == 9  # b was not charged


def test_model__requests_counted_per_table_touched_once_admitted():
    model = CapacityModel(CapacitySpec(scale=0.01), Clock())
    # A transaction over two tables (two items in one): one request for each table.
    assert model.admit([Charge("t", "a", "write", 1), Charge("t", "b", "write", 1),
                        Charge("u", "c", "write", 1)]) is None
    assert model.admit([Charge("t", "a", "write", 50)]) == 0  # refused: not counted
    tables = model.snapshot()["tables"]
    assert (tables["t"]["requests"], tables["u"]["requests"]) == (1, 1)
    model.reset()
    assert model.snapshot()["tables"] == {}


def test_model__peaks__a_partition_busy_for_one_second_not_diluted_by_the_quiet_ones():
    clock = Clock()
    model = CapacityModel(CapacitySpec(scale=0.01), clock)   # 10 WCU, 30 RCU per second
    for second in range(10):                  # "steady": 6 units every second
        clock.now = second + 0.5
        assert model.admit([Charge("t", "steady", "write", 6)]) is None
    clock.now = 3.2                           # "burst": 9 units within second 3, then quiet
    for _ in range(9):
        assert model.admit([Charge("t", "burst", "write", 1)]) is None
    clock.now = 9.99
    snapshot = model.snapshot()

    # Averaged over the run, "steady" is the hotter; its busiest second is not.
    assert snapshot["hottest"][0]["partition"] == "steady"
    peak, second = snapshot["peaks"][:2]
    assert (peak["partition"], peak["second"], peak["units"]) == ("burst", 3, 9)
    assert peak["limit_per_second"] == 10 and peak["share_of_limit"] == pytest.approx(0.9)
    assert (second["partition"], second["units"]) == ("steady", 6)
    model.reset()
    assert model.snapshot()["peaks"] == []


# --- Through the proxy, in front of the session's DynamoDB Local ---------------------------

@pytest.fixture
def metered(local_server):
    started = []

    def start(spec="partition_wcu=1000,partition_rcu=3000,scale=1"):
        model = CapacityModel(CapacitySpec.parse(spec))
        proxy = FaultProxy(local_server.url, FaultInjector(FaultSpec()), capacity=model).start()
        started.append(proxy)
        return proxy, raw_client(proxy, attempts=1)

    yield start
    for proxy in started:
        proxy.stop()


def table_units(proxy, table):
    return proxy.capacity.snapshot()["tables"].get(table, {})


def test_proxy__charges_each_operation_by_the_rules(metered):
    proxy, client = metered()
    table = f"cap-{uuid.uuid4().hex[:8]}"
    create_simple_table(client, table)
    client.put_item(TableName=table, Item=padded(3584))                  # 4
    client.get_item(TableName=table, Key={"pk": {"S": "k"}}, ConsistentRead=True)   # 1
    client.get_item(TableName=table, Key={"pk": {"S": "k"}})             # 0.5
    with pytest.raises(ClientError):                                     # failed: 4 (old item)
        client.put_item(TableName=table, Item={"pk": {"S": "k"}},
                        ConditionExpression="attribute_not_exists(pk)")
    client.transact_write_items(TransactItems=[                         # 2 + 2
        {"Put": {"TableName": table, "Item": padded(512, "t1")}},
        {"Put": {"TableName": table, "Item": padded(512, "t2")}}])
    with pytest.raises(ClientError):                                     # cancelled: 2 + 2
        client.transact_write_items(TransactItems=[
            {"Put": {"TableName": table, "Item": padded(512, "t3")}},
            {"Put": {"TableName": table, "Item": padded(512, "t1"),
                     "ConditionExpression": "attribute_not_exists(pk)"}}])
    client.batch_get_item(RequestItems={table: {                         # 1 + 1, consistent
        "Keys": [{"pk": {"S": "k"}}, {"pk": {"S": "t1"}}], "ConsistentRead": True}})
    client.scan(TableName=table, ConsistentRead=True)                    # 4.6 KB: 2
    units = table_units(proxy, table)
    assert units["write_units"] == 4 + 4 + 4 + 4
    assert units["read_units"] == 1 + 0.5 + 2 + 2
    assert "t3" not in str(client.scan(TableName=table)["Items"])


def test_proxy__a_hot_key_never_serves_more_than_its_limit_a_spread_load_is_never_throttled(metered):
    proxy, client = metered("partition_wcu=1000,partition_rcu=3000,scale=0.01,burst_s=0")
    table = f"cap-{uuid.uuid4().hex[:8]}"
    create_simple_table(client, table)
    seconds, outcomes = 3.0, {"hot": [], "spread": []}

    def hammer(kind, key_of):
        deadline, n = time.monotonic() + seconds, 0
        while time.monotonic() < deadline:
            try:
                client.update_item(TableName=table, Key={"pk": {"S": key_of(n)}},
                                   UpdateExpression="ADD hits :one",
                                   ExpressionAttributeValues={":one": {"N": "1"}})
                outcomes[kind].append("ok")
            except ClientError as exc:
                outcomes[kind].append(exc.response["Error"]["Code"])
            n += 1
            if kind == "spread":
                time.sleep(0.02)

    started = time.monotonic()
    threads = [threading.Thread(target=hammer, args=("hot", lambda n: "hot")) for _ in range(4)]
    threads.append(threading.Thread(target=hammer, args=("spread", lambda n: f"s{n}")))
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    elapsed = time.monotonic() - started
    hot_accepted = outcomes["hot"].count("ok")
    # Each update of the hot key costs 1 WCU: 10 a second, plus one full bucket (10).
    assert hot_accepted <= 10 * elapsed + 10 + 1
    assert "ProvisionedThroughputExceededException" in outcomes["hot"]
    assert set(outcomes["spread"]) == {"ok"} and len(outcomes["spread"]) > 20
    hottest = proxy.capacity.snapshot()["hottest"][0]
    assert hottest["partition"] == "hot" and hottest["units"] == hot_accepted


def test_proxy__throttles_have_dynamodbs_shapes_and_apply_nothing(metered):
    proxy, client = metered("partition_wcu=1,partition_rcu=1,scale=1")
    table = f"cap-{uuid.uuid4().hex[:8]}"
    create_simple_table(client, table)
    client.put_item(TableName=table, Item=padded(100, "a"))     # spends a's unit for 1 s
    with pytest.raises(ClientError) as single:
        client.put_item(TableName=table, Item=padded(100, "a"))
    error = single.value.response
    assert error["Error"]["Code"] == "ProvisionedThroughputExceededException"
    assert error["ResponseMetadata"]["HTTPStatusCode"] == 400
    with pytest.raises(ClientError) as transaction:
        client.transact_write_items(TransactItems=[
            {"Put": {"TableName": table, "Item": padded(100, "b")}},
            {"Put": {"TableName": table, "Item": padded(100, "a")}}])
    answer = transaction.value.response
    assert answer["Error"]["Code"] == "TransactionCanceledException"
    assert [r["Code"] for r in answer["CancellationReasons"]] == ["None", "ThrottlingError"]
    time.sleep(1.1)  # a's bucket refills; b was never written
    assert "Item" not in client.get_item(TableName=table, Key={"pk": {"S": "b"}},
                                         ConsistentRead=True)


def test_proxy__botocore_retries_a_throttle_as_a_throttle(metered):
    proxy, _ = metered("partition_wcu=1,partition_rcu=1,scale=0.01")  # 0.01 WCU a second
    client = raw_client(proxy, attempts=3)
    table = f"cap-{uuid.uuid4().hex[:8]}"
    create_simple_table(client, table)
    client.put_item(TableName=table, Item=padded(100, "a"))
    with pytest.raises(ClientError) as refused:
        client.put_item(TableName=table, Item=padded(100, "a"))
    assert refused.value.response["ResponseMetadata"]["RetryAttempts"] == 2
    assert proxy.capacity.snapshot()["tables"][table]["throttles"] == 3


# --- The command ----------------------------------------------------------------------------

def test_dynamodb_local__bad_capacity_spec__clear_error():
    from django.core.management import CommandError, call_command
    with pytest.raises(CommandError, match="Bad capacity spec 'unit=table'"):
        call_command("dynamodb_local", "--in-memory", "--capacity", "unit=table")


def test_command__capacity_with_faults__both_on_one_port():
    server = start_server("--capacity", "partition_wcu=1,partition_rcu=1,scale=1",
                          "--faults", "seed=1")
    try:
        client = raw_client(server, attempts=1)
        table = f"cap-{uuid.uuid4().hex[:8]}"
        create_simple_table(client, table)
        admin(server, "faults/next?kind=error500&count=1")
        codes = []
        # A 20 KB put overdraws "a"'s one-unit bucket by 19: at one unit a second the next
        # write waits 20 s, however slow this machine is between the two.
        for size in (100, 20_000, 100):
            try:
                client.put_item(TableName=table, Item=padded(size, "a"))
                codes.append("ok")
            except ClientError as exc:
                codes.append(exc.response["Error"]["Code"])
        report = server.capacity()
    finally:
        stop_server(server)
    # The injected 500 is refused before it is charged; then one unit a second on "a".
    assert codes == ["InternalServerError", "ok", "ProvisionedThroughputExceededException"]
    assert report["tables"][table] == {"write_units": 20, "read_units": 0, "throttles": 1,
                                       "requests": 1}
    assert report["hottest"][0]["partition"] == "a"
    assert "Capacity limits on" in server.log_path.read_text()
