"""AWS Lambda entry point for the streams strategy's decider: an event source mapping on
the registrations table's stream calls ``handler`` (docs/streams.md).

It sits above the composition root: it builds the service from settings like any other
process, and hands the strategy to a ``StreamDecider``.
"""
import logging

from booking.strategies.streams.decider import StreamDecider

logger = logging.getLogger(__name__)
_lambda_decider: StreamDecider | None = None


def handler(event, context):
    """Lambda entry point: decide a batch of stream records, in order.

    With ``FunctionResponseTypes: ["ReportBatchItemFailures"]`` on the mapping, a record
    that could not be decided is reported and Lambda retries from it (the ones before it
    are decided, and would be skipped by their condition anyway).
    """
    global _lambda_decider
    if _lambda_decider is None:
        import django
        from django.apps import apps

        if not apps.ready:  # a Lambda runtime imports this module without Django set up
            django.setup()
        from booking.wiring import get_booking_service

        _lambda_decider = StreamDecider(get_booking_service().strategy("streams"))
    for record in event.get("Records", []):
        try:
            _lambda_decider.decide_records([record])
        except Exception:  # noqa: BLE001 - reported to Lambda, which retries from here
            logger.exception("Could not decide record %s", record["dynamodb"]["SequenceNumber"])
            return {"batchItemFailures": [
                {"itemIdentifier": record["dynamodb"]["SequenceNumber"]}]}
    return {"batchItemFailures": []}
