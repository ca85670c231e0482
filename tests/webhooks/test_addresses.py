"""Webhook URLs reach public addresses only: refused at registration (every numeric
spelling, IPv6 forms, names resolving inside, odd ports) with nothing stored, and again at
send time when the name has since come to resolve to 127.0.0.1; the sender connects to the
address it checked, never looking the name up a second time.

Controls: a URL rule that checks only the scheme and host (the rule before) accepts every
spelling; a sender that trusts the check made at registration posts to 127.0.0.1; a post
that connects by name (a second lookup) does not reach the checked address.
"""
import json
from http.client import HTTPConnection
from urllib.parse import urlsplit

import pytest

from booking.errors import InvalidBooking
from booking.mail.sender import send_owed
from booking.webhooks.addresses import NOT_PUBLIC, UNUSABLE, PublicUrls, Refused, Target
from booking.webhooks.delivery import DELIVERED, RETRYING, USER_AGENT, http_post
from booking.wiring import mail_sender, webhook_registry, webhook_sender
from tests.webhooks.receiver import Receiver
from tests.webhooks.test_webhooks import owed

PUBLIC = "93.184.215.14"
INSIDE_URLS = [
    "https://127.0.0.1/h", "https://localhost/h", "https://[::1]/h",
    "https://[::ffff:127.0.0.1]/h", "https://127.1/h", "https://2130706433/h",
    "https://0x7f000001/h", "https://0177.0.0.1/h", "https://0.0.0.0/h",
    "https://169.254.169.254/latest/meta-data/", "https://metadata.google.internal/h",
    "https://10.0.0.1/h", "https://192.168.1.1/h", "https://172.16.0.1/h",
    "https://100.64.0.1/h", "https://224.0.0.1/h", "https://240.0.0.1/h",
    "https://[fe80::1]/h", "https://[fc00::1]/h", "https://[ff02::1]/h", "https://[::]/h",
    "https://[::127.0.0.1]/h", "https://[2002:7f00:1::]/h", "https://[64:ff9b::7f00:1]/h",
    "https://hooks.example.com:0/h", "https://hooks.example.com:99999/h",
    "https://hooks.example.com:22/h", "https://hooks.example.com:80/h",
]


class Dns:
    """A resolver collaborator: ``answers[name]`` is what the name resolves to now (a
    test may change it), and every lookup is counted."""

    def __init__(self, **answers):
        self.answers = {"inside.test": ["10.1.2.3"], "metadata.google.internal":
                        ["169.254.169.254"], "localhost": ["127.0.0.1", "::1"],
                        "hooks.example.com": [PUBLIC], **answers}
        self.lookups = []

    def __call__(self, host, port):
        self.lookups.append(host)
        if host not in self.answers:
            raise OSError("no such name")
        return list(self.answers[host])


class SchemeAndHostOnly(PublicUrls):
    """Control: the rule before (https and a host name, nothing about where it goes)."""

    def target(self, url, *, resolve=True):
        parts = urlsplit(url)
        if parts.scheme != "https" or not parts.hostname:
            raise Refused("Enter an https:// URL with a host name.")
        return Target(url, "https", parts.hostname, 443, parts.path, (parts.hostname,))


def accepted(registry) -> list[str]:
    """The inside URLs ``registry`` registers (each refusal checked to store nothing and
    to say the one text)."""
    taken = []
    for url in INSIDE_URLS:
        try:
            registry.register(url=url, events=["registration.created"])
            taken.append(url)
        except InvalidBooking as refused:
            assert refused.field == "url" and refused.message == UNUSABLE
    return taken


@pytest.fixture
def no_allowance(settings):
    settings.WEBHOOK_ALLOWED_HOSTS = []


def test_register__every_inside_spelling__refused_clearly_nothing_stored(service, no_allowance):
    registry = webhook_registry(service, resolver=Dns())

    assert accepted(registry) == []
    assert registry.listing() == []
    assert "WEBHOOK_ALLOWED_HOSTS" in UNUSABLE and "port 443 or 1024-65535" in UNUSABLE
    for url in ("https://hooks.example.com/h", "https://hooks.example.com:8443/h",
                f"https://{PUBLIC}/h", "https://[2001:4860:4860::8888]/h"):
        registry.register(url=url, events=["registration.created"])
    assert len(registry.listing()) == 4


