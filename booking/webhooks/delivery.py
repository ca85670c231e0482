"""Send the deliveries owed, at least once, each attempt claimed exactly once.

The booking worker runs ``WebhookSender.run`` on a thread of its own. Every interval it
queries the deliveries that are due and starts a lane for each endpoint that has none
running (a slow endpoint's lane holds only its own deliveries; the others go on). A lane
claims one attempt of each of its deliveries in turn (``WebhookDeliveries.claim``: only
one worker wins attempt ``n``, and the claim is a lease), checks the URL again (its host
resolved once, ``addresses``), then POSTs the fixed body with fresh Standard Webhooks
headers (``signing``) to the checked address, within one deadline for the whole attempt.
A 2xx answer records the delivery done; anything else (another status, the deadline, a
refused connection or address) schedules the next attempt after an exponential backoff. The outcome is recorded only after the send, so a
worker killed mid-send leaves a claim that lapses, and the next worker sends the same
``webhook-id`` again: receivers drop duplicates by that id.

An endpoint failing without a single success for ``disable_after_seconds`` (a day by
default) is disabled, the organizer sees why in the admin, and what is still owed to it
(or to a deleted endpoint) is abandoned.
"""
import io
import logging
import random
import socket
import ssl
import threading
import time
import uuid
from collections import Counter
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from decimal import Decimal
from functools import partial
from http.client import HTTPConnection, HTTPException, HTTPResponse

from booking.dynamo.webhooks import WebhookDeliveries, WebhookEndpoints
from booking.webhooks import signing
from booking.webhooks.addresses import PublicUrls, Refused, Target
from booking.webhooks.fanout import body as payload  # the deliveries' shape
from booking.webhooks.registry import endpoint_from_item

logger = logging.getLogger(__name__)
DELIVERED, RETRYING, ABANDONED, CLAIMED_ELSEWHERE = (
    "delivered", "retrying", "abandoned", "claimed_elsewhere")
USER_AGENT = "event-booking-webhooks/1"
# What the delivery log says of a failed attempt, besides "HTTP <status>" and the URL rule's
# refusals (``addresses``): fixed words, so that the log is no port scanner.
TIMED_OUT, TLS_FAILED, NO_CONNECTION, NO_ANSWER, FAILED = (
    "timed out", "TLS failed", "could not connect", "no answer", "failed")


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


class Deadline:
    """One deadline for a whole attempt: ``remaining()`` seconds, ``TimeoutError`` once past."""

    def __init__(self, seconds: float, clock=time.monotonic):
        self.clock, self.at = clock, clock() + seconds

    def remaining(self) -> float:
        left = self.at - self.clock()
        if left <= 0:
            raise TimeoutError("the attempt's deadline passed")
        return left


class DeliveryFailed(Exception):
    """An attempt that failed, in a few fixed words for the log (``TIMED_OUT`` ...): never
    the socket's own error, which would tell a closed port from an open one."""


class _DeadlineReader(io.RawIOBase):
    """The answer's bytes, each read given only the time left before the deadline."""

    def __init__(self, sock, deadline: Deadline):
        super().__init__()
        self.sock, self.deadline = sock, deadline

    def readable(self) -> bool:
        return True

    def readinto(self, buffer) -> int:
        self.sock.settimeout(self.deadline.remaining())
        return self.sock.recv_into(buffer)


class _DeadlineResponse(HTTPResponse):
    def __init__(self, sock, *args, deadline: Deadline, **kwargs):
        super().__init__(sock, *args, **kwargs)
        self.fp.close()
        self.fp = io.BufferedReader(_DeadlineReader(sock, deadline))


class PinnedConnection(HTTPConnection):
    """HTTP(S) to ``address``, the one that was checked, while the Host header, TLS's server
    name and the certificate check use the URL's host; every step within ``deadline``."""

    def __init__(self, target: Target, address: str, deadline: Deadline, *, tls=None):
        super().__init__(target.host, target.port, timeout=deadline.remaining())
        self.address, self.deadline, self.tls = address, deadline, tls
        # http.client calls response_class(sock, method=...): a class, or this partial of one
        self.response_class = partial(  # type: ignore[assignment]
            _DeadlineResponse, deadline=deadline)
        if tls is not None:
            self.default_port = 443  # the Host header names no port for https on 443

    reading = False  # the answer's body is still to be read from this socket

    def close(self) -> None:
        """As HTTPConnection's, except while the answer's body is being read: an answer
        that closes the connection would otherwise close the socket it is read from."""
        if not self.reading:
            super().close()

    def connect(self) -> None:
        raw = socket.create_connection((self.address, self.port),
                                       timeout=self.deadline.remaining())
        if self.tls is None:
            self.sock = raw
            return
        try:
            raw.settimeout(self.deadline.remaining())  # the whole handshake (ssl's rule)
            self.sock = self.tls.wrap_socket(raw, server_hostname=self.host)
        except BaseException:
            raw.close()
            raise


