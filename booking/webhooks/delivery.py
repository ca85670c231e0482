"""Send the deliveries owed, at least once, each attempt claimed exactly once.

The booking worker runs ``WebhookSender.run`` on a thread of its own. Each pass queries
the deliveries that are due, claims one attempt of each (``WebhookDeliveries.claim``:
only one worker wins attempt ``n``, and the claim is a lease), then POSTs the fixed body
with fresh Standard Webhooks headers (``signing``). A 2xx answer records the delivery
done; anything else (another status, a timeout, a refused connection) schedules the next
attempt after an exponential backoff. The outcome is recorded only after the send, so a
worker killed mid-send leaves a claim that lapses, and the next worker sends the same
``webhook-id`` again: receivers drop duplicates by that id.

An endpoint failing without a single success for ``disable_after_seconds`` (a day by
default) is disabled, the organizer sees why in the admin, and what is still owed to it
(or to a deleted endpoint) is abandoned.
"""
import logging
import random
import ssl
import time
import uuid
from collections import Counter
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from decimal import Decimal
from http.client import HTTPConnection, HTTPSConnection
from urllib.parse import urlsplit

from booking.dynamo.webhooks import WebhookDeliveries, WebhookEndpoints
from booking.service.store_errors import translating
from booking.webhooks import signing
from booking.webhooks.registry import HttpsOnly, endpoint_from_item

logger = logging.getLogger(__name__)
DELIVERED, RETRYING, ABANDONED, CLAIMED_ELSEWHERE = (
    "delivered", "retrying", "abandoned", "claimed_elsewhere")
USER_AGENT = "event-booking-webhooks/1"


@dataclass(frozen=True)
class RetryRule:
    """Backoff after failed attempt ``n``: ``base * 2**(n-1)``, at most ``max``, less up to
    a fifth at random (so a recovering receiver is not hit by everything at once)."""

    base_seconds: float = 10.0
    max_seconds: float = 3600.0
    disable_after_seconds: float = 86400.0

    def delay(self, attempt: int) -> float:
        full = min(self.base_seconds * 2 ** min(attempt - 1, 30), self.max_seconds)
        return full * random.uniform(0.8, 1.0)


def http_post(url: str, body: bytes, headers: dict, *, timeout: float) -> int:
    """POST ``body`` to ``url``; the answer's status. Redirects are not followed."""
    parts = urlsplit(url)
    if parts.scheme == "https":
        connection = HTTPSConnection(parts.hostname, parts.port, timeout=timeout,
                                     context=ssl.create_default_context())
    else:  # only a test's URL policy lets http:// through
        connection = HTTPConnection(parts.hostname, parts.port, timeout=timeout)
    target = (parts.path or "/") + (f"?{parts.query}" if parts.query else "")
    try:
        connection.request("POST", target, body=body, headers={
            **headers, "Content-Type": "application/json", "User-Agent": USER_AGENT})
        response = connection.getresponse()
        response.read(65536)
        return response.status
    finally:
        connection.close()


