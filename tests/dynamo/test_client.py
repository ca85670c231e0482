"""The store client's per-request work: a fixed User-Agent (botocore would build its own
twice a request) and no client-side shape check (DynamoDB checks every request itself).
Counted on the wire, not timed."""
import pytest
from botocore.exceptions import ClientError, ParamValidationError

from booking.dynamo.client import USER_AGENT, ClientConfig, make_client


@pytest.fixture
def client(dynamo):
    return make_client(ClientConfig(region="us-east-1"))


def sent_headers(client):
    seen = []
    client.meta.events.register("before-send.dynamodb.*",
                                lambda request, **_: seen.append(dict(request.headers)))
    return seen


def test_client__sends_the_fixed_user_agent(client):
    seen = sent_headers(client)

    client.list_tables()
    client.list_tables()

    agents = [headers["User-Agent"].decode() for headers in seen]
    assert len(agents) == 2 and agents[0] == agents[1]
    assert agents[0].startswith(f"{USER_AGENT} ") and " ua/" not in agents[0]


def test_client__a_malformed_request_is_refused_by_the_store_not_by_botocore(client):
    seen = sent_headers(client)

    with pytest.raises(ClientError) as refused:
        client.get_item(TableName="missing-table", Key={"pk": {"S": 5}})

    assert not isinstance(refused.value, ParamValidationError) and len(seen) == 1
