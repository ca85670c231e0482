"""The proxy's configuration as written: every location that passes requests to gunicorn
(config/nginx.conf, and the sample in docs/deployment.md) stamps ``X-Request-Start`` with
the time nginx passed the request on, over any header of that name a client sent (nginx
drops a client's header that ``proxy_set_header`` names), so the app's queue deadline
(``BOOKING_QUEUE_DEADLINE``) reads the proxy's clock and never a client's."""
import re
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
STAMP = 'proxy_set_header X-Request-Start "t=${msec}";'


def proxied_locations(text: str) -> dict[str, str]:
    """Each ``location ... { ... }`` block (no nested blocks but ``if``) that holds
    ``proxy_pass``, by its header."""
    blocks = {}
    for match in re.finditer(r"^\s*location\s+([^{]+)\{", text, re.M):
        depth, end = 1, match.end()
        while depth:
            brace = re.compile(r"[{}]").search(text, end)
            assert brace is not None, match.group(0)
            depth += 1 if brace.group(0) == "{" else -1
            end = brace.end()
        body = text[match.end():end]
        if "proxy_pass" in body:
            blocks[match.group(1).strip()] = body
    return blocks


def sample_in_deployment_doc() -> str:
    doc = (ROOT / "docs" / "deployment.md").read_text()
    return next(block for block in re.findall(r"```nginx\n(.*?)```", doc, re.S)
                if "proxy_pass" in block)


@pytest.mark.parametrize("name", ["config/nginx.conf", "docs/deployment.md"])
def test_nginx__every_proxied_location__stamps_the_request_start(name):
    text = (ROOT / name).read_text() if name.endswith(".conf") else sample_in_deployment_doc()
    locations = proxied_locations(text)

    assert locations, name
    if name.endswith(".conf"):
        assert set(locations) == {"= /metrics", "/"}
    for where, body in locations.items():
        lines = [line.split("#")[0].strip() for line in body.splitlines()]
        assert STAMP in lines, (name, where)


def test_nginx__the_stamp__is_the_form_the_app_reads():
    from booking.web.middleware import waited_seconds

    # nginx's $msec: seconds with milliseconds, as "t=1767225600.123".
    assert waited_seconds("t=1767225600.123", now=1767225601.123) == pytest.approx(1.0)
