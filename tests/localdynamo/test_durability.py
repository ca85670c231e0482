"""The durable server: a restart (clean or kill -9) brings back everything acknowledged."""
import uuid

import pytest

from booking.dynamo.client import reset_clients
from booking.dynamo.provision import ensure_tables
from booking.service import get_booking_service, reset_services
from localdynamo.journal import segment_paths

from .conftest import admin, create_simple_table, raw_client


def use_server(settings, server, prefix):
    """Point this process's booking service at ``server``."""
    settings.DYNAMODB_ENDPOINT_URL = server.url
    settings.DYNAMODB_TABLE_PREFIX = prefix
    reset_clients()
    reset_services()


@pytest.fixture(autouse=True)
def forget_clients():
    yield
    reset_clients()
    reset_services()


def test_restart__tables_items_indexes_ttl_and_transactions__all_back(servers, settings):
    prefix = f"d{uuid.uuid4().hex[:8]}-"
    use_server(settings, servers.start(), prefix)
    ensure_tables()
    service = get_booking_service()
    event = service.create_event(name="Durable", capacity=5, strategy="lock_table")
    service.book(event.id, name="Ada", email="ada@example.com")  # TransactWriteItems
    service.book(event.id, name="Bob", email="bob@example.com")
    service.cancel(event.id, email="bob@example.com")
    servers.running[-1].process.terminate()
    servers.running[-1].process.wait(timeout=10)

    server = servers.start()
    use_server(settings, server, prefix)
    client = raw_client(server)

    names = set(client.list_tables()["TableNames"])
    assert {f"{prefix}{t}" for t in ("events", "registrations", "event_locks", "slots",
                                     "leases")} <= names
    ttl = client.describe_time_to_live(TableName=f"{prefix}leases")["TimeToLiveDescription"]
    assert ttl == {"TimeToLiveStatus": "ENABLED", "AttributeName": "ttl"}
    by_email = client.query(
        TableName=f"{prefix}registrations", IndexName="by_email",
        KeyConditionExpression="email = :e",
        ExpressionAttributeValues={":e": {"S": "ada@example.com"}},
    )["Items"]
    assert [item["event_id"]["S"] for item in by_email] == [event.id]
    service = get_booking_service()
    assert service.get_event(event.id).name == "Durable"
    assert [r.email for r in service.registrations(event.id)] == ["ada@example.com"]
    assert service.availability(event.id).confirmed == 1


def test_kill_9__after_snapshot_and_more_writes__snapshot_plus_log_recovered(servers):
    server = servers.start()
    client = raw_client(server)
    create_simple_table(client, "items")
    for n in range(60):
        client.put_item(TableName="items", Item={"pk": {"S": f"before-{n}"}})
    snapshot_seq = admin(server, "snapshot")["seq"]
    for n in range(25):
        client.put_item(TableName="items", Item={"pk": {"S": f"after-{n}"}})
    client.delete_item(TableName="items", Key={"pk": {"S": "before-0"}})
    servers.kill(server)

    server = servers.start()

    assert raw_client(server).scan(TableName="items", Select="COUNT")["Count"] == 84
    assert f"snapshot {snapshot_seq} loaded" in server.log_path.read_text()
    assert "26 log records replayed" in server.log_path.read_text()


def test_second_server_on_same_data_dir__refuses_with_clear_message(servers):
    first = servers.start()

    with pytest.raises(RuntimeError) as refused:
        servers.start()

    assert f"The data directory {servers.data_dir} is in use by another dynamodb_local" \
        f" (pid {first.process.pid})" in str(refused.value)
    assert first.process.poll() is None


def test_restart__torn_last_record__dropped_and_rest_recovered(servers):
    server = servers.start()
    client = raw_client(server)
    create_simple_table(client, "items")
    client.put_item(TableName="items", Item={"pk": {"S": "kept"}})
    servers.kill(server)
    with open(segment_paths(servers.data_dir)[-1], "ab") as log:
        log.write(b"\x40\x00\x00\x00\x12\x34")  # a record header cut off by the crash

    server = servers.start()

    assert raw_client(server).get_item(TableName="items", Key={"pk": {"S": "kept"}})["Item"]
    assert "torn last record of 6 bytes dropped" in server.log_path.read_text()


def test_restart__damage_before_the_end_of_the_log__refuses_to_guess(servers):
    server = servers.start()
    create_simple_table(raw_client(server), "items")
    servers.kill(server)
    server = servers.start()  # a second segment now follows the first
    raw_client(server).put_item(TableName="items", Item={"pk": {"S": "x"}})
    servers.kill(server)
    first = segment_paths(servers.data_dir)[0]
    first.write_bytes(first.read_bytes()[:-1])

    with pytest.raises(RuntimeError, match="Cannot recover the data in .* is damaged at byte"):
        servers.start()
