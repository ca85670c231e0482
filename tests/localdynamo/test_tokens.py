"""TransactWriteItems ClientRequestToken: a repeat is applied once, a changed payload refused."""
import pytest

from .conftest import create_simple_table, raw_client


def add_one(token, amount=1):
    return {
        "ClientRequestToken": token,
        "TransactItems": [
            {"Update": {"TableName": "counters", "Key": {"pk": {"S": "c"}},
                        "UpdateExpression": "ADD n :amount",
                        "ExpressionAttributeValues": {":amount": {"N": str(amount)}}}},
            {"Put": {"TableName": "counters", "Item": {"pk": {"S": f"row-{token}"}}}},
        ],
    }


def counter(client):
    item = client.get_item(TableName="counters", Key={"pk": {"S": "c"}}, ConsistentRead=True)
    return int(item["Item"]["n"]["N"])


@pytest.fixture
def client(memory_server):
    client = raw_client(memory_server)
    create_simple_table(client, "counters")
    return client


def test_transact_write__same_token_three_times__applied_once_and_answered_each_time(client):
    for _ in range(3):
        response = client.transact_write_items(**add_one("token-a"))
        assert response["ResponseMetadata"]["HTTPStatusCode"] == 200

    assert counter(client) == 1


def test_transact_write__other_token__is_another_transaction(client):
    client.transact_write_items(**add_one("token-a"))
    client.transact_write_items(**add_one("token-b"))

    assert counter(client) == 2


def test_transact_write__same_token_other_payload__idempotent_parameter_mismatch(client):
    client.transact_write_items(**add_one("token-a"))

    with pytest.raises(client.exceptions.IdempotentParameterMismatchException) as error:
        client.transact_write_items(**add_one("token-a", amount=5))

    assert error.value.response["ResponseMetadata"]["HTTPStatusCode"] == 400
    assert counter(client) == 1


def test_transact_write__cancelled_then_retried_with_token__evaluated_again(client):
    guarded = add_one("token-c")
    guarded["TransactItems"][1]["Put"]["ConditionExpression"] = "attribute_exists(pk)"
    with pytest.raises(client.exceptions.TransactionCanceledException):
        client.transact_write_items(**guarded)
    client.put_item(TableName="counters", Item={"pk": {"S": "row-token-c"}})

    client.transact_write_items(**guarded)

    assert counter(client) == 1


def test_token__survives_restart(servers):
    server = servers.start()
    client = raw_client(server)
    create_simple_table(client, "counters")
    client.transact_write_items(**add_one("token-a"))
    servers.kill(server)

    client = raw_client(servers.start())
    client.transact_write_items(**add_one("token-a"))
    with pytest.raises(client.exceptions.IdempotentParameterMismatchException):
        client.transact_write_items(**add_one("token-a", amount=2))

    assert counter(client) == 1