def test_control__scheme_and_host_only_rule__takes_every_inside_spelling(service, no_allowance):
    registry = webhook_registry(service, url_policy=SchemeAndHostOnly())

    assert accepted(registry) == INSIDE_URLS


@pytest.mark.django_db
def test_register_over_the_api__inside_address__400_nothing_stored(client, service, no_allowance):
    from tests.api.test_organizer import issue

    _, auth = issue("write")
    for n, url in enumerate(("https://127.1/h", "https://[::1]/h", "https://localhost/h",
                             "https://hooks.example.com:99999/h")):
        answer = client.post("/api/v1/webhooks/", json.dumps(
            {"url": url, "events": ["registration.created"]}),
            content_type="application/json", HTTP_IDEMPOTENCY_KEY=f"inside-{n}", **auth)
        assert answer.status_code == 400, (url, answer.content)
        assert answer["Content-Type"].startswith("application/problem+json")
    assert client.get("/api/v1/webhooks/", **auth).json() == []


class PlainHttpToo(PublicUrls):
    """The product's rule, with http:// too: the test's receiver speaks plain HTTP."""

    schemes = ("https", "http")


class TrustsRegistration(PlainHttpToo):
    """Control: a sender's rule that trusts the check made at registration."""

    def _addresses(self, host, port, allowed):
        return super()._addresses(host, port, True)


def rebound_delivery(service, sender_policy):
    """Register while the name resolves to a public address, then let it resolve to the
    receiver on 127.0.0.1 and run a pass; (the log's error, what the receiver got)."""
    dns = Dns(**{"rebind.test": [PUBLIC]})
    with Receiver() as receiver:
        port = receiver.server.server_address[1]
        webhook_registry(service, url_policy=PlainHttpToo(resolver=dns)).register(
            url=f"http://rebind.test:{port}/hook", events=["registration.created"])
        event = service.create_event(name="Rebound", capacity=3, strategy="lock_table")
        service.book(event.id, name="Ada", email="ada@example.com")
        send_owed(mail_sender(service), min_age=0)
        dns.answers["rebind.test"] = ["127.0.0.1"]
        webhook_sender(service, url_policy=sender_policy(resolver=dns),
                       deadline_seconds=5).run_pass()
        [row] = owed(service).values()
        return row["log"][-1]["error"], list(receiver.received)


def test_send__name_now_resolves_to_loopback__refused_and_logged(service, no_allowance):
    error, received = rebound_delivery(service, PlainHttpToo)

    assert error == NOT_PUBLIC == "refused: not a public address"
    assert received == []


def test_control__sender_trusting_registration__posts_to_loopback(service, no_allowance):
    error, received = rebound_delivery(service, TrustsRegistration)

    assert error == "" and len(received) == 1


def post_by_name(target, body, headers, *, timeout):
    """Control: the post before, connecting by the name (a second lookup)."""
    connection = HTTPConnection(target.host, target.port, timeout=timeout)
    try:
        connection.request("POST", target.path, body=body, headers=headers)
        return connection.getresponse().status
    finally:
        connection.close()


def pinned_delivery(service, post):
    """A development host name resolved by the test's DNS to the receiver; a pass with
    ``post``: (the outcomes, the lookups made, the Host headers the receiver saw)."""
    dns, hosts = Dns(**{"hooks.dev.test": ["127.0.0.1"]}), []
    with Receiver() as receiver:
        original = receiver.answer
        receiver.answer = lambda handler, body: (hosts.append(handler.headers["Host"]),
                                                  original(handler, body))
        policy = PlainHttpToo(resolver=dns, allowed_hosts=["hooks.dev.test"])
        port = receiver.server.server_address[1]
        webhook_registry(service, url_policy=policy).register(
            url=f"http://hooks.dev.test:{port}/hook", events=["registration.created"])
        event = service.create_event(name="Pinned", capacity=3, strategy="lock_table")
        service.book(event.id, name="Ada", email="ada@example.com")
        send_owed(mail_sender(service), min_age=0)
        dns.lookups.clear()
        outcomes = webhook_sender(service, url_policy=policy, post=post,
                                  deadline_seconds=5).run_pass()
    return outcomes, dns.lookups, hosts, port


