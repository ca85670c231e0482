"""The template deployed into moto's CloudFormation, and the product run on its tables.

moto (5.2.5) deploys the tables (keys, indexes, streams), the IAM roles and policies, the
SQS failure queue, the Lambda functions (code from S3), the event source mapping and the
schedule. It skips what it does not implement for CloudFormation (alarms, log groups: it
warns) and does not apply a table's TTL, point-in-time recovery or deletion protection
from the template; those are checked in the template itself (test_template.py) and by
cfn-lint. It does not run the Lambda either (it would need Docker: it logs "error running
docker" when a write reaches the mapping), and its Streams API has no ``DescribeStream``:
the decision runs the handler in this process on the records the stream would carry (the
stack's items as ``NEW_IMAGE`` inserts, in arrival order). The same handler on DynamoDB
Local's real stream records: tests/strategies/test_streams.py and test_lambda_zip.py.
"""
import ast
import io
import json
import uuid
import warnings
import zipfile
from pathlib import Path

import boto3
import pytest
import yaml
from moto import mock_aws
from moto.core.botocore_stubber import BotocoreStubber

from booking import wiring
from booking.deploy.template import TEMPLATE_PATH, logical_id
from booking.dynamo.tables import ALL_TABLES, STREAM_REGISTRATIONS
from booking.waitlist import engine as waitlist_engine
from harness.controls import control_service, local_store
from tests.conftest import _one_at_a_time
from tests.deploy import scenarios

ROOT = Path(__file__).resolve().parents[2]
REGION = "us-east-1"


@pytest.fixture(scope="module")
def stack():
    """The template deployed once for the module (moto takes seconds for it), with a
    prefix of its own and the decider's code in S3; yields (prefix, outputs, client)."""
    with pytest.MonkeyPatch.context() as patch:
        for name in ("AWS_ACCESS_KEY_ID", "AWS_SECRET_ACCESS_KEY"):
            patch.setenv(name, "testing")
        patch.setenv("AWS_DEFAULT_REGION", REGION)
        patch.setattr(BotocoreStubber, "__call__", _one_at_a_time(BotocoreStubber.__call__))
        with mock_aws():
            prefix = f"s{uuid.uuid4().hex[:8]}-"
            s3 = boto3.client("s3", region_name=REGION)
            s3.create_bucket(Bucket="deploy-artifacts")
            s3.put_object(Bucket="deploy-artifacts", Key="lambda.zip", Body=_tiny_zip())
            cloudformation = boto3.client("cloudformation", region_name=REGION)
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")  # "not supported by moto's CloudFormation"
                cloudformation.create_stack(
                    StackName="booking", TemplateBody=(ROOT / TEMPLATE_PATH).read_text(),
                    Capabilities=["CAPABILITY_NAMED_IAM"],
                    Parameters=[{"ParameterKey": "TablePrefix", "ParameterValue": prefix},
                                {"ParameterKey": "Environment", "ParameterValue": "test"},
                                {"ParameterKey": "DeciderCodeBucket",
                                 "ParameterValue": "deploy-artifacts"},
                                {"ParameterKey": "DeciderCodeKey",
                                 "ParameterValue": "lambda.zip"}])
            described = cloudformation.describe_stacks(StackName="booking")["Stacks"][0]
            assert described["StackStatus"] == "CREATE_COMPLETE"
            outputs = {o["OutputKey"]: o["OutputValue"] for o in described.get("Outputs", [])}
            yield prefix, outputs, cloudformation
            waitlist_engine.flush()
    wiring.reset_services()


def _tiny_zip() -> bytes:
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w") as archive:
        archive.write(ROOT / "booking" / "lambda_handler.py", "booking/lambda_handler.py")
    return buffer.getvalue()


def test_stack__tables_as_tables_py__keys_indexes_streams(stack):
    prefix, outputs, _ = stack
    dynamodb = boto3.client("dynamodb", region_name=REGION)
    for spec in ALL_TABLES:
        name = spec.name_with(prefix)
        assert outputs[logical_id(spec) + "Name"] == name
        table = dynamodb.describe_table(TableName=name)["Table"]
        request = spec.create_request(name)
        assert table["KeySchema"] == request["KeySchema"]
        assert sorted(table["AttributeDefinitions"], key=str) == sorted(
            request["AttributeDefinitions"], key=str)
        assert table["BillingModeSummary"]["BillingMode"] == "PAY_PER_REQUEST"
        indexes = {i["IndexName"]: (i["KeySchema"], i["Projection"]["ProjectionType"])
                   for i in table.get("GlobalSecondaryIndexes", [])}
        assert indexes == {i.name: (request_index["KeySchema"], i.projection)
                           for i, request_index in zip(
                               spec.indexes, request.get("GlobalSecondaryIndexes", []))}
        stream = table.get("StreamSpecification", {})
        assert stream.get("StreamViewType") == spec.stream_view
        assert bool(table.get("LatestStreamArn")) == bool(spec.stream_view)


