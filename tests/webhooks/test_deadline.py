"""A receiver that trickles its answer is cut off at the attempt's deadline and recorded
as failed, and another organizer's endpoint, due in the same pass, is delivered before
the slow one's deadline has passed: one slow endpoint holds only its own deliveries.

Both receivers listen on 127.0.0.1 (the development allowance). The slow one answers a
valid ``204`` one byte every ``BYTE_EVERY`` seconds, well within any per-read timeout.
Controls: the post before (a timeout per socket read) lets the trickle run to its end and
records it delivered; the pass before (a pool mapped over the due deliveries, oldest
first) gives the slow endpoint's deliveries every thread, and the other waits.
"""
import threading
import time
from collections import Counter
from concurrent.futures import ThreadPoolExecutor
from http.client import HTTPConnection

import pytest

from booking.dynamo.webhooks import WebhookDeliveries
from booking.webhooks.delivery import DELIVERED, RETRYING, TIMED_OUT, WebhookSender
from booking.webhooks.registry import endpoint_from_item
from booking.wiring import webhook_registry, webhook_sender
from harness.attack_webhooks import Trickler
from tests.webhooks.receiver import LoopbackHttp, Receiver
from tests.webhooks.test_webhooks import owed

pytestmark = pytest.mark.concurrency
DEADLINE = 1.0
BYTE_EVERY = 0.15
SLOW_DELIVERIES = 2


class TimedReceiver(Receiver):
    """The fast receiver, noting when each POST arrived (monotonic)."""

    def __init__(self):
        super().__init__()
        self.arrived = []

    def answer(self, handler, body):
        self.arrived.append(time.monotonic())
        super().answer(handler, body)


def per_read_post(target, body, headers, *, timeout):
    """Control: the post before, whose timeout is per socket read."""
    connection = HTTPConnection(target.addresses[0], target.port, timeout=timeout)
    try:
        connection.request("POST", target.path, body=body, headers=headers)
        response = connection.getresponse()
        response.read(65536)
        return response.status
    finally:
        connection.close()


class WaitingPassSender(WebhookSender):
    """Control: the pass before: a pool mapped over the due deliveries, oldest first,
    whichever endpoint they are for."""

    def run_pass(self):
        due = self.deliveries.due(now=self.clock(), limit=self.batch)
        endpoints = {e.id: e for e in map(endpoint_from_item, self.endpoints.all())}
        with ThreadPoolExecutor(self.threads) as pool:
            return dict(Counter(pool.map(lambda d: self.attempt(d, endpoints[d["endpoint_id"]]),
                                         due)))


def one_pass(service, **sender_parts):
    """Two organizers' endpoints (the slow one's deliveries older), one pass of a sender
    with two threads; what the test measures."""
    registry = webhook_registry(service, url_policy=LoopbackHttp())
    trickler = Trickler(every=BYTE_EVERY)  # 28 bytes: 4.2 s for the whole answer
    with TimedReceiver() as fast:
        slow_hook = registry.register(url=f"http://127.0.0.1:{trickler.port}/slow",
                                      events=["registration.created"], owner="1")
        fast_hook = registry.register(url=fast.url("fast"), events=["registration.created"],
                                      owner="2")
        deliveries, now = WebhookDeliveries(service.store), time.time()
        for n in range(SLOW_DELIVERIES):
            deliveries.add({"delivery_id": f"msg_slow{n}", "endpoint_id": slow_hook.id,
                            "event_type": "registration.created", "event_id": "ev-a",
                            "body": "{}"}, now=now - 10 + n, ttl=int(now + 3600))
        deliveries.add({"delivery_id": "msg_fast", "endpoint_id": fast_hook.id,
                        "event_type": "registration.created", "event_id": "ev-b",
                        "body": "{}"}, now=now - 5, ttl=int(now + 3600))
        sender = webhook_sender(service, url_policy=LoopbackHttp(), deadline_seconds=DEADLINE,
                                threads=2, **sender_parts)
        outcomes = sender.run_pass()
        trickler.close()
    rows = owed(service)
    return {"outcomes": outcomes, "slow_started": trickler.accepted[0],
            "fast_arrived": fast.arrived, "fast": rows["msg_fast"],
            "slow": [rows[f"msg_slow{n}"] for n in range(SLOW_DELIVERIES)]}


