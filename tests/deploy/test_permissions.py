"""The template's IAM policies against the DynamoDB operations the code calls.

Each role's scenarios (tests/deploy/scenarios.py) run against DynamoDB Local (its stream
is real) with a recorder on the client (tests/deploy/recorder.py). Then, per role:

- everything the code called is allowed by the role's policy in deploy/aws/template.yaml
  (the table or index, and the IAM action of the operation, or of each item of a
  transaction): nothing the scenarios do would be denied on AWS;
- everything the policy allows was called, or is listed in
  ``booking/dynamo/permissions.RARE_PATHS`` with the code that issues it (error paths and
  repairs the scenarios do not reach; the test checks that code is there): nothing is
  granted for no reason.

Why record rather than read the code: which table an operation reaches is decided at run
time (a transaction spans tables, the strategy picks them), and the recorder sees the
exact requests the access layer built. The declaration in permissions.py keeps the policy
reviewable in one place; this test keeps it honest.
"""
from pathlib import Path

import pytest
import yaml

from booking import wiring
from booking.deploy.template import TEMPLATE_PATH
from booking.dynamo import permissions
from tests.deploy import scenarios
from tests.deploy.recorder import OperationRecorder

ROOT = Path(__file__).resolve().parents[2]
pytestmark = pytest.mark.usefixtures("server_store")


def template_grants(policy_document: dict) -> set[tuple[str, str | None, str]]:
    """(table suffix, index, IAM action) for each DynamoDB table statement."""
    granted = set()
    for statement in policy_document["Statement"]:
        if not statement["Sid"].startswith("Tables"):
            continue
        for resource in statement["Resource"]:
            tail = resource["Fn::Sub"].split(":table/${TablePrefix}", 1)[1]
            suffix, _, index = tail.partition("/index/")
            for action in statement["Action"]:
                granted.add((suffix, index or None, action.removeprefix("dynamodb:")))
    return granted


@pytest.fixture(scope="module")
def policies():
    resources = yaml.safe_load((ROOT / TEMPLATE_PATH).read_text())["Resources"]

    def document(resource, name=None):
        props = resources[resource]["Properties"]
        if "PolicyDocument" in props:
            return props["PolicyDocument"]
        return next(p["PolicyDocument"] for p in props["Policies"] if p["PolicyName"] == name)

    return {"web": template_grants(document("WebRole", "tables")),
            "worker_decider": template_grants(document("WorkerDeciderPolicy")),
            "decider": template_grants(document("DeciderRole", "decider")),
            "probe": template_grants(document("ProbeRole", "probe"))}


@pytest.fixture(scope="module")
def recorded(local_server):
    """role -> {(suffix, index, IAM action)} the scenarios called."""
    import uuid

    from booking.dynamo.provision import ensure_tables
    from harness.controls import local_store
    from tests.conftest import use_test_service

    store = local_store(local_server.url, table_prefix=f"p{uuid.uuid4().hex[:8]}-")
    service = use_test_service(store)
    ensure_tables(store)
    web, worker, decider, probe = (OperationRecorder(store) for _ in range(4))

    def decide():
        with web.paused(), worker.recording():
            wiring.stream_decider(service).run_pass()

    with wiring.use_service(service):
        with web.recording():
            scenarios.web_scenario(service, decide)
        scenarios.book_pending(service)
        records = scenarios.stream_records(service)
        with decider.recording():
            scenarios.lambda_decider_scenario(service, records)
        with probe.recording():
            from booking.metrics.backlog import outbox_backlog
            outbox_backlog(store)
    wiring.reset_services()

    def actions(recorder):
        return {(suffix, index, permissions.iam_action(op)) for suffix, index, op in recorder.seen}

    return {"web": actions(web), "worker_decider": actions(worker) - actions(web),
            "decider": actions(decider), "probe": actions(probe)}


def rare(role: str) -> set:
    return {(suffix, index, permissions.iam_action(op))
            for (r, suffix, index, op) in permissions.RARE_PATHS if r == role}


@pytest.mark.parametrize("role", ["web", "worker_decider", "decider", "probe"])
def test_policy__allows_every_operation_the_code_calls(role, policies, recorded):
    missing = recorded[role] - policies[role]
    if role == "worker_decider":  # the worker's decider also runs with the web role's rights
        missing -= policies["web"]
    assert missing == set(), (
        f"the {role} role would be denied these (table, index, action): add them to "
        "booking/dynamo/permissions.py and run manage.py aws_template")


@pytest.mark.parametrize("role", ["web", "worker_decider", "decider", "probe"])
def test_policy__grants_nothing_the_code_does_not_call(role, policies, recorded):
    unused = policies[role] - recorded[role] - rare(role)
    assert unused == set(), (
        f"the {role} role grants what no scenario calls: remove it from "
        "booking/dynamo/permissions.py, or reach it in tests/deploy/scenarios.py, or list "
        "the code that needs it in RARE_PATHS")


def test_rare_paths__name_code_that_exists_and_grants_that_exist():
    for (role, suffix, index, operation), (path, snippet) in permissions.RARE_PATHS.items():
        assert snippet in (ROOT / path).read_text(), f"{path} no longer has {snippet!r}"
        targets = {(spec.suffix, i): ops for (spec, i), ops in permissions.GRANTS[role].items()}
        assert operation in targets.get((suffix, index), ()), (role, suffix, operation)
