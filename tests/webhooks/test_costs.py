"""What webhooks cost in DynamoDB requests, counted on the wire (botocore's hooks, moto):
the fan-out of one outbox row and one delivery attempt. docs/webhooks.md quotes them."""
from booking.dynamo.metrics import RequestMeter
from booking.wiring import mail_sender, webhook_registry, webhook_sender


def counted(service, work):
    meter = RequestMeter().install(service.store)
    try:
        with meter.track() as tally:
            work()
    finally:
        meter.uninstall()
    return tally.operations


def test_costs__fan_out_and_attempts(service):
    event = service.create_event(name="Costs", capacity=5, strategy="lock_table")
    service.book(event.id, name="Ada", email="ada@example.com")
    [message] = service.requests.outbox.pending()
    fanout = mail_sender(service).fanout

    without_endpoints = counted(service, lambda: fanout(message, lambda: event))
    endpoint = webhook_registry(service).register(url="https://hooks.example.com/c",
                                                  events=["registration.created"])
    with_one = counted(service, lambda: fanout(message, lambda: event))
    repeated = counted(service, lambda: fanout(message, lambda: event))
    status = {"code": 500}
    sender = webhook_sender(service, post=lambda *a, **k: status["code"], clock=lambda: 4e9)
    [due] = sender.deliveries.due(now=4e9)
    failed = counted(service, lambda: sender.attempt(due, endpoint))
    [due] = sender.deliveries.due(now=4e9 + 10**6)
    status["code"] = 204
    sender.clock = lambda: 4e9 + 10**6
    delivered = counted(service, lambda: sender.attempt(due, endpoint))

    assert without_endpoints == ["Scan"]
    assert with_one == ["Scan", "PutItem"] and repeated == ["Scan", "PutItem"]  # refused put
    assert failed == ["UpdateItem", "UpdateItem", "UpdateItem"]  # claim, retry, endpoint
    assert delivered == ["UpdateItem", "UpdateItem"]  # claim, delivered