def _connect(target: Target, deadline: Deadline) -> PinnedConnection:
    """A connection to the first of the target's checked addresses that answers."""
    tls = ssl.create_default_context() if target.scheme == "https" else None
    for address in target.addresses:
        try:
            connection = PinnedConnection(target, address, deadline, tls=tls)
            connection.connect()
            return connection
        except TimeoutError:
            raise DeliveryFailed(TIMED_OUT) from None
        except ssl.SSLError:  # (and certificate errors) before OSError: it is one too
            raise DeliveryFailed(TLS_FAILED) from None
        except OSError:
            continue
    raise DeliveryFailed(NO_CONNECTION)


def http_post(target: Target, body: bytes, headers: dict, *, timeout: float) -> int:
    """POST ``body`` to the checked ``target``; the answer's status, all within ``timeout``
    seconds (connect, TLS, send, the answer's status line and headers). Redirects are not
    followed; the answer's body is not read. Failures raise ``DeliveryFailed``."""
    return http_exchange(target, body, headers, timeout=timeout)[0]


def http_exchange(target: Target, body: bytes, headers: dict, *, timeout: float,
                  read: int = 0) -> tuple[int, bytes]:
    """As ``http_post``, and the first ``read`` bytes of the answer's body (within the same
    deadline): (status, those bytes)."""
    deadline = Deadline(timeout)
    connection = _connect(target, deadline)
    try:
        connection.sock.settimeout(deadline.remaining())
        connection.request("POST", target.path, body=body, headers={
            **headers, "Content-Type": "application/json", "User-Agent": USER_AGENT})
        connection.reading = bool(read)
        answer = connection.getresponse()
        return answer.status, answer.read(read) if read else b""
    except TimeoutError:
        raise DeliveryFailed(TIMED_OUT) from None
    except (OSError, HTTPException):
        raise DeliveryFailed(TIMED_OUT if deadline.at <= deadline.clock() else NO_ANSWER) from None
    finally:
        connection.reading = False
        connection.close()


PING = "ping"
EXCERPT_BYTES = 500  # of a test ping's answer, shown to the organizer


@dataclass(frozen=True)
class PingAnswer:
    """What a test ping met: the answer's status (0: none), how long it took, the start of
    the answer's body (as text), or why it failed (the delivery log's words)."""

    status: int
    ms: int
    excerpt: str
    error: str

    @property
    def ok(self) -> bool:
        return not self.error and 200 <= self.status < 300


