"""Organizers cannot reach each other, over HTTP against gunicorn with DEBUG=false.

Two organizers, alpha and beta, each with a staff user of every role and a read and a
write token per user (made by the public commands). Every API route and every admin page
that names an object is enumerated from the URLconf (a new route cannot escape), and
asked with every method (HEAD and OPTIONS included) by every alpha token and alpha staff
user: beta's object answers exactly as a missing one (404), and nothing of beta's
changes; alpha's own object answers what the role and scope allow (403 where they do not).
The control, a gunicorn serving one careless view (``careless_wsgi.py``), is caught by the
same sweep.
"""
import json
import re
import subprocess
import sys
import uuid
from datetime import datetime, timezone
from pathlib import Path

import pytest
import requests
from django.contrib import admin
from django.urls import URLPattern, URLResolver

from booking.api import urls as api_urls
from localdynamo.process import terminate
from tests.browser.conftest import free_port, wait_for_port
from tests.config.test_production_serving import production_env

ROOT = Path(__file__).resolve().parents[2]
ORGS = {"alpha": "Alpha Org", "beta": "Beta Org"}
ROLES = ("admin", "editor", "viewer", "checkin")
SCOPES = ("read", "write")
PASSWORD = "pw-" + uuid.uuid4().hex
METHODS = ("GET", "HEAD", "OPTIONS", "POST", "PUT", "PATCH", "DELETE")
MISSING_EVENT, MISSING_ENDPOINT = "0" * 32, "ep_" + "0" * 32
MISSING_LIST = "0" * 32
# A public address, written as a number so that registering it needs no name lookup; no
# worker runs here, so nothing is ever sent to it.
RECEIVER = "https://93.184.215.14"
# What each role may do, written out here (not read from the code under test).
VIEW, CHANGE, DELETE, WEBHOOKS, MANAGE = "view", "change", "delete", "webhooks", "manage"
SCAN = "scan"  # scan passes: a write (write tokens of checkin members, editors, admins)
DOOR = "see-door"  # list check-in lists and their counts: checkin members, either scope
ROLE_RIGHTS = {"admin": {VIEW, CHANGE, DELETE, WEBHOOKS, MANAGE, SCAN, DOOR},
               "editor": {VIEW, CHANGE, DELETE, SCAN, DOOR}, "viewer": {VIEW},
               "checkin": {SCAN, DOOR}}
READ_RIGHTS = {VIEW, WEBHOOKS, DOOR}
# The right each (route, method) needs; methods a view does not define need CHANGE or
# are refused 405 after the check. The public ones take no token at all.
NEEDS = {("event", "PATCH"): CHANGE, ("event", "DELETE"): DELETE,
         ("registrations", "GET"): VIEW, ("registrations_export", "GET"): VIEW,
         ("waiting_list", "GET"): VIEW, ("webhook", "GET"): WEBHOOKS,
         ("webhook", "DELETE"): MANAGE, ("webhook_deliveries", "GET"): WEBHOOKS,
         ("checkin_lists", "GET"): DOOR, ("checkin_lists", "POST"): CHANGE,
         ("checkin_list", "GET"): DOOR, ("checkin_scans", "POST"): SCAN,
         ("checkin_scans_batch", "POST"): SCAN,
         ("questions", "PUT"): CHANGE,
         ("access_codes", "GET"): VIEW, ("access_codes", "POST"): CHANGE}
PUBLIC = {("events", "GET"), ("event", "GET"), ("registrations", "POST"),
          ("waiting_list", "POST"), ("registration", "GET"), ("registration", "DELETE"),
          ("registration_cancellations", "POST"), ("offer", "DELETE"),
          ("offer_accept", "POST"), ("questions", "GET")}