def test_send__connects_to_the_checked_address__one_lookup_name_in_host_header(service):
    outcomes, lookups, hosts, port = pinned_delivery(service, http_post)

    assert outcomes == {DELIVERED: 1}
    assert lookups == ["hooks.dev.test"]
    assert hosts == [f"hooks.dev.test:{port}"]


def test_control__post_that_looks_the_name_up_again__misses_the_checked_address(service):
    outcomes, lookups, hosts, _ = pinned_delivery(service, post_by_name)

    assert outcomes == {RETRYING: 1} and hosts == []


def test_send__failures_logged_in_fixed_words__no_socket_error_text(service):
    closed = Target("http://127.0.0.1:1/h", "http", "127.0.0.1", 1, "/h", ("127.0.0.1",))
    with pytest.raises(Exception) as failed:
        http_post(closed, b"{}", {"User-Agent": USER_AGENT}, timeout=2)

    assert str(failed.value) == "could not connect"
    assert "Refused" not in str(failed.value) and "Errno" not in str(failed.value)


def test_check__development_allowance_with_debug_off__warns(settings):
    from booking.checks import webhook_allowed_hosts_check

    settings.DEBUG, settings.WEBHOOK_ALLOWED_HOSTS = False, ["127.0.0.1"]
    assert [w.id for w in webhook_allowed_hosts_check()] == ["booking.W020"]
    settings.DEBUG = True
    assert webhook_allowed_hosts_check() == []
    settings.DEBUG, settings.WEBHOOK_ALLOWED_HOSTS = False, []
    assert webhook_allowed_hosts_check() == []



# --- the fourth round: no host-name oracle, no lookup of an organizer's name at save ----
def test_register__names_not_looked_up__inside_and_unknown_names_alike(service, no_allowance):
    dns = Dns()
    registry = webhook_registry(service, resolver=dns)

    for url in ("https://inside.test/h", "https://nowhere.test/h"):
        registry.register(url=url, events=["registration.created"])

    assert dns.lookups == []  # the web process resolved nothing the organizer chose
    assert len(registry.listing()) == 2


def test_send__inside_and_unknown_names__refused_alike_in_the_log(service, no_allowance):
    dns = Dns()
    webhook_registry(service, url_policy=PlainHttpToo(resolver=dns)).register(
        url="http://inside.test:8443/hook", events=["registration.created"])
    webhook_registry(service, url_policy=PlainHttpToo(resolver=dns)).register(
        url="http://nowhere.test:8443/hook", events=["registration.created"])
    event = service.create_event(name="Alike", capacity=3, strategy="lock_table")
    service.book(event.id, name="Ada", email="ada@example.com")
    send_owed(mail_sender(service), min_age=0)

    webhook_sender(service, url_policy=PlainHttpToo(resolver=dns), deadline_seconds=5).run_pass()

    errors = sorted(row["log"][-1]["error"] for row in owed(service).values())
    assert errors == [NOT_PUBLIC, NOT_PUBLIC]
    assert sorted(dns.lookups) == ["inside.test", "nowhere.test"]  # at delivery


@pytest.mark.django_db
def test_register_over_the_api__loopback_http__one_text_naming_the_setting(client, service,
                                                                          no_allowance):
    from tests.api.test_organizer import issue

    _, auth = issue("write")
    answers = [client.post("/api/v1/webhooks/", json.dumps(
        {"url": url, "events": ["registration.created"]}), content_type="application/json",
        HTTP_IDEMPOTENCY_KEY=f"one-text-{n}", **auth).json()["detail"]
        for n, url in enumerate(("http://127.0.0.1:8000/h", "https://localhost/h",
                                 "https://10.0.0.1/h", "https://hooks.example.com:22/h"))]

    assert answers == [UNUSABLE] * 4
