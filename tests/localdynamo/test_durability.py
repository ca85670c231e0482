"""DynamoDB Local on disk: a restart (clean or kill -9) brings back everything acknowledged."""
import uuid

import pytest

from booking import wiring
from booking.dynamo.provision import ensure_tables
from booking.wiring import get_booking_service, reset_services
from harness.controls import local_store

from .conftest import create_simple_table, raw_client


def use_server(server, prefix):
    """Make this process's booking service one on ``server``'s tables under ``prefix``."""
    store = local_store(server.url, table_prefix=prefix)
    wiring.install(wiring.service_from_settings(store=store))


@pytest.fixture(autouse=True)
def forget_clients():
    yield
    reset_services()


def test_restart__tables_items_indexes_ttl_and_transactions__all_back(servers, settings):
    prefix = f"d{uuid.uuid4().hex[:8]}-"
    use_server(servers.start(), prefix)
    ensure_tables(get_booking_service().store)
    service = get_booking_service()
    event = service.create_event(name="Durable", capacity=5, strategy="lock_table")
    service.book(event.id, name="Ada", email="ada@example.com")  # TransactWriteItems
    service.book(event.id, name="Bob", email="bob@example.com")
    service.cancel(event.id, email="bob@example.com")
    servers.running[-1].process.terminate()
    servers.running[-1].process.wait(timeout=10)

    server = servers.start()
    use_server(server, prefix)
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


def test_kill_9__after_acknowledged_writes__all_back(servers):
    server = servers.start()
    client = raw_client(server)
    create_simple_table(client, "items")
    for n in range(60):
        client.put_item(TableName="items", Item={"pk": {"S": f"item-{n}"}})
    client.delete_item(TableName="items", Key={"pk": {"S": "item-0"}})
    servers.kill(server)

    server = servers.start()

    assert raw_client(server).scan(TableName="items", Select="COUNT")["Count"] == 59


def test_second_server_on_same_data_dir__refuses_with_clear_message(servers):
    first = servers.start()

    with pytest.raises(RuntimeError) as refused:
        servers.start()

    assert f"{servers.data_dir} is in use by another dynamodb_local" in str(refused.value)
    assert first.process.poll() is None


def test_data_dir_lock__held_by_the_store_itself__freed_by_its_crash(servers):
    first = servers.start()
    servers.kill(first)  # the command exec'd the JVM: this kills the store and its lock

    second = servers.start()

    assert raw_client(second).list_tables()["TableNames"] == []
