"""Create the tables that are missing, wait until they are active, enable TTL."""
from collections.abc import Iterable
from typing import Any
from botocore.exceptions import ClientError

from booking.dynamo.access import Store
from booking.dynamo.tables import ALL_TABLES, TableSpec


def existing_table_names(store: Store) -> set[str]:
    names: set[str] = set()
    start = None
    while True:
        request: dict[str, Any] = {"ExclusiveStartTableName": start} if start else {}
        response = store.call("list_tables", **request)
        names.update(response.get("TableNames", []))
        start = response.get("LastEvaluatedTableName")
        if not start:
            return names


def ensure_tables(store: Store, specs: Iterable[TableSpec] = ALL_TABLES, *,
                  wait: bool = True) -> list[tuple[str, str]]:
    """Create what is missing; return (table name, what was done) for every table."""
    existing = existing_table_names(store)
    report = []
    for spec in specs:
        name = store.name(spec)
        if name in existing:
            report.append((name, "exists"))
        else:
            _create(store, spec.create_request(name))
            report.append((name, "created"))
    if wait:
        waiter = store.client.get_waiter("table_exists")
        for spec in specs:
            waiter.wait(TableName=store.name(spec),
                        WaiterConfig={"Delay": 1, "MaxAttempts": 120})
    for spec in specs:
        if spec.ttl_attribute and _enable_ttl(store, spec):
            report.append((store.name(spec), f"TTL enabled on {spec.ttl_attribute}"))
    return report


def _create(store: Store, request: dict) -> None:
    """Create a table; one that exists by now (botocore resent a create whose answer was
    lost on a slow store, or another process made it) is what was asked for."""
    try:
        store.call("create_table", **request)
    except ClientError as error:
        if error.response.get("Error", {}).get("Code") != "ResourceInUseException":
            raise


def _enable_ttl(store: Store, spec: TableSpec) -> bool:
    status = store.call("describe_time_to_live",
                        TableName=store.name(spec))["TimeToLiveDescription"]
    if status.get("TimeToLiveStatus") in ("ENABLED", "ENABLING"):
        return False
    store.call(
        "update_time_to_live",
        TableName=store.name(spec),
        TimeToLiveSpecification={"Enabled": True, "AttributeName": spec.ttl_attribute},
    )
    return True


def drop_tables(store: Store, specs: Iterable[TableSpec] = ALL_TABLES) -> list[str]:
    """Delete the tables that exist (tests and `create_tables --reset`)."""
    existing = existing_table_names(store)
    dropped = []
    for spec in specs:
        name = store.name(spec)
        if name in existing:
            store.call("delete_table", TableName=name)
            dropped.append(name)
    return dropped
