"""The AWS template: generated from booking/dynamo/tables.py, committed, linted."""
import io
from pathlib import Path

import pytest
import yaml
from django.core.management import call_command

from booking.deploy.template import TEMPLATE_PATH, logical_id, render
from booking.dynamo.tables import ALL_TABLES, STREAM_REGISTRATIONS

ROOT = Path(__file__).resolve().parents[2]


@pytest.fixture(scope="module")
def template():
    return yaml.safe_load((ROOT / TEMPLATE_PATH).read_text())


def test_committed_template__equals_what_the_command_writes():
    out = io.StringIO()
    call_command("aws_template", "--output", "-", stdout=out)

    assert (ROOT / TEMPLATE_PATH).read_text() == out.getvalue() == render(), (
        "deploy/aws/template.yaml is stale: run `python manage.py aws_template` and commit it")


def test_aws_template__check__passes_on_the_committed_file():
    out = io.StringIO()
    call_command("aws_template", "--check", stdout=out)
    assert "up to date" in out.getvalue()


def test_cfn_lint__passes_on_the_template():
    from cfnlint.api import ManualArgs, lint_file

    matches = lint_file(ROOT / TEMPLATE_PATH, ManualArgs(regions=["us-east-1"]))

    assert [str(m) for m in matches] == []


def test_every_table__keys_indexes_stream_ttl_as_tables_py__protected_and_on_demand(template):
    resources = template["Resources"]
    tables = {k: v for k, v in resources.items() if v["Type"] == "AWS::DynamoDB::Table"}
    assert set(tables) == {logical_id(spec) for spec in ALL_TABLES}
    for spec in ALL_TABLES:
        resource = tables[logical_id(spec)]
        props, request = resource["Properties"], spec.create_request("")
        assert props["TableName"] == {"Fn::Sub": "${TablePrefix}" + spec.suffix}
        assert props["KeySchema"] == request["KeySchema"]
        assert props["AttributeDefinitions"] == request["AttributeDefinitions"]
        assert props.get("GlobalSecondaryIndexes") == request.get("GlobalSecondaryIndexes")
        assert props.get("StreamSpecification", {}).get("StreamViewType") == spec.stream_view
        ttl = props.get("TimeToLiveSpecification")
        assert ttl == ({"AttributeName": spec.ttl_attribute, "Enabled": True}
                       if spec.ttl_attribute else None)
        assert props["BillingMode"] == "PAY_PER_REQUEST"
        assert props["PointInTimeRecoverySpecification"] == {"PointInTimeRecoveryEnabled": True}
        assert props["DeletionProtectionEnabled"] is True
        assert props["SSESpecification"]["SSEEnabled"] is True
        assert resource["DeletionPolicy"] == resource["UpdateReplacePolicy"] == "Retain"


def test_parameters__prefix_and_environment_have_defaults(template):
    parameters = template["Parameters"]
    assert parameters["TablePrefix"]["Default"] == "booking-"
    assert parameters["Environment"]["Default"] == "production"
    assert all("Default" in p for p in parameters.values())  # deployable as it is


def test_decider_mapping__bounded_bisecting_reporting_failures_to_a_queue(template):
    resources, parameters = template["Resources"], template["Parameters"]
    mapping = resources["DeciderEventSourceMapping"]["Properties"]
    function = resources["DeciderFunction"]["Properties"]

    assert function["Handler"] == "booking.lambda_handler.handler"
    assert mapping["EventSourceArn"] == {"Fn::GetAtt": [logical_id(STREAM_REGISTRATIONS),
                                                        "StreamArn"]}
    retries = parameters[mapping["MaximumRetryAttempts"]["Ref"]]
    age = parameters[mapping["MaximumRecordAgeInSeconds"]["Ref"]]
    assert 0 <= retries["MinValue"] <= retries["Default"] <= retries["MaxValue"]  # never -1
    assert 60 <= age["MinValue"] <= age["Default"] < 24 * 3600  # inside the stream's 24 h
    assert mapping["BisectBatchOnFunctionError"] is True
    assert mapping["FunctionResponseTypes"] == ["ReportBatchItemFailures"]
    assert mapping["ParallelizationFactor"] == 1  # per-event order
    queue = mapping["DestinationConfig"]["OnFailure"]["Destination"]["Fn::GetAtt"][0]
    assert resources[queue]["Type"] == "AWS::SQS::Queue"


def test_alarms__throttles_per_table_errors_conflicts_iterator_age_decider_backlog(template):
    alarms = [r["Properties"] for r in template["Resources"].values()
              if r["Type"] == "AWS::CloudWatch::Alarm"]

    def metric_names(alarm):
        if "MetricName" in alarm:
            return {alarm["MetricName"]}
        return {m["MetricStat"]["Metric"]["MetricName"] for m in alarm["Metrics"]
                if "MetricStat" in m}

    def tables_of(alarm, metric):
        return {d["Value"]["Fn::Sub"] for m in alarm.get("Metrics", []) if "MetricStat" in m
                and m["MetricStat"]["Metric"]["MetricName"] == metric
                for d in m["MetricStat"]["Metric"]["Dimensions"] if d["Name"] == "TableName"}

    throttled = set().union(*(tables_of(a, "ThrottledRequests") for a in alarms))
    errors = set().union(*(tables_of(a, "SystemErrors") for a in alarms))
    every_table = {"${TablePrefix}" + spec.suffix for spec in ALL_TABLES}
    assert throttled == errors == every_table
    names = set().union(*(metric_names(a) for a in alarms))
    assert {"TransactionConflict", "IteratorAge", "Errors", "OutboxBacklog",
            "ApproximateNumberOfMessagesVisible"} <= names
    for alarm in alarms:
        assert len(alarm.get("Metrics", [])) <= 10  # CloudWatch's limit per alarm
