"""The webhook sender in an OS process of its own (spawned by the crash test)."""
import signal
import threading
import time
from pathlib import Path

from tests.concurrency.workers import setup_django


def run_sender(url: str, prefix: str, *, careless: bool = False, pause_file: str = "") -> None:
    """The booking worker's webhook loop until SIGTERM (or SIGKILL).

    ``pause_file``: before its first send the process creates that file and sleeps, so the
    test can kill it mid-send, after the claim and before a byte leaves. ``careless`` runs
    the control that records a delivery done before sending it. Forked: the service is
    built afresh on a new client for DynamoDB Local at ``url``, tables ``prefix``.
    """
    setup_django({})
    from booking import wiring
    from booking.webhooks.delivery import RetryRule, WebhookSender, http_post
    from booking.wiring import webhook_sender
    from harness.controls import CarelessWebhookSender, control_service, local_store
    from tests.webhooks.receiver import LoopbackHttp

    def post(target, body, headers, *, timeout):
        if pause_file and not Path(pause_file).exists():
            Path(pause_file).touch()
            time.sleep(60)
        return http_post(target, body, headers, timeout=timeout)

    wiring.reset_services()
    service = control_service(store=local_store(url, table_prefix=prefix))
    sender = webhook_sender(
        service, url_policy=LoopbackHttp(), post=post, lease_seconds=0.5, deadline_seconds=5.0,
        retry=RetryRule(base_seconds=0.05, max_seconds=0.3),
        sender_class=CarelessWebhookSender if careless else WebhookSender)
    stop = threading.Event()
    signal.signal(signal.SIGTERM, lambda *_: stop.set())
    sender.run(stop, interval=0.05)
