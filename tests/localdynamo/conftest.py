"""Fixtures: DynamoDB Local on temporary data directories, and raw clients."""
import json
import urllib.request

import boto3
import pytest
from botocore.config import Config

from tests.conftest import start_server


class Servers:
    """Start servers on one data directory; kill every one still running at the end."""

    def __init__(self, data_dir):
        self.data_dir = data_dir
        self.running = []

    def start(self, *extra_args):
        server = start_server("--data-dir", str(self.data_dir), *extra_args)
        self.running.append(server)
        return server

    def kill(self, server):
        """SIGKILL: the server gets no chance to flush or clean anything up."""
        server.process.kill()
        server.process.wait(timeout=10)

    def stop_all(self):
        for server in self.running:
            if server.process.poll() is None:
                self.kill(server)


@pytest.fixture
def servers(tmp_path):
    started = Servers(tmp_path / "dynamodb")
    yield started
    started.stop_all()


def raw_client(server, attempts=3):
    return boto3.client(
        "dynamodb", endpoint_url=server.url, region_name="us-east-1",
        aws_access_key_id="local", aws_secret_access_key="local",
        config=Config(retries={"total_max_attempts": attempts}),
    )


def admin(server, command):
    """POST one of the fault proxy's test hooks (/_localdynamo/faults/next?...)."""
    request = urllib.request.Request(f"{server.url}/_localdynamo/{command}", method="POST")
    with urllib.request.urlopen(request, timeout=60) as response:
        return json.loads(response.read())


def create_simple_table(client, name, *, ttl_attribute=None, stream=False):
    client.create_table(
        TableName=name, BillingMode="PAY_PER_REQUEST",
        KeySchema=[{"AttributeName": "pk", "KeyType": "HASH"}],
        AttributeDefinitions=[{"AttributeName": "pk", "AttributeType": "S"}],
        **({"StreamSpecification": {"StreamEnabled": True, "StreamViewType": "NEW_AND_OLD_IMAGES"}}
           if stream else {}),
    )
    if ttl_attribute:
        client.update_time_to_live(TableName=name, TimeToLiveSpecification={
            "Enabled": True, "AttributeName": ttl_attribute})
