"""DynamoDB Local's streams: one record per applied change, none for a cancelled transaction.

The streams strategy's decider depends on this; moto emitted two INSERT records for an
UpdateItem that created an item, and an INSERT for a transaction that was cancelled.
"""
import uuid

import boto3
import pytest

from .conftest import create_simple_table, raw_client


def stream_records(server, table):
    client = raw_client(server)
    streams = boto3.client("dynamodbstreams", endpoint_url=server.url, region_name="us-east-1",
                           aws_access_key_id="local", aws_secret_access_key="local")
    arn = client.describe_table(TableName=table)["Table"]["LatestStreamArn"]
    records = []
    for shard in streams.describe_stream(StreamArn=arn)["StreamDescription"]["Shards"]:
        iterator = streams.get_shard_iterator(StreamArn=arn, ShardId=shard["ShardId"],
                                              ShardIteratorType="TRIM_HORIZON")["ShardIterator"]
        page = streams.get_records(ShardIterator=iterator)
        records += [(r["eventName"], r["dynamodb"]["Keys"]["pk"]["S"],
                     r["dynamodb"].get("NewImage")) for r in page["Records"]]
    return records


@pytest.fixture
def table(local_server):
    name = f"streamed-{uuid.uuid4().hex[:8]}"
    create_simple_table(raw_client(local_server), name, stream=True)
    return name


def test_stream__update_item_that_creates__one_insert_with_the_new_attribute(local_server, table):
    raw_client(local_server).update_item(
        TableName=table, Key={"pk": {"S": "a"}}, UpdateExpression="SET seats = :n",
        ExpressionAttributeValues={":n": {"N": "3"}})

    assert stream_records(local_server, table) == [
        ("INSERT", "a", {"pk": {"S": "a"}, "seats": {"N": "3"}})]


def test_stream__cancelled_transaction__no_record(local_server, table):
    client = raw_client(local_server)
    with pytest.raises(client.exceptions.TransactionCanceledException):
        client.transact_write_items(TransactItems=[
            {"Put": {"TableName": table, "Item": {"pk": {"S": "booking"}}}},
            {"ConditionCheck": {"TableName": table, "Key": {"pk": {"S": "missing"}},
                                "ConditionExpression": "attribute_exists(pk)"}}])

    assert stream_records(local_server, table) == []


def test_stream__applied_changes__one_record_each_in_order(local_server, table):
    client = raw_client(local_server)
    client.put_item(TableName=table, Item={"pk": {"S": "a"}})
    client.update_item(TableName=table, Key={"pk": {"S": "a"}}, UpdateExpression="SET n = :n",
                       ExpressionAttributeValues={":n": {"N": "1"}})
    with pytest.raises(client.exceptions.ConditionalCheckFailedException):
        client.put_item(TableName=table, Item={"pk": {"S": "a"}},
                        ConditionExpression="attribute_not_exists(pk)")
    client.delete_item(TableName=table, Key={"pk": {"S": "a"}})

    assert [(name, key) for name, key, _ in stream_records(local_server, table)] == [
        ("INSERT", "a"), ("MODIFY", "a"), ("REMOVE", "a")]