@translating
class WebhookSender:
    """Sends due deliveries. ``post`` is ``http_post``'s shape; ``url_policy`` is checked
    again before each send (a test's policy may allow http://127.0.0.1)."""

    def __init__(self, *, endpoints: WebhookEndpoints, deliveries: WebhookDeliveries,
                 retry: RetryRule | None = None, timeout_seconds: float = 10.0,
                 lease_seconds: float | None = None, url_policy=None, post=http_post,
                 threads: int = 8, batch: int = 100, clock=time.time):
        self.endpoints = endpoints
        self.deliveries = deliveries
        self.retry = retry or RetryRule()
        self.timeout_seconds = timeout_seconds
        # Longer than any send can take, so a live sender's claim never lapses under it.
        self.lease_seconds = lease_seconds or 2 * timeout_seconds + 30
        self.url_policy = url_policy or HttpsOnly()
        self.post = post
        self.threads = threads
        self.batch = batch
        self.clock = clock
        self.runner = uuid.uuid4().hex

    def run(self, stop, *, interval: float, report=None) -> None:
        """Passes until ``stop`` is set; ``report(outcomes)`` after a pass that did something."""
        while not stop.is_set():
            try:
                outcomes = self.run_pass()
            except Exception:  # noqa: BLE001 - the store may be back next pass
                logger.exception("Webhook pass failed; trying again")
                outcomes = {}
            if outcomes and report is not None:
                report(outcomes)
            stop.wait(interval)

    def run_pass(self) -> dict:
        """Attempt every delivery due now; the count of each outcome."""
        due = self.deliveries.due(now=self.clock(), limit=self.batch)
        if not due:
            return {}
        endpoints = {e.id: e for e in map(endpoint_from_item, self.endpoints.all())}
        with ThreadPoolExecutor(self.threads, thread_name_prefix="webhook") as pool:
            outcomes = pool.map(lambda d: self.attempt(d, endpoints.get(d["endpoint_id"])), due)
            return dict(Counter(outcomes))

    def attempt(self, delivery: dict, endpoint) -> str:
        """Claim the delivery's next attempt and make it (unless another worker did)."""
        delivery_id = delivery["delivery_id"]
        if endpoint is None or not endpoint.active:
            why = "endpoint removed" if endpoint is None else "endpoint disabled"
            self.deliveries.abandon(delivery_id, self._entry(0, self.clock(), 0, why),
                                    now=self.clock())
            return ABANDONED
        claimed = self.deliveries.claim(delivery_id, seen=int(delivery["attempts"]),
                                        now=self.clock(), lease_seconds=self.lease_seconds,
                                        runner=self.runner)
        if claimed is None:
            return CLAIMED_ELSEWHERE
        return self.send(claimed, endpoint)

    def send(self, delivery: dict, endpoint) -> str:
        """POST the claimed attempt, then record what happened."""
        attempt, delivery_id = int(delivery["attempts"]), delivery["delivery_id"]
        status, error, started = self._post(delivery, endpoint)
        entry = self._entry(attempt, started, status, error)
        if not error:
            self.deliveries.delivered(delivery_id, entry, now=self.clock())
            if endpoint.failing_since is not None:  # as this pass read it: a failure
                self.endpoints.succeeded(endpoint.id)  # since then is cleared next pass
            return DELIVERED
        self.deliveries.retry_at(delivery_id, entry, attempt=attempt,
                                 at=self.clock() + self.retry.delay(attempt))
        self._endpoint_failed(endpoint)
        return RETRYING

    def _post(self, delivery, endpoint):
        started, body = self.clock(), delivery["body"].encode()
        refused = self.url_policy.refusal(endpoint.url)
        if refused:
            return 0, refused, started
        try:
            status = self.post(endpoint.url, body,
                               signing.headers(endpoint.secret, delivery["delivery_id"], body),
                               timeout=self.timeout_seconds)
        except Exception as error:  # noqa: BLE001 - the receiver's failure, not ours
            return 0, f"{type(error).__name__}: {error}"[:300], started
        return status, "" if 200 <= status < 300 else f"HTTP {status}", started

    def _entry(self, attempt, started, status, error) -> dict:
        return {"attempt": attempt, "at": Decimal(f"{started:.3f}"), "status_code": status,
                "error": error, "ms": int((self.clock() - started) * 1000)}

    def _endpoint_failed(self, endpoint) -> None:
        now = self.clock()
        current = self.endpoints.failed(endpoint.id, now=now)
        if current is None or now - float(current["failing_since"]) < self.retry.disable_after_seconds:
            return
        hours = self.retry.disable_after_seconds / 3600
        reason = f"Every delivery failed for {hours:g} hours."
        if self.endpoints.disable(endpoint.id, since=current["failing_since"], reason=reason,
                                  now=now):
            logger.warning("Webhook endpoint %s disabled: %s", endpoint.id, reason)