def test_stack__ttl_attributes__as_tables_py_in_the_deployed_template(stack):
    # moto keeps the template but does not apply TimeToLiveSpecification to the table.
    _, _, cloudformation = stack
    body = cloudformation.get_template(StackName="booking")["TemplateBody"]
    resources = (yaml.safe_load(body) if isinstance(body, str) else body)["Resources"]
    for spec in ALL_TABLES:
        ttl = resources[logical_id(spec)]["Properties"].get("TimeToLiveSpecification")
        assert (ttl or {}).get("AttributeName") == spec.ttl_attribute


def test_stack__decider_lambda_and_bounded_mapping_on_the_stream(stack):
    prefix, outputs, _ = stack
    aws_lambda = boto3.client("lambda", region_name=REGION)
    function = aws_lambda.get_function(FunctionName=f"{prefix}decider")["Configuration"]
    assert function["Handler"] == "booking.lambda_handler.handler"
    assert function["Environment"]["Variables"]["DYNAMODB_TABLE_PREFIX"] == prefix
    mapping, = aws_lambda.list_event_source_mappings(
        FunctionName=f"{prefix}decider")["EventSourceMappings"]
    assert mapping["EventSourceArn"] == outputs["StreamRegistrationsStreamArn"]
    assert mapping["MaximumRetryAttempts"] == 10
    assert mapping["MaximumRecordAgeInSeconds"] == 3600
    assert mapping["BisectBatchOnFunctionError"] is True
    assert mapping["FunctionResponseTypes"] == ["ReportBatchItemFailures"]
    queue_arn = mapping["DestinationConfig"]["OnFailure"]["Destination"]
    assert queue_arn.endswith(f":{prefix}decider-failures")


def test_stack__web_role_names_only_its_tables(stack):
    prefix, _, _ = stack
    iam = boto3.client("iam", region_name=REGION)
    policy = iam.get_role_policy(RoleName=f"{prefix}web-{REGION}", PolicyName="tables")
    document = policy["PolicyDocument"]
    if isinstance(document, str):  # moto answers the document as text (JSON or a repr)
        try:
            document = json.loads(document)
        except ValueError:
            document = ast.literal_eval(document)
    resources = {r for s in document["Statement"] for r in s["Resource"]}
    assert resources and all(f":table/{prefix}" in r for r in resources)


def test_stack__bookings_cancellation_and_a_streams_decision_on_its_tables(stack):
    prefix, _, _ = stack
    store = local_store(table_prefix=prefix)
    service = control_service(store=store)
    with wiring.use_service(service):
        # A guarded strategy: book to full, refuse, cancel, book again.
        event = service.create_event(name="On AWS", capacity=2, strategy="lock_table")
        for n in range(2):
            service.book(event.id, name=f"P{n}", email=f"p{n}@example.com")
        with pytest.raises(Exception) as full:
            service.book(event.id, name="P2", email="p2@example.com")
        assert type(full.value).__name__ == "EventFull"
        service.cancel(event.id, email="p0@example.com")
        service.book(event.id, name="P2", email="p2@example.com")
        assert service.availability(event.id).confirmed == 2
        assert [v for v in service.audit(event.id)] == []

        # streams: pending at once, decided by the Lambda handler from the stack's stream.
        queue = service.create_event(name="Queue on AWS", capacity=1, strategy="streams")
        for n in range(2):
            assert service.book(queue.id, name=f"Q{n}",
                                email=f"q{n}@example.com").status == "pending"
        scenarios.lambda_decider_scenario(service, insert_records(store, queue.id))
        statuses = {r.email: r.status for r in service.registrations(queue.id)}
        assert statuses == {"q0@example.com": "confirmed", "q1@example.com": "rejected"}
    assert store.name(STREAM_REGISTRATIONS) == f"{prefix}stream_registrations"


def insert_records(store, event_id) -> list[dict]:
    """The stream's INSERT records of the event's registrations, as Lambda passes them."""
    name = store.name(STREAM_REGISTRATIONS)
    items = store.client.query(TableName=name, KeyConditionExpression="event_id = :e",
                               ExpressionAttributeValues={":e": {"S": event_id}},
                               ConsistentRead=True)["Items"]
    items.sort(key=lambda item: item["registered_at"]["S"])
    arn = store.client.describe_table(TableName=name)["Table"]["LatestStreamArn"]
    return [{"eventID": str(n), "eventName": "INSERT", "eventSource": "aws:dynamodb",
             "eventSourceARN": arn, "awsRegion": REGION,
             "dynamodb": {"Keys": {"event_id": item["event_id"], "email": item["email"]},
                          "NewImage": item, "SequenceNumber": f"{n:021d}",
                          "StreamViewType": "NEW_IMAGE"}}
            for n, item in enumerate(items, 1)]
