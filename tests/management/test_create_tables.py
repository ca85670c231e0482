from io import StringIO

from django.core.management import call_command

from booking import wiring
from booking.dynamo.tables import ALL_TABLES, LEASES, SLOTS


def test_create_tables__twice__creates_then_changes_nothing(dynamo, settings):
    # The command's own store, from settings: another prefix, the (mocked) AWS endpoint.
    settings.DYNAMODB_ENDPOINT_URL, settings.DYNAMODB_TABLE_PREFIX = "", "fresh-"
    wiring.reset_services()
    first, second = StringIO(), StringIO()

    call_command("create_tables", stdout=first)
    call_command("create_tables", stdout=second)

    store = wiring.get_store()
    for spec in ALL_TABLES:
        assert f"fresh-{spec.suffix}: created" in first.getvalue()
        assert f"fresh-{spec.suffix}: exists" in second.getvalue()
    assert "TTL enabled on ttl" in first.getvalue()
    assert "created" not in second.getvalue() and "TTL" not in second.getvalue()
    ttl = store.call("describe_time_to_live",
                     TableName=store.name(LEASES))["TimeToLiveDescription"]
    assert (ttl["TimeToLiveStatus"], ttl["AttributeName"]) == ("ENABLED", "ttl")


def test_create_tables__slots_table__has_sparse_free_slot_index(dynamo):
    table = dynamo.call("describe_table", TableName=dynamo.name(SLOTS))["Table"]

    (index,) = table["GlobalSecondaryIndexes"]
    assert index["IndexName"] == "free_slots"
    assert [k["AttributeName"] for k in index["KeySchema"]] == ["free_in", "shuffle"]


def test_create_tables__reset__drops_data(service, settings):
    service.create_event(name="Talk", capacity=1)
    out = StringIO()

    call_command("create_tables", "--reset", stdout=out)

    assert "deleted" in out.getvalue()
    assert service.list_events() == []


def test_client_config__read_from_settings_when_called(settings):
    settings.DYNAMODB_ENDPOINT_URL = "http://127.0.0.1:9999"
    settings.DYNAMODB_RETRY_MODE = "adaptive"
    settings.DYNAMODB_MAX_ATTEMPTS = 7
    settings.DYNAMODB_READ_TIMEOUT = 3.5

    options = wiring.client_config().options()

    assert options["endpoint_url"] == "http://127.0.0.1:9999"
    assert options["config"].retries == {"mode": "adaptive", "total_max_attempts": 7}
    assert options["config"].read_timeout == 3.5


def test_ensure_tables__create_answered_after_it_exists__not_an_error(dynamo):
    """A create botocore resent after a lost answer finds the table there: created."""
    from booking.dynamo import provision
    from booking.dynamo.tables import LEASES

    provision._create(dynamo, LEASES.create_request(dynamo.name(LEASES)))  # made already