SECRET_ROUTES = {"registration", "registration_cancellations", "offer", "offer_accept"}
SETUP = f"""
import json
from io import StringIO
from django.contrib.auth.models import User
from django.core.management import call_command
tokens = {{}}
for org, name in {ORGS!r}.items():
    members = []
    for role in {ROLES!r}:
        User.objects.create_user(f"{{org}}-{{role}}", password={PASSWORD!r}, is_staff=True)
        members += ["--member", f"{{org}}-{{role}}:{{role}}"]
    call_command("create_organizer", org, "--name", name, *members, stdout=StringIO())
    for role in {ROLES!r}:
        for scope in {SCOPES!r}:
            out = StringIO()
            call_command("create_api_token", "--organizer", org, "--user", f"{{org}}-{{role}}",
                         "--name", f"{{org}}-{{role}}-{{scope}}", "--scope", scope, stdout=out)
            tokens[f"{{org}}-{{role}}-{{scope}}"] = out.getvalue().strip()
print(json.dumps(tokens))
"""


def asked_as(method):
    return "GET" if method in ("HEAD", "OPTIONS") else method


def allowed(role, scope, right) -> bool:
    return right in ROLE_RIGHTS[role] and (scope == "write" or right in READ_RIGHTS)


class Api:
    def __init__(self, port):
        self.base = f"http://127.0.0.1:{port}"
        self.http = requests.Session()

    def __call__(self, method, path, token=None, body=None, **headers):
        if token:
            headers["Authorization"] = f"Bearer {token}"
        if method in ("POST", "PATCH", "PUT"):  # a scan's key is its nonce
            headers.setdefault("Idempotency-Key", (body or {}).get("nonce") or uuid.uuid4().hex)
        return self.http.request(method, self.base + path, headers=headers, timeout=60,
                                 allow_redirects=False,
                                 **({"json": body} if body is not None else {}))


def problem_type(response) -> str:
    if "json" not in response.headers.get("Content-Type", "") or not response.content:
        return ""
    return str(response.json().get("type", ""))


# --- the site --------------------------------------------------------------------------
def start_gunicorn(env, wsgi, workdir, name):
    port, log = free_port(), workdir / f"{name}.log"
    with log.open("w") as output:
        process = subprocess.Popen(
            [sys.executable, "-m", "gunicorn", "-c", "config/gunicorn.conf.py", wsgi],
            cwd=ROOT, env={**env, "GUNICORN_BIND": f"127.0.0.1:{port}", "WEB_CONCURRENCY": "1",
                           "GUNICORN_THREADS": "4"},
            stdout=output, stderr=subprocess.STDOUT)
    wait_for_port(port, process, log)
    return port, process


@pytest.fixture(scope="module")
def site(local_server, tmp_path_factory):
    """(product port, careless control port, the world both serve)."""
    workdir = tmp_path_factory.mktemp("organizers")
    env = {**production_env(local_server, workdir), "SECURE_SSL_REDIRECT": "false",
           "SESSION_COOKIE_SECURE": "false", "CSRF_COOKIE_SECURE": "false",
           "ADMIN_LOGIN_RATE": "off", "API_TOKEN_RATE": "off", "BOOKING_CANCEL_RATE": "off"}
    env.pop("SECURE_PROXY_SSL_HEADER", None)
    for command in (["collectstatic", "--noinput"], ["migrate", "--noinput"],
                    ["create_tables"]):
        subprocess.run([sys.executable, "manage.py", *command], cwd=ROOT, env=env,
                       check=True, capture_output=True, timeout=180)
    made = subprocess.run([sys.executable, "manage.py", "shell", "-c", SETUP], cwd=ROOT,
                          env=env, check=True, capture_output=True, text=True, timeout=180)
    tokens = json.loads(made.stdout.strip().splitlines()[-1])
    port, product = start_gunicorn(env, "config.wsgi:application", workdir, "product")
    careless_port, careless = start_gunicorn(
        env, "tests.organizers.careless_wsgi:application", workdir, "careless")
    try:
        yield port, careless_port, {**build_world(Api(port), tokens), "env": env}
    finally:
        terminate(product)
        terminate(careless)


