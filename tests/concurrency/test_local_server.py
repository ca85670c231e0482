"""The local store is linearizable: a conditional put has exactly one winner per key.

moto's threaded server let two of 32 concurrent ``attribute_not_exists`` puts on one key
both succeed (2 of 40 keys); DynamoDB Local must not. This is the same race.
"""
import threading
import uuid
from concurrent.futures import ThreadPoolExecutor

import boto3
import pytest
from botocore.config import Config

pytestmark = pytest.mark.concurrency

KEYS = 40
WRITERS_PER_KEY = 32


def test_conditional_put__32_writers_per_key__one_winner_per_key(local_server):
    client = boto3.client(
        "dynamodb", endpoint_url=local_server.url, region_name="us-east-1",
        aws_access_key_id="local", aws_secret_access_key="local",
        config=Config(max_pool_connections=WRITERS_PER_KEY, retries={"total_max_attempts": 1}),
    )
    table = f"linearizable-{uuid.uuid4().hex[:8]}"
    client.create_table(
        TableName=table, BillingMode="PAY_PER_REQUEST",
        KeySchema=[{"AttributeName": "pk", "KeyType": "HASH"}],
        AttributeDefinitions=[{"AttributeName": "pk", "AttributeType": "S"}],
    )
    winners = {}

    def race_key(key):
        barrier = threading.Barrier(WRITERS_PER_KEY)

        def write(writer):
            barrier.wait()
            try:
                client.put_item(
                    TableName=table,
                    Item={"pk": {"S": key}, "writer": {"N": str(writer)}},
                    ConditionExpression="attribute_not_exists(pk)",
                )
                return 1
            except client.exceptions.ConditionalCheckFailedException:
                return 0

        with ThreadPoolExecutor(WRITERS_PER_KEY) as pool:
            winners[key] = sum(pool.map(write, range(WRITERS_PER_KEY)))

    for n in range(KEYS):
        race_key(f"key-{n}")

    assert winners == {f"key-{n}": 1 for n in range(KEYS)}
    stored = client.scan(TableName=table, Select="COUNT")["Count"]
    assert stored == KEYS
