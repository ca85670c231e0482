"""TTL: expired items are deleted once ``now > ttl + delay``, and not before."""
import time

from .conftest import admin, create_simple_table, raw_client, start_server


def put_lease(client, key, expires_at):
    client.put_item(TableName="leases", Item={
        "pk": {"S": key}, "ttl": {"N": str(int(expires_at))}})


def keys(client):
    items = client.scan(TableName="leases", ConsistentRead=True)["Items"]
    return sorted(item["pk"]["S"] for item in items)


def test_ttl__short_delay__expired_item_deleted_by_the_periodic_sweep(memory_server):
    client = raw_client(memory_server)
    create_simple_table(client, "leases", ttl_attribute="ttl")
    now = time.time()
    put_lease(client, "expired", now - 1)
    put_lease(client, "live", now + 3600)
    put_lease(client, "no-ttl-attribute", 0)
    client.update_item(TableName="leases", Key={"pk": {"S": "no-ttl-attribute"}},
                       UpdateExpression="REMOVE #t", ExpressionAttributeNames={"#t": "ttl"})

    deadline = time.monotonic() + 10
    while "expired" in keys(client) and time.monotonic() < deadline:
        time.sleep(0.2)

    assert keys(client) == ["live", "no-ttl-attribute"]


def test_ttl__long_delay__only_items_expired_longer_than_the_delay_are_deleted():
    server = start_server("--ttl-sweep-delay", "3600")
    try:
        client = raw_client(server)
        create_simple_table(client, "leases", ttl_attribute="ttl")
        create_simple_table(client, "no_ttl")
        now = time.time()
        put_lease(client, "expired-a-minute-ago", now - 60)
        put_lease(client, "expired-two-hours-ago", now - 7200)
        put_lease(client, "ancient", now - 6 * 365 * 24 * 3600)  # DynamoDB skips these too
        client.put_item(TableName="no_ttl", Item={"pk": {"S": "x"}, "ttl": {"N": "1"}})

        assert admin(server, "ttl-sweep") == {"deleted": 1}
        assert keys(client) == ["ancient", "expired-a-minute-ago"]
        assert client.scan(TableName="no_ttl")["Count"] == 1
    finally:
        server.process.kill()
        server.process.wait(timeout=10)


def test_ttl__sweep_deletes_are_logged__still_gone_after_restart(servers):
    server = servers.start("--ttl-sweep-delay", "3600")
    client = raw_client(server)
    create_simple_table(client, "leases", ttl_attribute="ttl")
    put_lease(client, "expired-two-hours-ago", time.time() - 7200)
    assert admin(server, "ttl-sweep") == {"deleted": 1}
    servers.kill(server)

    assert keys(raw_client(servers.start())) == []