def build_world(api, tokens) -> dict:
    """Each organizer's event (one person booked), webhook endpoint and tokens."""
    world = {"tokens": tokens}
    for org in ORGS:
        write = tokens[f"{org}-admin-write"]
        world[org] = {"event": new_event(api, write, f"{ORGS[org]} gala"),
                      "endpoint": new_endpoint(api, write, org)}
        made = api("POST", f"/api/v1/events/{world[org]['event']}/checkin-lists/", write,
                   {"name": "Main door"})
        assert made.status_code == 201, made.text
        world[org]["list"] = made.json()["id"]
        booked = api("POST", f"/api/v1/events/{world[org]['event']}/registrations/",
                     body={"name": "Ada", "email": f"ada@{org}.example.com"})
        assert booked.status_code == 201, booked.text
    return world


def new_event(api, token, name) -> str:
    created = api("POST", "/api/v1/events/", token, {"name": name, "capacity": 5})
    assert created.status_code == 201, created.text
    return created.json()["id"]


def new_endpoint(api, token, org) -> str:
    created = api("POST", "/api/v1/webhooks/", token,
                  {"url": f"{RECEIVER}/hooks/{org}", "events": ["registration.created"]})
    assert created.status_code == 201, created.text
    return created.json()["id"]


def state_of(api, world, org) -> dict:
    """What an organizer holds, read by its own admin (to see that nothing changed)."""
    token, event = world["tokens"][f"{org}-admin-write"], world[org]["event"]
    detail = api("GET", f"/api/v1/events/{event}/").json()
    people = api("GET", f"/api/v1/events/{event}/registrations/", token).json()["results"]
    hooks = api("GET", "/api/v1/webhooks/", token).json()
    return {"event": {k: detail[k] for k in ("name", "capacity") if k in detail},
            "etag_version": api("GET", f"/api/v1/events/{event}/").headers.get("ETag"),
            "people": sorted(p["email"] for p in people), "hooks": sorted(h["id"] for h in hooks)}


# --- the API sweep ---------------------------------------------------------------------
def api_routes():
    """(name, route, URL keywords) of every API route (the URLconf, not a list here)."""
    for pattern in api_urls.urlpatterns:
        route = str(pattern.pattern)
        yield pattern.name, route, set(re.findall(r"<(?:\w+:)?(\w+)>", route))


def fill(route, event, endpoint, checkin_list=MISSING_LIST) -> str:
    return "/api/v1/" + route.replace("<str:event_id>", event).replace(
        "<str:endpoint_id>", endpoint).replace("<str:list_id>", checkin_list)


def body_for(name, method):
    """A valid body for an own object's POST (a scan of a code that is no pass answers
    200 ``unknown_code``), None where the sweep sends none."""
    nonce = uuid.uuid4().hex
    return {"checkin_lists": {"name": "Side door"}, "access_codes": {"count": 1},
            "checkin_scans": {"code": "not-a-pass", "nonce": nonce},
            "checkin_scans_batch": {"scans": [{"code": "not-a-pass", "nonce": nonce,
                                               "scanned_at": datetime.now(
                                                   timezone.utc).isoformat()}]},
            }.get(name) if method == "POST" else None


def api_breaches(port, world) -> list[str]:
    """Every way alpha's tokens reach beta (or a request without a token reaches a
    token's route): an empty list is the promise kept."""
    return list(each_api_breach(port, world))


