"""The attack run: replay the findings of the security reviews against the production serving command
(`make serve`: nginx in front of gunicorn, DEBUG=false) on DynamoDB Local, and report
each as defended or found. Exit status 0 when none is found, 1 otherwise.

    .venv/bin/python -m harness.attack [--slow-seconds 10]

It starts its own DynamoDB Local and site on free ports and stops them after; it needs
Java (scripts/ensure_java.sh) and nginx (scripts/ensure_nginx.sh). docs/security.md.
"""
import argparse
import json
import os
import re
import socket
import statistics
import sys
import tempfile
import threading
import time
from pathlib import Path
from urllib.parse import urlencode

from harness import attack_api, attack_checkin
from harness.attack_webhooks import SITE_ENV, WebhookFindings
from harness.serving import ADMIN_USER, FORM, Browser, ProductionSite, nginx_available



class AttackRun:
    def __init__(self, site: ProductionSite, slow_seconds: int):
        self.site, self.slow_seconds, self.found = site, slow_seconds, []

    def report(self, finding: str, defended: bool, detail: str) -> None:
        print(f"{'defended' if defended else 'FOUND   '}  {finding}: {detail}", flush=True)
        if not defended:
            self.found.append(finding)

    def event(self, name: str, capacity: int = 50, organizer: str = "alpha") -> str:
        out = self.site.manage("create_event", "--name", name, "--capacity", str(capacity),
                               "--organizer", organizer, "--json")
        return json.loads(out)["id"]

    # --- organizers own their events ------------------------------------------------
    def organizers(self) -> None:
        """Two organizers, alpha and beta, with users of three roles and their tokens;
        one event of each with one person booked."""
        self.site.manage("shell", "-c", (
            "from django.contrib.auth.models import User, Permission\n"
            "for org in ('alpha', 'beta'):\n"
            "    for role in ('admin', 'viewer'):\n"
            "        User.objects.create_user(f'{org}-{role}', password='pw-attack-1', "
            "is_staff=True)\n"
            "minter = User.objects.create_user('minter', password='pw-attack-1', is_staff=True)\n"
            "minter.user_permissions.add(Permission.objects.get(codename='add_apitoken'))\n"))
        for org in ("alpha", "beta"):
            self.site.manage("create_organizer", org, "--member", f"{org}-admin:admin",
                             "--member", f"{org}-viewer:viewer")
        self.tokens = {f"{org}-{role}-{scope}": self.site.manage(
            "create_api_token", "--organizer", org, "--user", f"{org}-{role}", "--name",
            f"{role} {scope}", "--scope", scope).strip()
            for org in ("alpha", "beta") for role in ("admin", "viewer")
            for scope in ("read", "write")}
        self.events = {org: self.event(f"{org} night", organizer=org) for org in ("alpha", "beta")}
        for org, event_id in self.events.items():
            self.api("POST", f"/api/v1/events/{event_id}/registrations/",
                     {"name": "Ada", "email": f"ada@{org}.example.com"})

    def api(self, method: str, path: str, body=None, token: str | None = None, **headers):
        """(status, parsed JSON or text) of one API request."""
        headers = {**headers, **({"Authorization": f"Bearer {token}"} if token else {})}
        if body is not None:
            headers.update({"Content-Type": "application/json",
                            "Idempotency-Key": os.urandom(8).hex()})
        status, text = Browser(self.site.port).request(
            method, path, json.dumps(body) if body is not None else b"", headers)
        try:
            return status, json.loads(text)
        except ValueError:
            return status, text

    def head_without_token(self):
        beta = self.events["beta"]
        paths = [f"/api/v1/events/{beta}/registrations/",
                 f"/api/v1/events/{beta}/registrations/export/",
                 f"/api/v1/events/{beta}/waiting-list/", "/api/v1/webhooks/"]
        answers = {path: self.api(method, path)[0] for path in paths
                   for method in ("HEAD", "OPTIONS")}
        self.report("organizers 1 HEAD skips the token check",
                    set(answers.values()) == {401}, f"HEAD/OPTIONS without a token: "
                    f"{sorted(set(answers.values()))}")

    def cross_organizer(self):
        beta, alpha, tokens = self.events["beta"], self.events["alpha"], self.tokens
        before = self.api("GET", f"/api/v1/events/{beta}/")[1]
        answers = [
            self.api("GET", f"/api/v1/events/{beta}/registrations/",
                     token=tokens["alpha-admin-read"])[0],
            self.api("GET", f"/api/v1/events/{beta}/registrations/export/",
                     token=tokens["alpha-admin-read"])[0],
            self.api("PATCH", f"/api/v1/events/{beta}/", {"capacity": 1},
                     token=tokens["alpha-admin-write"], **{"If-Match": '"1"'})[0],
            self.api("DELETE", f"/api/v1/events/{beta}/", token=tokens["alpha-admin-write"])[0],
            self.api("POST", "/api/v1/webhooks/", {"url": "https://93.184.215.14/steal",
                                                   "events": ["registration.created"],
                                                   "event_id": beta},
                     token=tokens["alpha-admin-write"])[0]]
        after = self.api("GET", f"/api/v1/events/{beta}/")[1]
        _, listed = self.api("GET", f"/api/v1/events/{alpha}/registrations/",
                             token=tokens["alpha-admin-read"])
        secrets = [r for r in listed.get("results", []) if "secret" in r] \
            if isinstance(listed, dict) else ["?"]
        self.report("organizers 2 no event has an owner",
                    set(answers) == {404} and before == after and not secrets,
                    f"alpha's tokens on beta's event: {answers}; beta unchanged: "
                    f"{before == after}; secrets shown to a read token: {len(secrets)}")

    def token_rights(self):
        tokens, alpha = self.tokens, self.events["alpha"]
        viewer_edit = self.api("PATCH", f"/api/v1/events/{alpha}/", {"capacity": 1},
                               token=tokens["alpha-viewer-write"], **{"If-Match": '"1"'})[0]
        viewer_create = self.api("POST", "/api/v1/events/", {"name": "x", "capacity": 1},
                                 token=tokens["alpha-viewer-write"])[0]
        minter = Browser(self.site.port)
        fields = minter.form("/admin/login/")
        logged_in = minter.post("/admin/login/?next=/admin/", {
            "username": "minter", "password": "pw-attack-1",
            "csrfmiddlewaretoken": fields.get("csrfmiddlewaretoken", "")})[0] == 302
        mint = minter.request("GET", "/admin/booking_api/apitoken/add/")[0] if logged_in \
            else "login failed"
        self.site.manage("shell", "-c", "from django.contrib.auth.models import User; "
                         "User.objects.filter(username='alpha-admin').update(is_staff=False)")
        demoted = self.api("GET", f"/api/v1/events/{alpha}/registrations/",
                           token=tokens["alpha-admin-write"])[0]
        self.report("organizers 3 tokens ignore the user's rights",
                    (viewer_edit, viewer_create, mint, demoted) == (403, 403, 403, 401),
                    f"viewer's write token edits {viewer_edit}, creates {viewer_create}; "
                    f"'add API token' alone mints {mint}; demoted user's token {demoted}")

    def signup(self, browser, event_id, email, name="Carol", token=None) -> int:
        path = f"/events/{event_id}/"
        fields = browser.form(path)
        return browser.post(path, {"name": name, "email": email,
                                   "csrfmiddlewaretoken": fields["csrfmiddlewaretoken"],
                                   "token": token or fields["token"]})[0]

    def booked(self, event_id: str) -> int:
        listed = json.loads(self.site.manage("list_events", "--json"))
        return next(e for e in listed if e["id"] == event_id)["confirmed"]

    # --- the findings -----------------------------------------------------------------
    def encoded_address(self):
        event_id, browser = self.event("Finding 1"), Browser(self.site.port)
        first = self.signup(browser, event_id, "carol@example.com")
        encoded = self.signup(browser, event_id, "=?utf-8?b?Y2Fyb2w=?=@example.com")
        quoted = self.signup(browser, event_id, '"carol"@example.com')
        self.report("1 one person, two seats by an encoded address",
                    first == 303 and encoded == 400 and quoted == 409
                    and self.booked(event_id) == 1,
                    f"plain {first}, encoded word {encoded}, quoted {quoted}, "
                    f"seats taken {self.booked(event_id)}")

    def lockout(self):
        event_id, browser = self.event("Finding 3"), Browser(self.site.port)
        path = f"/events/{event_id}/"
        resends = [browser.post(f"{path}resend/", {
            "email": "victim@example.com",
            "csrfmiddlewaretoken": browser.form(path)["csrfmiddlewaretoken"]})[0]
            for _ in range(6)]
        fields = browser.form(path)
        replays = [self.signup(browser, event_id, "victim@example.com", token=fields["token"])
                   for _ in range(7)]
        self.report("3 anyone can lock a person out",
                    replays == [303] * 7 and self.booked(event_id) == 1,
                    f"6 resends {resends}, then one form sent 7 times {replays}")

    def slow_clients(self):
        sockets, loads = [], []
        for _ in range(40):
            sock = socket.create_connection(("127.0.0.1", self.site.port), timeout=5)
            sock.sendall(b"GET / HTTP/1.1\r\nHost: 127.0.0.1\r\n")
            sockets.append(sock)
        started = time.monotonic()
        while time.monotonic() - started < self.slow_seconds + 2:
            for sock in sockets:
                try:
                    sock.sendall(b"X-Slow: 1\r\n")
                except OSError:
                    pass
            began = time.monotonic()
            try:
                status, _ = Browser(self.site.port).request("GET", "/", timeout=10)
            except OSError:
                status = None
            loads.append((status, time.monotonic() - began))
            time.sleep(3)
        closed = 0
        for sock in sockets:
            sock.settimeout(1)
            try:
                answer = sock.recv(1024)
                closed += answer == b"" or answer.startswith(b"HTTP/1.1 408")
            except socket.timeout:
                pass  # still open
            except OSError:
                closed += 1  # reset
            sock.close()
        worst = max(seconds for _, seconds in loads)
        self.report("5 slow clients starve the server",
                    all(status == 200 for status, _ in loads) and closed == 40,
                    f"{len(loads)} page loads all 200: "
                    f"{all(status == 200 for status, _ in loads)}, slowest {worst:.2f} s; "
                    f"{closed} of 40 slow sockets closed")

    def waiting_list(self):
        event_id, browser = self.event("Findings 2 and 4", capacity=1), Browser(self.site.port)
        self.signup(browser, event_id, "dana@example.com", name="Dana Secretname")
        path = f"/events/{event_id}/waiting-list/"
        answers = {}
        for email in ("dana@example.com", "made-up-1@example.com", "made-up-2@example.com"):
            fields = browser.form(f"/events/{event_id}/")  # one client, as an attacker is
            status, html = browser.post(path, {"name": "Mallory", "email": email,
                                               "csrfmiddlewaretoken": fields["csrfmiddlewaretoken"],
                                               "token": fields["token"]})
            # Tokens and nonces differ per answer by design; the address is the one typed.
            html = re.sub(r'(value|nonce)="[^"]*"', "", html.replace(email, "ADDRESS"))
            answers[email] = (status, html)
        same = len({answer for answer in answers.values()}) == 1
        leaked = any("Secretname" in html for _, html in answers.values())
        self.report("2 the waiting-list join tells who else is in line or booked",
                    same and not leaked,
                    f"answers {[status for status, _ in answers.values()]}, "
                    f"{'the same page' if same else 'different pages'} for a booked and two "
                    f"unknown addresses, stored name shown: {leaked}")
        line = self.site.manage("shell", "-c", (
            "from booking.wiring import get_booking_service; "
            f"print(len(get_booking_service().waiting_list({event_id!r})))")).split()[-1]
        self.report("4 made-up waiting-list entries hold seats", line == "0",
                    f"entries in line after two unconfirmed requests to join: {line}")

    def large_bodies(self):
        body = (b"--x\r\nContent-Disposition: form-data; name=\"f\"; filename=\"a\"\r\n\r\n"
                + b"\0" * (20 * 1024 * 1024))
        answers = {}
        for path in ("/admin/login/", "/admin/password_change/"):
            try:
                answers[path] = Browser(self.site.port).request(
                    "POST", path, body, {"Content-Type": "multipart/form-data; boundary=x"})[0]
            except OSError as error:  # refused and closed before all was sent
                answers[path] = f"closed ({error.__class__.__name__})"
        self.report("6 large bodies read before refusal",
                    all(a == 413 or str(a).startswith("closed") for a in answers.values()),
                    f"20 MiB multipart: {answers}")

    def login_race(self):
        browser = Browser(self.site.port)
        csrf = browser.form("/admin/login/")["csrfmiddlewaretoken"]
        body = urlencode({"csrfmiddlewaretoken": csrf, "username": ADMIN_USER,
                          "password": "wrong"})
        barrier, answers = threading.Barrier(30), []

        def attempt():
            own = Browser(self.site.port)
            own.cookies = dict(browser.cookies)
            barrier.wait()
            answers.append(own.request("POST", "/admin/login/", body,
                                       {"Content-Type": FORM})[0])
        threads = [threading.Thread(target=attempt) for _ in range(30)]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join()
        checked = answers.count(200)
        self.report("7 admin login throttle raced", checked <= 10,
                    f"30 parallel wrong passwords: {checked} checked, "
                    f"{answers.count(429)} refused 429 (limit 10)")

    def invisible_names(self):
        event_id, browser = self.event("Finding 8"), Browser(self.site.port)
        answers = [self.signup(browser, event_id, f"inv{n}@example.com", name=name)
                   for n, name in enumerate(["\u3164", "\u2800\u2800", "A\u200dB",
                                             "a" + "\u0301" * 9])]
        self.report("8 invisible names get in",
                    answers == [400] * 4 and self.booked(event_id) == 0,
                    f"filler, braille blanks, joiner, 9 combining marks: {answers}")

    def resend_timing(self):
        event_id, browser = self.event("Finding 10"), Browser(self.site.port)
        self.signup(browser, event_id, "known@example.com")
        path = f"/events/{event_id}/resend/"
        times = {"known@example.com": [], "unknown@example.com": []}
        for _ in range(40):  # within the run's resend limit of one network (200/10m)
            for email, spent in times.items():
                fresh = Browser(self.site.port)
                csrf = fresh.form(f"/events/{event_id}/")["csrfmiddlewaretoken"]
                began = time.monotonic()
                fresh.post(path, {"email": email, "csrfmiddlewaretoken": csrf})
                spent.append(time.monotonic() - began)
        known, unknown = (statistics.median(v) * 1000 for v in times.values())
        self.report("10 resend timing tells who is registered",
                    abs(known - unknown) <= max(2.0, 0.15 * unknown),
                    f"median {known:.1f} ms registered, {unknown:.1f} ms not "
                    "(the request does the same store calls on both paths)")

    def dst_gap(self):
        try:
            self.site.manage("create_event", "--name", "Finding 11", "--capacity", "5",
                             "--organizer", "alpha", "--time-zone", "Europe/Berlin", "--starts-at", "2030-03-31T02:30")
            refused, detail = False, "accepted"
        except RuntimeError as error:
            refused, detail = "03:00" in str(error), str(error).strip().splitlines()[-1]
        self.report("11 local times inside a DST gap", refused, detail)

    def run(self) -> int:
        print(f"Attack run on make serve at http://127.0.0.1:{self.site.port}/ "
              "(nginx -> gunicorn, DEBUG=false)", flush=True)
        self.organizers()
        # The organizers' replays log in before the login throttle's replay uses up this
        # address's attempts.
        for step in (self.head_without_token, self.cross_organizer, self.token_rights,
                     self.encoded_address, self.waiting_list, self.lockout, self.large_bodies,
                     self.login_race, self.invisible_names, self.resend_timing, self.dst_gap,
                     self.slow_clients, *attack_api.steps(self), *WebhookFindings(self).steps(),
                     *attack_checkin.fourth_round(self), *attack_api.fourth_round(self)):
            step()
        print("not replayed here: 9 (needs a corrupt stored item: "
              "tests/web and check_capacity cover it)")
        print(f"{len(self.found)} found" + (f": {', '.join(self.found)}" if self.found else ""))
        return 1 if self.found else 0


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--slow-seconds", type=int, default=10,
                        help="nginx's deadline for a whole header (SERVE_CLIENT_TIMEOUT)")
    args = parser.parse_args(argv)
    if not nginx_available():
        print("needs nginx: run scripts/ensure_nginx.sh as root", file=sys.stderr)
        return 2
    from localdynamo import process as dynamodb_local

    os.environ.setdefault("DEBUG", "true")  # the launcher's own settings; the site runs DEBUG=false
    server = dynamodb_local.start()
    try:
        with tempfile.TemporaryDirectory() as workdir, ProductionSite(
                server.url, workdir=Path(workdir), client_timeout=args.slow_seconds,
                threads=8, BOOKING_RESEND_RATE="200/10m",
                BOOKING_SIGNUP_RATE="200/10m", **SITE_ENV) as site:
            return AttackRun(site, args.slow_seconds).run()
    finally:
        server.stop()


if __name__ == "__main__":
    sys.exit(main())
