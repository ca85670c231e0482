"""TransactWriteItems stays all-or-nothing with the server's item-level rollback."""
import uuid

import pytest
from botocore.exceptions import ClientError

from tests.localdynamo.conftest import raw_client


@pytest.fixture
def tables(local_server):
    client = raw_client(local_server, attempts=1)
    names = {kind: f"tx-{kind}-{uuid.uuid4().hex[:8]}" for kind in ("plain", "ranged")}
    client.create_table(
        TableName=names["plain"], BillingMode="PAY_PER_REQUEST",
        KeySchema=[{"AttributeName": "pk", "KeyType": "HASH"}],
        AttributeDefinitions=[{"AttributeName": "pk", "AttributeType": "S"}])
    client.create_table(
        TableName=names["ranged"], BillingMode="PAY_PER_REQUEST",
        KeySchema=[{"AttributeName": "pk", "KeyType": "HASH"},
                   {"AttributeName": "sk", "KeyType": "RANGE"}],
        AttributeDefinitions=[{"AttributeName": "pk", "AttributeType": "S"},
                              {"AttributeName": "sk", "AttributeType": "N"}])
    return client, names


def scan(client, table):
    items = client.scan(TableName=table, ConsistentRead=True)["Items"]
    return sorted(items, key=lambda i: (i["pk"]["S"], i.get("sk", {}).get("N", "")))


def test_transaction__last_condition_fails__earlier_writes_undone(tables):
    client, names = tables
    client.put_item(TableName=names["plain"], Item={"pk": {"S": "a"}, "n": {"N": "1"}})
    client.put_item(TableName=names["plain"], Item={"pk": {"S": "c"}, "n": {"N": "5"}})
    client.put_item(TableName=names["ranged"],
                    Item={"pk": {"S": "e"}, "sk": {"N": "1"}, "holder": {"S": "x"}})
    before = {name: scan(client, name) for name in names.values()}

    with pytest.raises(ClientError) as raised:
        client.transact_write_items(TransactItems=[
            {"Update": {"TableName": names["plain"], "Key": {"pk": {"S": "a"}},
                        "UpdateExpression": "SET n = n + :one",
                        "ExpressionAttributeValues": {":one": {"N": "1"}}}},
            {"Delete": {"TableName": names["ranged"],
                        "Key": {"pk": {"S": "e"}, "sk": {"N": "1"}}}},
            {"Put": {"TableName": names["ranged"],
                     "Item": {"pk": {"S": "e"}, "sk": {"N": "2"}}}},
            {"Put": {"TableName": names["plain"], "Item": {"pk": {"S": "new"}}}},
            {"ConditionCheck": {"TableName": names["plain"], "Key": {"pk": {"S": "c"}},
                                "ConditionExpression": "n = :two",
                                "ExpressionAttributeValues": {":two": {"N": "2"}}}},
        ])

    reasons = [r["Code"] for r in raised.value.response["CancellationReasons"]]
    assert reasons == ["None", "None", "None", "None", "ConditionalCheckFailed"]
    assert {name: scan(client, name) for name in names.values()} == before


def test_transaction__all_conditions_hold__every_write_applied(tables):
    client, names = tables
    client.put_item(TableName=names["plain"], Item={"pk": {"S": "a"}, "n": {"N": "1"}})

    client.transact_write_items(TransactItems=[
        {"Update": {"TableName": names["plain"], "Key": {"pk": {"S": "a"}},
                    "UpdateExpression": "SET n = n + :one", "ConditionExpression": "n = :one",
                    "ExpressionAttributeValues": {":one": {"N": "1"}}}},
        {"Put": {"TableName": names["ranged"], "Item": {"pk": {"S": "e"}, "sk": {"N": "7"}},
                 "ConditionExpression": "attribute_not_exists(pk)"}},
    ])

    assert scan(client, names["plain"]) == [{"pk": {"S": "a"}, "n": {"N": "2"}}]
    assert scan(client, names["ranged"]) == [{"pk": {"S": "e"}, "sk": {"N": "7"}}]


def test_transaction__same_item_twice__rejected_and_nothing_applied(tables):
    client, names = tables

    with pytest.raises(ClientError) as raised:
        client.transact_write_items(TransactItems=[
            {"Put": {"TableName": names["plain"], "Item": {"pk": {"S": "b"}}}},
            {"Put": {"TableName": names["plain"], "Item": {"pk": {"S": "b"}, "x": {"S": "2"}}}},
        ])

    assert raised.value.response["Error"]["Code"] == "ValidationException"
    assert scan(client, names["plain"]) == []