def each_api_breach(port, world):
    """``api_breaches`` one at a time, as the sweep meets them (a control's first one ends
    its sweep: the promise is already shown broken)."""
    api, tokens = Api(port), world["tokens"]
    alpha_tokens = {k: v for k, v in tokens.items() if k.startswith("alpha-")}
    beta, alpha = world["beta"], world["alpha"]
    before = state_of(api, world, "beta")
    for name, route, keywords in api_routes():
        if keywords - {"event_id", "endpoint_id", "secret", "list_id"}:
            yield (f"{name}: a URL keyword the sweep does not know: {keywords}")
        if not keywords or keywords == {"secret"} or name in ("schema", "docs", "redoc"):
            continue
        theirs = fill(route, beta["event"], beta["endpoint"], beta["list"])
        missing = fill(route, MISSING_EVENT, MISSING_ENDPOINT, MISSING_LIST)
        for method in METHODS:
            if (name, asked_as(method)) in PUBLIC:
                continue
            for path in (theirs, fill(route, alpha["event"], alpha["endpoint"], alpha["list"])):
                anonymous = api(method, path, body={} if method in ("POST", "PATCH", "PUT")
                                else None)
                if anonymous.status_code != 401:
                    yield f"{method} {path} without a token: {anonymous.status_code}"
            for label, token in alpha_tokens.items():
                body = {"name": "Hijacked", "capacity": 1} if method in ("POST", "PATCH",
                                                                        "PUT") else None
                headers = {"If-Match": before["etag_version"] or '"1"'}
                got = api(method, theirs, token, body, **headers)
                absent = api(method, missing, token, body, **headers)
                if got.status_code != 404 or (got.status_code, problem_type(got)) != (
                        absent.status_code, problem_type(absent)):
                    yield (f"{label}: {method} {theirs} -> {got.status_code} "
                           f"(missing: {absent.status_code})")
    yield from collection_breaches(api, world, alpha_tokens)
    after = state_of(api, world, "beta")
    if after != before:
        yield f"beta changed: {before} -> {after}"


def collection_breaches(api, world, alpha_tokens) -> list[str]:
    """Lists and creations: alpha's tokens see and make only alpha's."""
    breaches, beta = [], world["beta"]
    for label, token in alpha_tokens.items():
        listed = api("GET", "/api/v1/webhooks/", token)
        if listed.status_code == 200 and beta["endpoint"] in {h["id"] for h in listed.json()}:
            breaches.append(f"{label}: lists beta's webhook")
        hooked = api("POST", "/api/v1/webhooks/", token,
                     {"url": RECEIVER + "/steal", "events": ["registration.created"],
                      "event_id": beta["event"]})
        if hooked.status_code not in (403, 404):
            breaches.append(f"{label}: webhook on beta's event -> {hooked.status_code}")
    alpha_hooks = api("GET", "/api/v1/webhooks/", world["tokens"]["alpha-admin-read"]).json()
    if any(h.get("event_id") == beta["event"] for h in alpha_hooks):
        breaches.append("alpha holds a webhook on beta's event")
    return breaches


def own_object_failures(port, world) -> list[str]:
    """Alpha's tokens on alpha's objects: what the role and scope allow works, the rest
    is 403 (never 404 or 401: the object is theirs)."""
    api, failures, tokens = Api(port), [], world["tokens"]
    admin_write, alpha = tokens["alpha-admin-write"], world["alpha"]
    for name, route, keywords in api_routes():
        if not keywords or keywords == {"secret"}:
            continue
        for method in METHODS:
            if (name, asked_as(method)) in PUBLIC:
                continue
            right = NEEDS.get((name, asked_as(method)))
            for role in ROLES:
                for scope in SCOPES:
                    event, endpoint = alpha["event"], alpha["endpoint"]
                    if method == "DELETE" and "event_id" in keywords:  # a delete's own
                        event = new_event(api, admin_write, "Disposable")
                    if method == "DELETE" and "endpoint_id" in keywords:
                        endpoint = new_endpoint(api, admin_write, "alpha")
                    path = fill(route, event, endpoint, alpha["list"])
                    etag = api("GET", f"/api/v1/events/{event}/").headers.get("ETag", '"1"') \
                        if method in ("PATCH", "PUT", "DELETE") else None
                    body = {"description": "Edited"} if method == "PATCH" \
                        else body_for(name, method)
                    if (name, method) == ("questions", "PUT"):  # as read just now
                        body = {"questions": [], "expected_version": api(
                            "GET", f"/api/v1/events/{event}/questions/").json()["version"]}
                    got = api(method, path, tokens[f"alpha-{role}-{scope}"], body,
                              **({"If-Match": etag} if etag else {}))
                    may = allowed(role, scope, right or CHANGE)
                    if right is None:  # a method the view does not define: refused either way
                        ok = got.status_code in ((403, 405) if may else (403,))
                    else:
                        ok = (got.status_code < 300) if may else got.status_code == 403
                    if not ok:
                        failures.append(f"alpha-{role}-{scope}: {method} {path} -> "
                                        f"{got.status_code} {got.text[:120]}")
    return failures