def check(seen) -> list[str]:
    """What breaks "the trickle is cut at the deadline and failed; the other endpoint is
    delivered before the slow one's deadline passed"."""
    wrong = []
    if seen["fast"]["status"] != "delivered":
        wrong.append(f"fast endpoint not delivered: {seen['fast']['status']}")
    elif seen["fast_arrived"][0] >= seen["slow_started"] + DEADLINE / 2:
        # Waiting for a slow attempt means arriving about its deadline after it was
        # accepted; half of it leaves room for a loaded machine on either side.
        wrong.append("fast endpoint waited for the slow one's deadline: "
                     f"{seen['fast_arrived'][0] - seen['slow_started']:.2f} s after it began")
    for row in seen["slow"]:
        [entry] = row["log"][-1:] or [{}]
        if row["status"] != "pending" or entry.get("error") != TIMED_OUT:
            wrong.append(f"slow delivery {row['status']}, logged {entry.get('error')!r}")
        elif not DEADLINE * 1000 <= entry["ms"] < 2 * DEADLINE * 1000:
            wrong.append(f"slow attempt took {entry['ms']} ms for a {DEADLINE} s deadline")
    return wrong


def test_trickling_receiver__cut_at_deadline_other_organizer_delivered_in_time(service):
    seen = one_pass(service)

    assert check(seen) == []
    assert seen["outcomes"] == {DELIVERED: 1, RETRYING: SLOW_DELIVERIES}


def test_control__per_read_timeout__trickle_recorded_delivered(service):
    seen = one_pass(service, post=per_read_post)

    assert any("slow delivery delivered" in w for w in check(seen))


def test_control__pass_mapped_over_due__other_organizer_waits(service):
    seen = one_pass(service, sender_class=WaitingPassSender)

    found = check(seen)
    assert any("waited for the slow one's deadline" in w for w in found), (found, seen)


class PassAtATimeSender(WebhookSender):
    """Control: the worker's loop before: one pass after another, each waiting for its
    slowest send before the next looks for what became due."""

    def run(self, stop, *, interval, report=None):
        while not stop.is_set():
            self.run_pass()
            stop.wait(interval)


def wait_for(condition, seconds):
    deadline = time.monotonic() + seconds
    while not condition() and time.monotonic() < deadline:
        time.sleep(0.01)
    return condition()


def owed_while_running(service, sender_class=WebhookSender):
    """The worker's loop runs; while its attempt at the slow endpoint is in flight, another
    organizer's delivery becomes due: seconds from the slow attempt's start to its arrival."""
    registry = webhook_registry(service, url_policy=LoopbackHttp())
    trickler, deliveries = Trickler(every=BYTE_EVERY), WebhookDeliveries(service.store)
    with TimedReceiver() as fast:
        slow_hook = registry.register(url=f"http://127.0.0.1:{trickler.port}/slow",
                                      events=["registration.created"], owner="1")
        fast_hook = registry.register(url=fast.url("fast"), events=["registration.created"],
                                      owner="2")
        item = {"event_type": "registration.created", "event_id": "ev", "body": "{}"}
        deliveries.add({**item, "delivery_id": "msg_slow", "endpoint_id": slow_hook.id},
                       now=time.time() - 1, ttl=int(time.time() + 3600))
        sender = webhook_sender(service, url_policy=LoopbackHttp(), deadline_seconds=DEADLINE,
                                threads=2, sender_class=sender_class)
        stop = threading.Event()
        loop = threading.Thread(target=sender.run, args=(stop,), kwargs={"interval": 0.05})
        loop.start()
        try:
            assert wait_for(lambda: trickler.accepted, 5 * DEADLINE)
            deliveries.add({**item, "delivery_id": "msg_fast", "endpoint_id": fast_hook.id},
                           now=time.time() - 0.01, ttl=int(time.time() + 3600))
            assert wait_for(lambda: fast.arrived, 5 * DEADLINE)
        finally:
            stop.set()
            loop.join()
            trickler.close()
    return fast.arrived[0] - trickler.accepted[0]


def test_worker_loop__delivery_due_while_slow_attempt_runs__sent_before_its_deadline(service):
    assert owed_while_running(service) < DEADLINE


def test_control__loop_waiting_for_each_pass__other_organizer_waits_past_deadline(service):
    assert owed_while_running(service, PassAtATimeSender) >= DEADLINE


def test_due__busy_endpoints_backlog__read_past_to_the_others(service):
    """A slow endpoint's 120 older deliveries would fill a look of 100 (the plain look, the
    control); skipping the busy endpoint finds the other organizer's delivery behind them."""
    deliveries, now = WebhookDeliveries(service.store), time.time()
    item = {"event_type": "registration.created", "event_id": "ev", "body": "{}"}
    for n in range(120):
        deliveries.add({**item, "delivery_id": f"msg_slow{n}", "endpoint_id": "ep_slow"},
                       now=now - 100 + n / 10, ttl=int(now + 3600))
    deliveries.add({**item, "delivery_id": "msg_fast", "endpoint_id": "ep_fast"},
                   now=now - 1, ttl=int(now + 3600))

    plain = deliveries.due(now=now, limit=100)
    skipping = deliveries.due(now=now, limit=100, skip_endpoints=frozenset({"ep_slow"}))

    assert {d["endpoint_id"] for d in plain} == {"ep_slow"}
    assert [d["delivery_id"] for d in skipping] == ["msg_fast"]
