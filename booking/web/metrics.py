"""The Prometheus endpoint (``/metrics``) and the request id of every HTTP request.

The endpoint is off by default (404). With ``METRICS_ENABLED=true`` it answers a request
with ``Authorization: Bearer <METRICS_BEARER_TOKEN>``, or one straight from a peer address
inside ``METRICS_ALLOWED_IPS`` (addresses or CIDR networks; the TCP peer, never
``X-Forwarded-For``). A request that came through a proxy (it carries ``X-Forwarded-For``,
``X-Forwarded-Proto``, ``Forwarded`` or ``X-Real-IP``; the proxy of ``make serve`` sets the
first two) has the proxy as its peer, so only the token lets it in. Anyone else gets 403. Under gunicorn with several workers set ``PROMETHEUS_MULTIPROC_DIR`` (an empty
directory per start) so a scrape sums every worker (docs/deployment.md).
"""
import hmac
import ipaddress
import os
import re
import threading
import uuid

from django.http import Http404, HttpResponse, HttpResponseForbidden
from prometheus_client import CONTENT_TYPE_LATEST, CollectorRegistry, generate_latest

from booking import wiring
from booking.metrics.logs import bound, http_request_id
from booking.metrics.prometheus import REGISTRY, StateCollector

# Headers a proxy adds: a request carrying one came through a proxy (or says so).
PROXY_HEADERS = ("HTTP_X_FORWARDED_FOR", "HTTP_X_FORWARDED_PROTO", "HTTP_FORWARDED",
                 "HTTP_X_REAL_IP")
_REQUEST_ID = re.compile(r"^[A-Za-z0-9._:-]{1,64}$")
_state: dict = {}
_state_lock = threading.Lock()


class RequestIdMiddleware:
    """Give each request an id (a proxy's well-formed ``X-Request-ID``, else a new one),
    bound for the logs and echoed in the response's ``X-Request-ID``."""

    def __init__(self, get_response):
        self.get_response = get_response

    def __call__(self, request):
        given = request.headers.get("X-Request-ID", "")
        request_id = given if _REQUEST_ID.match(given) else uuid.uuid4().hex
        request.request_id = request_id
        with bound(http_request_id, request_id):
            response = self.get_response(request)
        response["X-Request-ID"] = request_id
        return response


def allowed(request, config: wiring.MetricsSettings) -> bool:
    """The token, or a listed peer address on a request that did not come through a proxy."""
    token = config.bearer_token
    header = request.headers.get("Authorization", "")
    if token and header.startswith("Bearer ") and hmac.compare_digest(
            header[len("Bearer "):].encode(), token.encode()):
        return True
    if any(name in request.META for name in PROXY_HEADERS):
        return False  # the peer is a proxy: its address says nothing of the client
    try:
        peer = ipaddress.ip_address(request.META.get("REMOTE_ADDR", ""))
    except ValueError:
        return False
    for entry in config.allowed_ips:
        try:
            if peer in ipaddress.ip_network(entry, strict=False):
                return True
        except ValueError:
            continue
    return False


def state_registry(config: wiring.MetricsSettings) -> CollectorRegistry:
    """The scrape-time gauges of this process's service (one collector per service)."""
    service = wiring.get_booking_service()
    with _state_lock:
        registry = _state.get(id(service))
        if registry is None:
            _state.clear()
            registry = CollectorRegistry(auto_describe=False)
            registry.register(StateCollector(service, backlog_seconds=config.backlog_seconds))
            _state[id(service)] = registry
        return registry


def exposition() -> bytes:
    if os.environ.get("PROMETHEUS_MULTIPROC_DIR"):
        from prometheus_client import multiprocess

        registry = CollectorRegistry()
        multiprocess.MultiProcessCollector(registry)
        return generate_latest(registry)
    return generate_latest(REGISTRY)


def metrics(request):
    config = wiring.metrics_settings()
    if not config.enabled:
        raise Http404("Metrics are off (METRICS_ENABLED).")
    if not allowed(request, config):
        return HttpResponseForbidden("Not allowed to read the metrics.\n",
                                     content_type="text/plain")
    body = exposition() + generate_latest(state_registry(config))
    return HttpResponse(body, content_type=CONTENT_TYPE_LATEST)
