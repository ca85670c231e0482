"""The outbox backlog: how many e-mails are owed (rows not yet sent and deleted).

Read by the Prometheus endpoint (``booking_outbox_backlog``, at most once per
``METRICS_BACKLOG_SECONDS``) and by the scheduled Lambda probe
(``booking.lambda_handler.outbox_backlog``), which publishes it to CloudWatch for the
template's ``OutboxBacklogAlarm``. A ``Scan`` with ``Select: COUNT`` reads the whole
(normally tiny: rows are deleted once sent) table and returns no items.
"""
from booking.dynamo.access import Store
from booking.dynamo.tables import OUTBOX

METRIC_NAMESPACE = "EventBooking"
METRIC_NAME = "OutboxBacklog"


def outbox_backlog(store: Store) -> int:
    request = {"TableName": store.name(OUTBOX), "Select": "COUNT"}
    return sum(page.get("Count", 0) for page in store.pages("scan", request))


def publish_backlog(cloudwatch, count: int, *, environment: str, table_prefix: str) -> None:
    """Put the count as ``EventBooking/OutboxBacklog`` (dimensions: the installation)."""
    cloudwatch.put_metric_data(Namespace=METRIC_NAMESPACE, MetricData=[{
        "MetricName": METRIC_NAME, "Value": count, "Unit": "Count",
        "Dimensions": [{"Name": "Environment", "Value": environment},
                       {"Name": "TablePrefix", "Value": table_prefix}]}])