class WebhookSender:
    """Sends due deliveries. ``post`` is ``http_post``'s shape; ``url_policy`` is checked
    (and the host resolved) again before each send; ``deadline_seconds`` bounds each
    attempt as a whole.

    One slow endpoint holds only its own deliveries: each endpoint's due deliveries go
    through at most ``per_endpoint`` lanes (one attempt after another) on a pool of
    ``threads``, and ``run`` starts lanes for the other endpoints every ``interval``
    without waiting for a slow lane to finish.
    """

    def __init__(self, *, endpoints: WebhookEndpoints, deliveries: WebhookDeliveries,
                 retry: RetryRule | None = None, deadline_seconds: float = 10.0,
                 lease_seconds: float | None = None, url_policy=None, post=http_post,
                 threads: int = 8, per_endpoint: int = 1, batch: int = 100,
                 clock=time.time, exchange=http_exchange):
        self.endpoints = endpoints
        self.deliveries = deliveries
        self.retry = retry or RetryRule()
        self.deadline_seconds = deadline_seconds
        # Longer than any send can take, so a live sender's claim never lapses under it.
        self.lease_seconds = lease_seconds or 2 * deadline_seconds + 30
        self.url_policy = url_policy or PublicUrls()
        self.post = post
        self.exchange = exchange  # a test ping's, which reads the start of the answer
        self.threads = threads
        self.per_endpoint = per_endpoint
        self.batch = batch
        self.clock = clock
        self.runner = uuid.uuid4().hex

    def run(self, stop, *, interval: float, report=None) -> None:
        """Start lanes every ``interval`` until ``stop`` is set, then let the running ones
        finish; ``report(outcomes)`` when lanes finished since the last look."""
        lanes = _Lanes(stop)
        with ThreadPoolExecutor(self.threads, thread_name_prefix="webhook") as pool:
            while not stop.is_set():
                try:
                    self.dispatch(pool, lanes)
                except Exception:  # noqa: BLE001 - the store may be back next pass
                    logger.exception("Webhook pass failed; trying again")
                outcomes = lanes.take_outcomes()
                if outcomes and report is not None:
                    report(outcomes)
                stop.wait(interval)

    def run_pass(self) -> dict:
        """Attempt every delivery due now and wait for all; the count of each outcome."""
        lanes = _Lanes()
        with ThreadPoolExecutor(self.threads, thread_name_prefix="webhook") as pool:
            futures = self.dispatch(pool, lanes)
            for future in futures:
                future.result()
        return lanes.take_outcomes()

    def dispatch(self, pool, lanes: "_Lanes") -> list:
        """Start lanes for the due deliveries of endpoints with a lane to spare (those of
        endpoints whose lanes are all busy are skipped, not waited for); their futures."""
        due = self.deliveries.due(now=self.clock(), limit=self.batch,
                                  skip_endpoints=lanes.full(self.per_endpoint))
        due = [d for d in due if d["delivery_id"] not in lanes.in_flight]
        if not due:
            return []
        endpoints = {e.id: e for e in map(endpoint_from_item, self.endpoints.all())}
        futures = []
        for endpoint_id, work in _group(due).items():
            spare = self.per_endpoint - lanes.busy.get(endpoint_id, 0)
            for share in (work[n::spare] for n in range(min(spare, len(work)))):
                lanes.start(endpoint_id, share)
                futures.append(pool.submit(self._lane, endpoints.get(endpoint_id), share, lanes))
        return futures

    def _lane(self, endpoint, work: list, lanes: "_Lanes") -> None:
        outcomes = []
        try:
            for delivery in work:
                if lanes.stop.is_set():  # the worker is stopping: the rest stays due
                    break
                outcomes.append(self.attempt(delivery, endpoint))
        except Exception:  # noqa: BLE001 - the rest stays due for the next lane
            logger.exception("Webhook lane failed; its deliveries stay due")
        finally:
            lanes.finish(work[0]["endpoint_id"], work, outcomes)

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
        try:
            target = self.url_policy.target(endpoint.url)  # resolved once, for this attempt
        except Refused as refused:
            return 0, refused.log, started
        try:
            status = self.post(target, body,
                               signing.headers(endpoint.secret, delivery["delivery_id"], body),
                               timeout=self.deadline_seconds)
        except DeliveryFailed as failed:
            return 0, str(failed), started
        except TimeoutError:
            return 0, TIMED_OUT, started
        except Exception:  # noqa: BLE001 - the receiver's failure, not ours; no details
            logger.info("Webhook attempt to endpoint %s failed", endpoint.id, exc_info=True)
            return 0, FAILED, started
        return status, "" if 200 <= status < 300 else f"HTTP {status}", started

    def ping(self, endpoint, *, now: float | None = None) -> PingAnswer:
        """Send a signed ``ping`` (type ``ping``, data: the endpoint's id and organizer)
        to ``endpoint`` now, as a delivery is sent (the URL rule checked again, one
        deadline), and return its answer. Stored nowhere: nothing is retried or logged."""
        started = self.clock() if now is None else now
        body = payload(PING, started, {"endpoint_id": endpoint.id,
                                       "organizer": endpoint.organizer}).encode()
        webhook_id = f"msg_ping_{uuid.uuid4().hex}"

        def took() -> int:
            return int((self.clock() - started) * 1000)
        try:
            target = self.url_policy.target(endpoint.url)
            status, excerpt = self.exchange(
                target, body, signing.headers(endpoint.secret, webhook_id, body),
                timeout=self.deadline_seconds, read=EXCERPT_BYTES)
        except Refused as refused:
            return PingAnswer(0, took(), "", refused.log)
        except DeliveryFailed as failed:
            return PingAnswer(0, took(), "", str(failed))
        except Exception:  # noqa: BLE001 - the receiver's failure, not ours; no details
            logger.info("Webhook ping to endpoint %s failed", endpoint.id, exc_info=True)
            return PingAnswer(0, took(), "", FAILED)
        error = "" if 200 <= status < 300 else f"HTTP {status}"
        return PingAnswer(status, took(), excerpt.decode("utf-8", "replace"), error)

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


class _Lanes:
    """The lanes in flight, per endpoint, and the outcomes of those that finished."""

    def __init__(self, stop: threading.Event | None = None):
        self.stop = stop or threading.Event()
        self.lock = threading.Lock()
        self.busy: dict[str, int] = {}
        self.in_flight: set[str] = set()
        self.outcomes: Counter = Counter()

    def full(self, per_endpoint: int) -> frozenset:
        with self.lock:
            return frozenset(e for e, n in self.busy.items() if n >= per_endpoint)

    def start(self, endpoint_id: str, work: list) -> None:
        with self.lock:
            self.busy[endpoint_id] = self.busy.get(endpoint_id, 0) + 1
            self.in_flight.update(d["delivery_id"] for d in work)

    def finish(self, endpoint_id: str, work: list, outcomes: list) -> None:
        with self.lock:
            self.busy[endpoint_id] -= 1
            if not self.busy[endpoint_id]:
                del self.busy[endpoint_id]
            self.in_flight.difference_update(d["delivery_id"] for d in work)
            self.outcomes.update(outcomes)

    def take_outcomes(self) -> dict:
        with self.lock:
            taken, self.outcomes = dict(self.outcomes), Counter()
            return taken


def _group(due: list) -> dict:
    """The due deliveries by endpoint, each endpoint's oldest first."""
    grouped: dict[str, list] = {}
    for delivery in due:
        grouped.setdefault(delivery["endpoint_id"], []).append(delivery)
    return grouped
