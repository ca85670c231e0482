"""TransactWriteItems ClientRequestToken: a repeat is applied once, a changed payload refused.

The strategies rely on this after an ambiguous resend (docs/exactly-once-retries.md).
"""
import uuid

import pytest

from .conftest import create_simple_table, raw_client


def add_one(table, token, amount=1):
    return {
        "ClientRequestToken": f"{table}-{token}",
        "TransactItems": [
            {"Update": {"TableName": table, "Key": {"pk": {"S": "c"}},
                        "UpdateExpression": "ADD n :amount",
                        "ExpressionAttributeValues": {":amount": {"N": str(amount)}}}},
            {"Put": {"TableName": table, "Item": {"pk": {"S": f"row-{token}"}}}},
        ],
    }


def counter(client, table):
    item = client.get_item(TableName=table, Key={"pk": {"S": "c"}}, ConsistentRead=True)
    return int(item["Item"]["n"]["N"])


@pytest.fixture
def table(local_server):
    name = f"counters-{uuid.uuid4().hex[:8]}"
    create_simple_table(raw_client(local_server), name)
    return name


@pytest.fixture
def client(local_server):
    return raw_client(local_server)


def test_transact_write__same_token_three_times__applied_once_and_answered_each_time(
        client, table):
    for _ in range(3):
        response = client.transact_write_items(**add_one(table, "token-a"))
        assert response["ResponseMetadata"]["HTTPStatusCode"] == 200

    assert counter(client, table) == 1


def test_transact_write__other_token__is_another_transaction(client, table):
    client.transact_write_items(**add_one(table, "token-a"))
    client.transact_write_items(**add_one(table, "token-b"))

    assert counter(client, table) == 2


def test_transact_write__same_token_other_payload__idempotent_parameter_mismatch(
        client, table):
    client.transact_write_items(**add_one(table, "token-a"))

    with pytest.raises(client.exceptions.IdempotentParameterMismatchException) as error:
        client.transact_write_items(**add_one(table, "token-a", amount=5))

    assert error.value.response["ResponseMetadata"]["HTTPStatusCode"] == 400
    assert counter(client, table) == 1


def test_transact_write__cancelled_then_retried_with_token__evaluated_again(client, table):
    client.put_item(TableName=table, Item={"pk": {"S": "c"}, "n": {"N": "0"}})
    guarded = add_one(table, "token-c")
    guarded["TransactItems"][1]["Put"]["ConditionExpression"] = "attribute_exists(pk)"
    with pytest.raises(client.exceptions.TransactionCanceledException):
        client.transact_write_items(**guarded)
    client.put_item(TableName=table, Item={"pk": {"S": "row-token-c"}})

    client.transact_write_items(**guarded)

    assert counter(client, table) == 1
