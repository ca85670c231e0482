"""The attack run's API steps (``harness/attack.py``): Idempotency-Keys shared between
people, and API errors that were HTML or 500 (bad numbers, deep JSON, bodies over the
limits, no route, the 415's title, numbers as strings). docs/security.md."""
import http.client
import json

PROBLEM_JSON = "application/problem+json"


def call(port: int, method: str, path: str, body: bytes = b"", headers=None):
    """(status, content type, parsed JSON body or None) of one request to the site."""
    connection = http.client.HTTPConnection("127.0.0.1", port, timeout=30)
    try:
        connection.request(method, path, body, headers or {})
        response = connection.getresponse()
        raw = response.read()
        kind = (response.getheader("Content-Type") or "").split(";")[0]
    finally:
        connection.close()
    try:
        parsed = json.loads(raw) if kind.endswith("json") else None
    except ValueError:
        parsed = None
    return response.status, kind, parsed


def book(port, event_id, email, name, key):
    body = json.dumps({"name": name, "email": email}).encode()
    return call(port, "POST", f"/api/v1/events/{event_id}/registrations/", body,
                {"Content-Type": "application/json", "Idempotency-Key": key})


def shared_keys(run):
    """Ada books with the key "1"; Eve sends the same key for herself, then Ada's very
    body: Eve must get her own booking, and no answer of Ada's but for Ada's request."""
    port, event_id = run.site.port, run.event("API keys")
    ada = book(port, event_id, "ada@example.com", "Ada", "1")
    eve = book(port, event_id, "eve@example.com", "Eve", "1")
    retry = book(port, event_id, "ada@example.com", "Ada", "1")
    other_name = book(port, event_id, "ada@example.com", "Ada King", "1")
    eve_body = eve[2] or {}
    defended = (ada[0] == eve[0] == retry[0] == 201 and eve_body.get("email") == "eve@example.com"
                and (ada[2] or {}).get("secret") not in json.dumps(eve_body)
                and retry[2] == ada[2] and other_name[0] == 422)
    run.report("API Idempotency-Keys shared between people", defended,
               f"Ada {ada[0]}, Eve with Ada's key {eve[0]} ({eve_body.get('email')}), "
               f"Ada's retry {retry[0]} (same answer: {retry[2] == ada[2]}), Ada's key with "
               f"another name {other_name[0]}")


def errors_are_problems(run):
    """Each failure under /api/ must answer problem+json with the expected status."""
    port, event_id = run.site.port, run.event("API errors")
    path = f"/api/v1/events/{event_id}/registrations/"
    keyed = {"Content-Type": "application/json", "Idempotency-Key": "k-errors"}

    def sized(size):
        return json.dumps({"name": "A" * size, "email": "ada@example.com"}).encode()

    tries = {
        "?limit=²": (400, call(port, "GET", "/api/v1/events/?limit=%C2%B2")),
        "JSON 1,000 deep": (400, call(port, "POST", path, b"[" * 1000 + b"]" * 1000, keyed)),
        "96 KiB body": (413, call(port, "POST", path, sized(96 * 1024), keyed)),
        "200 KiB body": (413, call(port, "POST", path, sized(200 * 1024), keyed)),
        "no route": (404, call(port, "GET", "/api/v1/no-such-thing/")),
        "text/plain": (415, call(port, "POST", path, b"x", {**keyed,
                                                            "Content-Type": "text/plain"})),
        'tickets "1"': (400, call(port, "POST", path, json.dumps(
            {"name": "Ada", "email": "ada@example.com", "tickets": {"admission": "1"}}
        ).encode(), keyed)),
    }
    wrong = {name: f"{got[0]} {got[1]}" for name, (status, got) in tries.items()
             if got[0] != status or got[1] != PROBLEM_JSON}
    _, _, unsupported = tries["text/plain"][1]
    templated = "{" in (unsupported or {}).get("title", "")
    booked = run.booked(event_id)
    run.report("API errors that are not problem+json", not wrong and not templated
               and booked == 0,
               f"{len(tries) - len(wrong)} of {len(tries)} problem+json with the right status"
               + (f", wrong: {wrong}" if wrong else "")
               + f"; 415 title {(unsupported or {}).get('title')!r}; seats taken {booked}")


def steps(run) -> list:
    """The steps ``AttackRun.run`` calls, each bound to ``run``."""
    return [lambda: shared_keys(run), lambda: errors_are_problems(run)]
