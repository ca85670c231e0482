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


# --- the fourth round's replays (docs/security.md, "The fourth round") -------------------
def _bearer(run, name: str) -> dict:
    """A token's header (beta's admin: the token-rights step demotes alpha's)."""
    return {"Authorization": f"Bearer {run.tokens[name]}"}


def keyed_codes(run):
    """F4: one Idempotency-Key sent twice creates one code; no key is a 400."""
    port, event_id = run.site.port, run.event("F4 codes", organizer="beta")
    path = f"/api/v1/events/{event_id}/access-codes/"
    body = json.dumps({"count": 1, "reserved_seats": 2}).encode()
    headers = {**_bearer(run, "beta-admin-write"), "Content-Type": "application/json"}
    first = call(port, "POST", path, body, {**headers, "Idempotency-Key": "f4-one-key"})
    again = call(port, "POST", path, body, {**headers, "Idempotency-Key": "f4-one-key"})
    keyless = call(port, "POST", path, body, headers)
    _, _, listed = call(port, "GET", path, headers=_bearer(run, "beta-admin-read"))
    count = len((listed or {}).get("results", []))
    run.report("F4 access codes created twice for one key",
               first[0] == again[0] == 201 and first[2] == again[2] and count == 1
               and (keyless[0], keyless[1]) == (400, PROBLEM_JSON),
               f"same key twice {first[0]}/{again[0]} (same answer {first[2] == again[2]}), "
               f"codes stored {count}, without a key {keyless[0]} {keyless[1]}")


def code_links(run):
    """F1: ?code= links spend the wrong-code limit (10 per 10 minutes in the run): past
    it even a right code is not checked. Last of the run's steps: it spends the limit."""
    event_id = run.event("F1 code links", organizer="beta")
    run.site.manage("create_access_codes", event_id, "--code", "X7KQ-P2MW-9RTD")
    answers = [call(run.site.port, "GET", f"/events/{event_id}/?code=GUESS-{n:04d}")[0]
               for n in range(10)]
    right = call(run.site.port, "GET", f"/events/{event_id}/?code=X7KQ-P2MW-9RTD")[0]
    _, _, warned = call(run.site.port, "POST", f"/api/v1/events/{event_id}/access-codes/",
                        json.dumps({"code": "SPEAKER-2031"}).encode(),
                        {**_bearer(run, "beta-admin-write"), "Idempotency-Key": "f1-weak",
                         "Content-Type": "application/json"})
    run.report("F1 codes guessed on the event page",
               answers == [200] * 10 and right == 429 and bool((warned or {}).get("warnings")),
               f"10 wrong code links {sorted(set(answers))}, then the right one {right}; "
               f"SPEAKER-2031 warned: {bool((warned or {}).get('warnings'))}")


def strict_versions(run):
    """F8: expected_version "1" and 2.0 refused (problem+json), nothing applied."""
    port, event_id = run.site.port, run.event("F8 versions", organizer="beta")
    path = f"/api/v1/events/{event_id}/questions/"
    headers = {**_bearer(run, "beta-admin-write"), "Content-Type": "application/json"}
    answers = [call(port, "PUT", path, json.dumps(
        {"questions": [{"id": "x", "label": "X"}], "expected_version": version}).encode(),
        headers) for version in ("0", 0.0, True)]
    _, _, after = call(port, "GET", path)
    run.report("F8 expected_version takes \"1\" and 2.0",
               all(a[:2] == (400, PROBLEM_JSON) for a in answers)
               and (after or {}).get("questions") == [],
               f"\"0\", 0.0, true: {[a[0] for a in answers]}; questions after: "
               f"{len((after or {}).get('questions', []))}")


