"""Create the tables that are missing, wait until they are active, enable TTL."""
from .access import call
from .tables import ALL_TABLES


def existing_table_names() -> set[str]:
    names, start = set(), None
    while True:
        request = {"ExclusiveStartTableName": start} if start else {}
        response = call("list_tables", **request)
        names.update(response.get("TableNames", []))
        start = response.get("LastEvaluatedTableName")
        if not start:
            return names


def ensure_tables(specs=ALL_TABLES, *, wait: bool = True) -> list[tuple[str, str]]:
    """Create what is missing; return (table name, what was done) for every table."""
    from .client import get_client

    existing = existing_table_names()
    report = []
    for spec in specs:
        if spec.name in existing:
            report.append((spec.name, "exists"))
        else:
            call("create_table", **spec.create_request())
            report.append((spec.name, "created"))
    if wait:
        waiter = get_client().get_waiter("table_exists")
        for spec in specs:
            waiter.wait(TableName=spec.name, WaiterConfig={"Delay": 1, "MaxAttempts": 120})
    for spec in specs:
        if spec.ttl_attribute and _enable_ttl(spec):
            report.append((spec.name, f"TTL enabled on {spec.ttl_attribute}"))
    return report


def _enable_ttl(spec) -> bool:
    status = call("describe_time_to_live", TableName=spec.name)["TimeToLiveDescription"]
    if status.get("TimeToLiveStatus") in ("ENABLED", "ENABLING"):
        return False
    call(
        "update_time_to_live",
        TableName=spec.name,
        TimeToLiveSpecification={"Enabled": True, "AttributeName": spec.ttl_attribute},
    )
    return True


def drop_tables(specs=ALL_TABLES) -> list[str]:
    """Delete the tables that exist (tests and `create_tables --reset`)."""
    existing = existing_table_names()
    dropped = []
    for spec in specs:
        if spec.name in existing:
            call("delete_table", TableName=spec.name)
            dropped.append(spec.name)
    return dropped