def test_api__alpha_reaches_nothing_of_beta__control_caught(site):
    port, careless_port, world = site

    assert api_breaches(port, world) == []
    caught = next((breach for breach in each_api_breach(careless_port, world)
                   if "/registrations/" in breach), None)

    assert caught is not None


def test_api__alpha_own_objects__each_role_and_scope_as_allowed(site):
    port, _, world = site

    assert own_object_failures(port, world) == []


def test_api__secrets__write_tokens_of_editors_only_head_without_token_401(site):
    port, _, world = site
    api, tokens, event = Api(port), world["tokens"], world["alpha"]["event"]
    path = f"/api/v1/events/{event}/registrations/"

    for role in ("admin", "editor", "viewer"):
        for scope in SCOPES:
            [person] = api("GET", path, tokens[f"alpha-{role}-{scope}"]).json()["results"]
            shows = role != "viewer" and scope == "write"
            assert ("secret" in person) == shows, (role, scope)
    for route in (path, path + "export/", f"/api/v1/events/{event}/waiting-list/",
                  "/api/v1/webhooks/"):
        head = api("HEAD", route)
        assert head.status_code == 401 and not head.content


def test_api__token_creates_only_in_its_organizer(site):
    port, _, world = site
    api, tokens = Api(port), world["tokens"]

    made = new_event(api, tokens["alpha-editor-write"], "Alpha workshop")
    refused = api("POST", "/api/v1/events/", tokens["alpha-viewer-write"],
                  {"name": "Nope", "capacity": 1})

    assert refused.status_code == 403
    assert api("GET", f"/api/v1/events/{made}/registrations/",
               tokens["alpha-viewer-read"]).status_code == 200
    assert api("GET", f"/api/v1/events/{made}/registrations/",
               tokens["beta-admin-read"]).status_code == 404


# --- the admin sweep -------------------------------------------------------------------
class Staff:
    """An admin session over HTTP (the login form, its CSRF cookie)."""

    def __init__(self, port, username):
        self.base, self.http = f"http://127.0.0.1:{port}", requests.Session()
        self.http.get(self.base + "/admin/login/", timeout=60)
        logged = self.post("/admin/login/?next=/admin/", {"username": username,
                                                          "password": PASSWORD})
        assert logged.status_code == 302, logged.text[:300]

    def get(self, path):
        return self.http.get(self.base + path, timeout=60, allow_redirects=False)

    def post(self, path, data):
        token = self.http.cookies.get("csrftoken", "")
        return self.http.post(self.base + path, data={**data, "csrfmiddlewaretoken": token},
                              timeout=60, allow_redirects=False,
                              headers={"Referer": self.base + path})


def admin_routes():
    """(name, route, keywords) of every admin page that names one object."""
    def walk(patterns, prefix):
        for pattern in patterns:
            route = prefix + str(pattern.pattern)
            if isinstance(pattern, URLResolver):
                yield from walk(pattern.url_patterns, route)
            elif isinstance(pattern, URLPattern):
                keywords = set(re.findall(r"<(?:\w+:)?(\w+)>", route))
                if keywords & {"event_id", "endpoint_id", "object_id"} and \
                        "content_type_id" not in keywords:
                    yield pattern.name or f"{prefix}{{object}}", route, keywords
    yield from walk(admin.site.get_urls(), "/admin/")


def admin_objects(port, world) -> dict:
    """The SQL objects of beta an alpha page could name: its token, team, organizer."""
    done = subprocess.run(
        [sys.executable, "manage.py", "shell", "-c",
         "import json; from booking.api.models import ApiToken; "
         "from booking.organizers.models import Organizer, Team; print(json.dumps({"
         "'apitoken': ApiToken.objects.filter(organizer__slug='beta').first().pk, "
         "'team': Team.objects.filter(organizer__slug='beta').first().pk, "
         "'organizer': Organizer.objects.get(slug='beta').pk}))"],
        cwd=ROOT, env=world["env"], check=True, capture_output=True, text=True, timeout=120)
    return json.loads(done.stdout.strip().splitlines()[-1])


