"""AWS Lambda entry points (deploy/aws/template.yaml; packaged by ``make lambda-zip``).

``handler``: the streams strategy's decider; an event source mapping on the registrations
table's stream calls it (docs/streams.md). ``outbox_backlog``: a scheduled probe that
publishes the number of e-mails owed to CloudWatch (``EventBooking/OutboxBacklog``).

They sit above the composition root: they build the service from settings like any other
process (``DJANGO_SETTINGS_MODULE=config.lambda_settings`` on the functions).
"""
import logging
from typing import TYPE_CHECKING, cast

if TYPE_CHECKING:  # for types only: nothing of booking/ is imported at run time here
    from booking.strategies.streams import StreamsStrategy

logger = logging.getLogger(__name__)
# The decider, built on the first batch. Nothing of booking/ is imported at module level:
# a Lambda runtime imports this module before Django is set up, and the models need it.
_lambda_decider = None


def handler(event, context):
    """Lambda entry point: decide a batch of stream records, in order.

    With ``FunctionResponseTypes: ["ReportBatchItemFailures"]`` on the mapping, a record
    that could not be decided is reported and Lambda retries from it (the ones before it
    are decided, and would be skipped by their condition anyway).
    """
    global _lambda_decider
    if _lambda_decider is None:
        _setup()
        from booking.strategies.streams.decider import StreamDecider
        from booking.wiring import get_booking_service

        # The catalog holds the streams strategy under its name ("streams").
        _lambda_decider = StreamDecider(
            cast("StreamsStrategy", get_booking_service().strategy("streams")))
    for record in event.get("Records", []):
        try:
            _lambda_decider.decide_records([record])
        except Exception:  # noqa: BLE001 - reported to Lambda, which retries from here
            logger.exception("Could not decide record %s", record["dynamodb"]["SequenceNumber"])
            return {"batchItemFailures": [
                {"itemIdentifier": record["dynamodb"]["SequenceNumber"]}]}
    return {"batchItemFailures": []}


def outbox_backlog(event, context):
    """Scheduled probe: count the outbox rows (e-mails owed) and publish the count."""
    _setup()
    from booking import wiring
    from booking.metrics.backlog import outbox_backlog as count_backlog
    from booking.metrics.backlog import publish_backlog

    store = wiring.get_store()
    count = count_backlog(store)
    publish_backlog(wiring.cloudwatch_client(), count,
                    environment=wiring.deployment_environment(),
                    table_prefix=store.table_prefix)
    logger.info("Outbox backlog: %d e-mail(s) owed", count)
    return {"outbox_backlog": count}


def _setup() -> None:
    import django
    from django.apps import apps

    if not apps.ready:  # a Lambda runtime imports this module without Django set up
        django.setup()
