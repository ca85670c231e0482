"""The Prometheus endpoint and the JSON logs (booking/metrics/, booking/web/metrics.py)."""
import json
import logging

import pytest
from prometheus_client.parser import text_string_to_metric_families

from booking import wiring
from booking.metrics.logs import JsonFormatter, booking_request_id, bound, http_request_id


def samples(text: str) -> dict:
    return {(s.name, tuple(sorted(s.labels.items()))): s.value
            for family in text_string_to_metric_families(text) for s in family.samples}


def value(found, name, **labels):
    return found.get((name, tuple(sorted(labels.items()))), 0.0)


def test_metrics__off_by_default__404(client):
    assert client.get("/metrics").status_code == 404


def test_metrics__enabled__refused_to_other_addresses_and_wrong_tokens(client, settings):
    settings.METRICS_ENABLED = True
    settings.METRICS_ALLOWED_IPS = ["10.9.0.0/16"]
    settings.METRICS_BEARER_TOKEN = "s3cret-token"

    assert client.get("/metrics", REMOTE_ADDR="127.0.0.1").status_code == 403
    assert client.get("/metrics", REMOTE_ADDR="127.0.0.1", HTTP_X_FORWARDED_FOR="10.9.1.1",
                      HTTP_AUTHORIZATION="Bearer wrong").status_code == 403
    assert client.get("/metrics", REMOTE_ADDR="10.9.3.4").status_code == 200
    assert client.get("/metrics", REMOTE_ADDR="192.0.2.1",
                      HTTP_AUTHORIZATION="Bearer s3cret-token").status_code == 200


def test_metrics__after_bookings__counters_move(client, settings, service):
    settings.METRICS_ENABLED = True
    wiring.observe(service)
    before = samples(client.get("/metrics").content.decode())
    event = service.create_event(name="Watched", capacity=2, strategy="lock_table")
    for n in range(3):
        try:
            service.book(event.id, name=f"P{n}", email=f"p{n}@example.com")
        except Exception:  # noqa: BLE001 - the third is refused: full
            pass
    service.cancel(event.id, email="p0@example.com")

    response = client.get("/metrics")

    assert response.status_code == 200
    assert response["Content-Type"].startswith("text/plain")
    after = samples(response.content.decode())

    def moved(name, **labels):
        return value(after, name, **labels) - value(before, name, **labels)

    assert moved("booking_bookings_total", strategy="lock_table", outcome="confirmed") == 2
    assert moved("booking_bookings_total", strategy="lock_table", outcome="rejected") == 1
    assert moved("booking_cancellations_total", strategy="lock_table",
                 outcome="cancelled") == 1
    assert moved("booking_dynamodb_requests_total", operation="TransactWriteItems") >= 4
    assert moved("booking_dynamodb_request_seconds_count", operation="TransactWriteItems") >= 4
    assert moved("booking_dynamodb_conditional_failures_total",
                 operation="TransactWriteItems") >= 1  # the refused booking
    assert ("booking_outbox_backlog", ()) in after
    assert ("booking_deciders_running", ()) in after


def test_metrics__waitlist_offer_counted(settings, service):
    from booking.metrics import prometheus
    from booking.waitlist import engine as waitlist_engine

    settings.METRICS_ENABLED = True
    wiring.observe(service)
    event = service.create_event(name="Line", capacity=1, strategy="lock_table")
    service.book(event.id, name="Ann", email="ann@example.com")
    service.join_waiting_list(event.id, name="Bob", email="bob@example.com")
    before = prometheus.OFFERS._value.get()

    service.cancel(event.id, email="ann@example.com")
    waitlist_engine.flush()

    assert prometheus.OFFERS._value.get() == before + 1


def test_email_failures__counted_from_the_senders_error_log():
    from booking.metrics import prometheus

    prometheus.count_mail_failures()
    before = prometheus.MAIL_FAILURES._value.get()
    logging.getLogger("booking.mail.sender").error("Could not send the confirmation e-mail x")
    assert prometheus.MAIL_FAILURES._value.get() == before + 1


def test_json_logs__one_object_per_line_with_both_request_ids():
    record = logging.LogRecord("booking.metrics", logging.INFO, __file__, 1, "book %s",
                               ("confirmed",), None)
    record.fields = {"strategy": "slots"}
    with bound(http_request_id, "http-1"), bound(booking_request_id, "form-token-1"):
        line = JsonFormatter().format(record)

    entry = json.loads(line)
    assert entry["message"] == "book confirmed" and entry["level"] == "INFO"
    assert entry["http_request_id"] == "http-1" and entry["request_id"] == "form-token-1"
    assert entry["strategy"] == "slots"


def test_booking__logs_its_outcome_with_its_request_id(settings, service, caplog):
    settings.LOG_JSON = True
    wiring.observe(service)
    event = service.create_event(name="Logged", capacity=1, strategy="aggregate")
    formatter = JsonFormatter()
    with caplog.at_level(logging.INFO, logger="booking.metrics"):
        service.book(event.id, name="Ann", email="ann@example.com", request_id="token-abc")

    lines = [json.loads(formatter.format(r)) for r in caplog.records
             if r.name == "booking.metrics"]
    assert {"request_id": "token-abc", "outcome": "confirmed", "strategy": "aggregate",
            "operation": "book"}.items() <= lines[-1].items()


@pytest.mark.parametrize("header, expected", [("abc-123", "abc-123"), ("bad id!", None)])
def test_request_id__echoed_when_well_formed_else_new(client, header, expected):
    response = client.get("/metrics", HTTP_X_REQUEST_ID=header)
    if expected:
        assert response["X-Request-ID"] == expected
    else:
        assert len(response["X-Request-ID"]) == 32


PROXY_HEADERS = {"HTTP_X_FORWARDED_FOR": "203.0.113.9", "HTTP_X_FORWARDED_PROTO": "https",
                 "HTTP_FORWARDED": "for=203.0.113.9", "HTTP_X_REAL_IP": "203.0.113.9"}


def peer_only(request, config):
    """Control: the rule before, trusting the TCP peer whatever came through a proxy."""
    import ipaddress

    peer = ipaddress.ip_address(request.META["REMOTE_ADDR"])
    return any(peer in ipaddress.ip_network(n, strict=False) for n in config.allowed_ips)


def proxied_answers(client) -> dict:
    """What the proxy's own address (127.0.0.1, listed) gets for a request that came
    through it, by the header that says so."""
    return {header: client.get("/metrics", REMOTE_ADDR="127.0.0.1",
                               **{header: value}).status_code
            for header, value in PROXY_HEADERS.items()}


@pytest.fixture
def metrics_on(settings):
    settings.METRICS_ENABLED = True
    settings.METRICS_ALLOWED_IPS = ["127.0.0.1", "::1"]
    settings.METRICS_BEARER_TOKEN = "s3cret-token"


def test_metrics__through_a_proxy__peer_not_trusted_only_the_token(client, metrics_on):
    assert proxied_answers(client) == dict.fromkeys(PROXY_HEADERS, 403)
    assert client.get("/metrics", REMOTE_ADDR="127.0.0.1", HTTP_AUTHORIZATION="Bearer s3cret-token",
                      **PROXY_HEADERS).status_code == 200
    assert client.get("/metrics", REMOTE_ADDR="127.0.0.1").status_code == 200  # straight


def test_control__peer_only_rule__lets_proxied_requests_in(client, metrics_on, monkeypatch):
    from booking.web import metrics

    monkeypatch.setattr(metrics, "allowed", peer_only)

    assert proxied_answers(client) == dict.fromkeys(PROXY_HEADERS, 200)