def admin_path(name, route, world, sql_ids, *, missing=False):
    beta = world["beta"]
    model = next((m for m in sql_ids if f"_{m}_" in name or f"/{m}/" in route), None)
    object_id = "999999" if missing else str(sql_ids.get(model, 999999))
    return (route.replace("<str:event_id>", MISSING_EVENT if missing else beta["event"])
            .replace("<str:endpoint_id>", MISSING_ENDPOINT if missing else beta["endpoint"])
            .replace("<path:object_id>", object_id))


ADMIN_POSTS = {"name": "Hijacked", "capacity": "1", "version": "1", "starts_at": "",
               "action": "cancel_selected", "confirm": "yes",
               "selected": ["ada@beta.example.com"]}


def admin_breaches(port, world, sql_ids) -> list[str]:
    breaches, api = [], Api(port)
    before = state_of(api, world, "beta")
    for role in ROLES:
        user = Staff(port, f"alpha-{role}")
        for name, route, _ in admin_routes():
            theirs = admin_path(name, route, world, sql_ids)
            missing = admin_path(name, route, world, sql_ids, missing=True)
            for method in ("GET", "POST"):
                ask = (lambda p: user.get(p)) if method == "GET" else (
                    lambda p: user.post(p, ADMIN_POSTS))
                got, absent = ask(theirs), ask(missing)
                where = got.headers.get("Location", "").replace(theirs, missing)
                if got.status_code == 200 or (got.status_code, where) != (
                        absent.status_code, absent.headers.get("Location", "")):
                    breaches.append(f"alpha-{role}: {method} {theirs} -> {got.status_code} "
                                    f"(missing: {absent.status_code})")
        for page in ("/admin/booking/dynamoevent/", "/admin/booking/dynamoevent/?q=gala",
                     "/admin/booking_api/apitoken/", "/admin/booking_api/webhookendpointentry/",
                     "/admin/booking_organizers/team/", "/admin/booking_organizers/organizer/",
                     "/admin/"):
            text = user.get(page).text
            for secret in ("Beta Org", "hooks/beta", "beta-admin"):
                if secret in text:
                    breaches.append(f"alpha-{role}: {page} shows {secret!r}")
    after = state_of(api, world, "beta")
    if after != before:
        breaches.append(f"beta changed: {before} -> {after}")
    return breaches


def test_admin__alpha_staff_reach_nothing_of_beta(site):
    port, _, world = site

    assert admin_breaches(port, world, admin_objects(port, world)) == []


def test_admin__alpha_staff_see_their_own_by_role(site):
    port, _, world = site
    event = world["alpha"]["event"]
    for role, sees in (("admin", True), ("editor", True), ("viewer", True),
                       ("checkin", False)):
        user = Staff(port, f"alpha-{role}")
        listed = user.get("/admin/booking/dynamoevent/?q=gala")
        page = user.get(f"/admin/booking/dynamoevent/{event}/registrations/")
        assert (listed.status_code == 200 and "Alpha Org gala" in listed.text) == sees, role
        assert page.status_code == (200 if sees else 403), role
        assert ("ada@alpha.example.com" in page.text) == sees
        hooks = user.get("/admin/booking_api/webhookendpointentry/")
        assert (hooks.status_code == 200 and "hooks/alpha" in hooks.text) == (role == "admin")


def test_api__every_route_but_the_schema_is_an_api_view():
    """The scope lives in ``ApiView``: a view outside it would escape the one place."""
    from booking.api.base import ApiView

    outside = [pattern.name for pattern in api_urls.urlpatterns
               if not issubclass(pattern.callback.view_class, ApiView)]

    assert sorted(outside) == ["docs", "redoc", "schema"]
