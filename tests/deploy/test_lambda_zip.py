"""The Lambda package (``make lambda-zip``): its handler imports from the zip alone and
decides a batch of real stream records (DynamoDB Local's), in a fresh interpreter that
sees the standard library and the unpacked zip, nothing else (``-S``: no site-packages).

The zip is built here for this interpreter's Python version (the make target builds it
for the template's python3.12 runtime): the same script, the same requirements.
"""
import json
import os
import subprocess
import sys
import zipfile
from pathlib import Path

import pytest

from tests.deploy import scenarios

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "deploy" / "aws"))
import build_lambda  # noqa: E402

DRIVER = """
import json, sys
sys.path.insert(0, sys.argv[1])
from booking import lambda_handler
assert "site-packages" not in lambda_handler.__file__
records = json.load(sys.stdin)
print(json.dumps(lambda_handler.handler({"Records": records}, None)))
"""


@pytest.fixture(scope="module")
def unpacked(tmp_path_factory):
    scratch = tmp_path_factory.mktemp("lambda")
    version = f"{sys.version_info.major}.{sys.version_info.minor}"
    archive = build_lambda.build(scratch / "lambda.zip", python_version=version,
                                 cache=ROOT / "var" / "lambda-build")  # pip once per machine
    with zipfile.ZipFile(archive) as zipped:
        names = zipped.namelist()
        assert "booking/lambda_handler.py" in names and "config/lambda_settings.py" in names
        assert not any("/tests/" in n or n.startswith("tests/") for n in names)
        zipped.extractall(scratch / "root")
    return scratch / "root"


def test_lambda_zip__handler_imports_from_the_zip_and_decides_a_batch(unpacked, server_store):
    from booking.wiring import get_booking_service

    service = get_booking_service()
    event = scenarios.book_pending(service, people=3, capacity=2)
    records = scenarios.stream_records(service)
    env = {"PATH": os.environ.get("PATH", ""), "DJANGO_SETTINGS_MODULE": "config.lambda_settings",
           "DYNAMODB_ENDPOINT_URL": service.store.client.meta.endpoint_url,
           "DYNAMODB_TABLE_PREFIX": service.store.table_prefix, "AWS_REGION": "us-east-1",
           "AWS_ACCESS_KEY_ID": "local", "AWS_SECRET_ACCESS_KEY": "local", "LOG_JSON": "true"}

    run = subprocess.run([sys.executable, "-S", "-c", DRIVER, str(unpacked)],
                         input=json.dumps(records), env=env, capture_output=True, text=True,
                         timeout=120, cwd=unpacked)

    assert run.returncode == 0, run.stderr
    assert json.loads(run.stdout.strip().splitlines()[-1]) == {"batchItemFailures": []}
    statuses = sorted(r.status for r in service.registrations(event.id))
    assert statuses == ["confirmed", "confirmed", "rejected"]