def edges(run):
    """F9: a request line over the limits and %00 under /api/ answer problem+json."""
    port = run.site.port
    long_line = call(port, "GET", "/api/v1/events/" + "a" * 9000 + "/")
    over_old = call(port, "GET", "/api/v1/events/" + "a" * 5000 + "/")
    nul = call(port, "GET", "/api/v1/events/%00/")
    run.report("F9 HTML 414 and 400 under /api/",
               all(a[1] == PROBLEM_JSON for a in (long_line, over_old, nul))
               and (long_line[0], nul[0]) == (414, 400),
               f"9,000-byte line {long_line[0]} {long_line[1]}, 5,000 {over_old[0]} "
               f"{over_old[1]}, %00 {nul[0]} {nul[1]}")


def secrets_in_logs(run):
    """F10: a link's secret in a path never reaches nginx's, gunicorn's or Django's log."""
    secret = "F10SECRET7Q2KXM4P"
    for path in (f"/cancel/{secret}/", f"/bookings/{secret}/",
                 f"/api/v1/registrations/{secret}/answers/"):
        call(run.site.port, "GET", path, headers={"Referer": f"http://127.0.0.1{path}"})
    logs = {"nginx": run.site.runtime / "nginx-access.log",
            "gunicorn": run.site.workdir / "access.log", "django": run.site.workdir / "serve.log"}
    leaked = [name for name, path in logs.items()
              if path.exists() and secret in path.read_text(errors="replace")]
    run.report("F10 registration secrets in the logs", not leaked,
               f"logs holding the secret: {leaked or 'none'} (of {', '.join(logs)})")


def bad_team(run):
    """F7: a team saved with limit_events = 5 (as before it was checked) breaks nobody's
    pages: its member's token still answers."""
    run.site.manage("shell", "-c", (
        "from django.contrib.auth.models import User\n"
        "from booking.organizers.models import Organizer, Team\n"
        "team = Team.objects.create(organizer=Organizer.objects.get(slug='beta'), "
        "name='F7 bad', role='viewer', all_events=False, limit_events=[])\n"
        "team.members.add(User.objects.get(username='alpha-viewer'))\n"
        "Team.objects.filter(pk=team.pk).update(limit_events=5)\n"))
    status = call(run.site.port, "GET", "/api/v1/events/",
                  headers=_bearer(run, "alpha-viewer-read"))[0]
    run.site.manage("shell", "-c", "from booking.organizers.models import Team; "
                    "Team.objects.filter(name='F7 bad').delete()")
    run.report("F7 a team's limit_events = 5 answers 500", status == 200,
               f"a member of that team and of alpha lists alpha's events: {status}")


def webhook_oracle(run):
    """F11: every unusable webhook URL gets one text, which names WEBHOOK_ALLOWED_HOSTS."""
    details = []
    for n, url in enumerate(("https://localhost/h", "https://10.0.0.1/h",
                             "http://127.0.0.1:8000/h", "https://hooks.example.com:22/h")):
        _, _, body = call(run.site.port, "POST", "/api/v1/webhooks/", json.dumps(
            {"url": url, "events": ["registration.created"]}).encode(),
            {**_bearer(run, "beta-admin-write"), "Idempotency-Key": f"f11-{n}",
             "Content-Type": "application/json"})
        details.append((body or {}).get("detail", ""))
    run.report("F11 webhook refusals tell host names apart",
               len(set(details)) == 1 and "WEBHOOK_ALLOWED_HOSTS" in details[0],
               f"{len(set(details))} distinct refusal text(s) for 4 unusable URLs, naming "
               f"WEBHOOK_ALLOWED_HOSTS: {'WEBHOOK_ALLOWED_HOSTS' in details[0]}")


def fourth_round(run) -> list:
    """The fourth round's replays ``AttackRun.run`` calls (after the organizers step);
    ``code_links`` last, since it spends the run's wrong-code limit."""
    return [lambda: keyed_codes(run), lambda: strict_versions(run), lambda: edges(run),
            lambda: secrets_in_logs(run), lambda: bad_team(run), lambda: webhook_oracle(run),
            lambda: code_links(run)]
