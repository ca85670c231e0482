"""Base-table queries read one partition (localdynamo/queries.py) and answer as moto did."""
from .conftest import raw_client


def create_ranged_table(client):
    client.create_table(
        TableName="rows", BillingMode="PAY_PER_REQUEST",
        KeySchema=[{"AttributeName": "pk", "KeyType": "HASH"},
                   {"AttributeName": "seq", "KeyType": "RANGE"}],
        AttributeDefinitions=[{"AttributeName": "pk", "AttributeType": "S"},
                              {"AttributeName": "seq", "AttributeType": "N"},
                              {"AttributeName": "colour", "AttributeType": "S"}],
        GlobalSecondaryIndexes=[{
            "IndexName": "by_colour", "Projection": {"ProjectionType": "ALL"},
            "KeySchema": [{"AttributeName": "colour", "KeyType": "HASH"},
                          {"AttributeName": "seq", "KeyType": "RANGE"}]}],
    )
    for pk in ("a", "b", "c"):
        for seq in (5, 1, 12, 3):
            client.put_item(TableName="rows", Item={
                "pk": {"S": pk}, "seq": {"N": str(seq)},
                "colour": {"S": "red" if seq % 2 else "blue"}})


def seqs(answer):
    return [int(item["seq"]["N"]) for item in answer["Items"]]


def test_query__one_partition__sorted_paged_filtered_like_dynamodb(memory_server):
    client = raw_client(memory_server)
    create_ranged_table(client)
    by_pk = {"KeyConditionExpression": "pk = :pk", "ExpressionAttributeValues": {":pk": {"S": "b"}}}

    assert seqs(client.query(TableName="rows", **by_pk)) == [1, 3, 5, 12]
    assert seqs(client.query(TableName="rows", ScanIndexForward=False, **by_pk)) == [12, 5, 3, 1]
    first = client.query(TableName="rows", Limit=2, **by_pk)
    rest = client.query(TableName="rows", ExclusiveStartKey=first["LastEvaluatedKey"], **by_pk)
    assert seqs(first) + seqs(rest) == [1, 3, 5, 12]
    ranged = client.query(
        TableName="rows", KeyConditionExpression="pk = :pk AND seq > :low",
        FilterExpression="colour = :red",
        ExpressionAttributeValues={":pk": {"S": "b"}, ":low": {"N": "1"}, ":red": {"S": "red"}})
    assert seqs(ranged) == [3, 5]
    missing = client.query(TableName="rows", KeyConditionExpression="pk = :pk",
                           ExpressionAttributeValues={":pk": {"S": "zzz"}})
    assert missing["Items"] == [] and missing["Count"] == 0


def test_query__index__still_reads_every_partition(memory_server):
    client = raw_client(memory_server)
    create_ranged_table(client)

    answer = client.query(TableName="rows", IndexName="by_colour",
                          KeyConditionExpression="colour = :c",
                          ExpressionAttributeValues={":c": {"S": "blue"}})

    assert sorted(item["pk"]["S"] for item in answer["Items"]) == ["a", "b", "c"]
