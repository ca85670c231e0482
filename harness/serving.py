"""The production serving (`make serve`: scripts/serve.sh, nginx in front of gunicorn,
DEBUG=false) started on free ports against a DynamoDB endpoint, for the slow-client test
and the attack run (harness/attack.py). Not part of the product."""
import http.client
import os
import re
import secrets
import shutil
import signal
import socket
import subprocess
import sys
import time
import uuid
from pathlib import Path
from urllib.parse import urlencode

ROOT = Path(__file__).resolve().parent.parent
NGINX = os.environ.get("NGINX_PATH", "/usr/sbin/nginx")
ADMIN_USER, ADMIN_PASSWORD = "organizer", secrets.token_urlsafe(16)


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


def nginx_available() -> bool:
    return os.access(NGINX, os.X_OK)


def _answers_http(probe: socket.socket) -> bool:
    """Whether an HTTP server answers on ``probe``: nginx answers this internal-only URI
    itself (404), without passing it to gunicorn."""
    probe.settimeout(5)
    probe.sendall(b"GET /.problems/400 HTTP/1.0\r\nHost: 127.0.0.1\r\n\r\n")
    return probe.recv(5) == b"HTTP/"


class ProductionSite:
    """``scripts/serve.sh`` on its own ports, tables, database and runtime directory.

    ``port`` is nginx's (what clients reach), ``app_port`` gunicorn's behind it;
    ``env`` the environment it runs with (``manage`` runs a command in it).
    """

    def __init__(self, dynamodb_url: str, *, workdir: Path, client_timeout: int = 10,
                 threads: int = 4, **extra_env):
        self.port, self.app_port = free_port(), free_port()
        self.workdir = workdir
        # Under the project: nginx's workers (another user when started as root) must reach it.
        self.runtime = ROOT / "var" / f"serve-{uuid.uuid4().hex[:8]}"
        self.env = {**os.environ, "DJANGO_SETTINGS_MODULE": "config.settings", "DEBUG": "false",
                    "SECRET_KEY": secrets.token_urlsafe(50), "ALLOWED_HOSTS": "127.0.0.1",
                    "SITE_URL": f"http://127.0.0.1:{self.port}", "SECURE_SSL_REDIRECT": "false",
                    "SESSION_COOKIE_SECURE": "false", "CSRF_COOKIE_SECURE": "false",
                    "DYNAMODB_ENDPOINT_URL": dynamodb_url,
                    "DYNAMODB_TABLE_PREFIX": f"s{uuid.uuid4().hex[:8]}-",
                    "DATABASE_URL": f"sqlite:///{workdir / 'db.sqlite3'}",
                    "STATIC_ROOT": str(workdir / "static"), "EMAIL_URL": "dummymail://",
                    "WEB_CONCURRENCY": "1", "GUNICORN_THREADS": str(threads),
                    "GUNICORN_ACCESS_LOG": str(workdir / "access.log"),
                    "SERVE_ADDRESS": f"127.0.0.1:{self.port}",
                    "SERVE_APP_ADDRESS": f"127.0.0.1:{self.app_port}",
                    "SERVE_CLIENT_TIMEOUT": str(client_timeout), "SERVE_RUNTIME": str(self.runtime),
                    "PY": sys.executable, **extra_env}
        self.process = None

    @property
    def table_prefix(self) -> str:
        return self.env["DYNAMODB_TABLE_PREFIX"]

    def manage(self, *args: str) -> str:
        done = subprocess.run([sys.executable, "manage.py", *args], cwd=ROOT, env=self.env,
                              capture_output=True, text=True, timeout=180)
        if done.returncode:
            raise RuntimeError(f"manage.py {' '.join(args)} failed:\n{done.stderr}")
        return done.stdout

    def prepare(self, *, pages: bool = True, tables: bool = True) -> None:
        """What ``start`` does before serving: the tables (``tables=False`` when the caller
        has created ``table_prefix``'s), and with ``pages`` what only HTML pages and the
        admin need (static files, the admin's database and user)."""
        commands = [["create_tables"]] if tables else []
        if pages:
            commands += [["migrate", "--noinput"], ["collectstatic", "--noinput"],
                         ["createsuperuser", "--noinput", "--username", ADMIN_USER,
                          "--email", "o@example.com"]]
        if commands:
            self.manage_all(commands, DJANGO_SUPERUSER_PASSWORD=ADMIN_PASSWORD)

    def start(self, *, pages: bool = True, tables: bool = True,
              prepared: bool = False) -> "ProductionSite":
        """Serve; ``pages=False`` skips what only HTML pages and the admin need (static
        files, the admin's database and user), for a test that loads JSON only;
        ``tables=False`` when the caller has created ``table_prefix``'s tables;
        ``prepared`` when ``prepare`` ran already."""
        if not prepared:
            self.prepare(pages=pages, tables=tables)
        log = (self.workdir / "serve.log").open("w")
        self.process = subprocess.Popen(["bash", "scripts/serve.sh"], cwd=ROOT, env=self.env,
                                        stdout=log, stderr=subprocess.STDOUT,
                                        start_new_session=True)
        self._wait_for(self.app_port)
        self._wait_for(self.port, answered=True)
        return self

    def manage_all(self, commands: list[list[str]], **extra_env: str) -> str:
        """Several management commands in one process of the site's environment (each as
        ``manage.py`` would run it; one Django start-up instead of one each): what they
        printed, one after another."""
        script = ("import django; django.setup()\n"
                  "from django.core.management import call_command\n"
                  f"for args in {commands!r}:\n    call_command(*args)\n")
        done = subprocess.run([sys.executable, "-c", script], cwd=ROOT,
                              env={**self.env, **extra_env}, capture_output=True, text=True,
                              timeout=300)
        if done.returncode:
            raise RuntimeError(f"manage.py {commands} failed:\n{done.stderr}")
        return done.stdout

    def _wait_for(self, port: int, timeout: float = 60.0, *, answered: bool = False) -> None:
        """Until ``port`` accepts a connection; with ``answered`` until an HTTP answer
        comes back on it. A connection alone does not show nginx is up: while gunicorn's
        workers warm, nothing listens on nginx's port, and a probe of a free port in the
        ephemeral range can connect to itself (TCP's simultaneous open), which an answer
        cannot fake."""
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline and self.process.poll() is None:
            try:
                with socket.create_connection(("127.0.0.1", port), timeout=0.5) as probe:
                    if not answered or _answers_http(probe):
                        return
            except OSError:
                pass
            time.sleep(0.1)
        self.stop()
        raise RuntimeError(f"make serve did not start:\n{(self.workdir / 'serve.log').read_text()}")

    def stop(self) -> None:
        if self.process is not None and self.process.poll() is None:
            os.killpg(self.process.pid, signal.SIGTERM)
            try:
                self.process.wait(timeout=20)
            except subprocess.TimeoutExpired:
                os.killpg(self.process.pid, signal.SIGKILL)
                self.process.wait()
        shutil.rmtree(self.runtime, ignore_errors=True)

    def __enter__(self):
        return self.start()

    def __exit__(self, *exc):
        self.stop()


FORM = "application/x-www-form-urlencoded"


class Browser:
    """One client with its cookies, talking HTTP/1.1 to the site."""

    def __init__(self, port: int):
        self.port, self.cookies = port, {}

    def request(self, method: str, path: str, body: bytes | str = b"", headers=None,
                timeout: float = 30.0) -> tuple[int, str]:
        connection = http.client.HTTPConnection("127.0.0.1", self.port, timeout=timeout)
        cookie = "; ".join(f"{k}={v}" for k, v in self.cookies.items())
        connection.request(method, path, body, {**({"Cookie": cookie} if cookie else {}),
                                                **(headers or {})})
        response = connection.getresponse()
        for header in response.headers.get_all("Set-Cookie") or []:
            name, value = header.split(";")[0].split("=", 1)
            self.cookies[name] = value
        text = response.read().decode("utf-8", "replace")
        connection.close()
        return response.status, text

    def form(self, path: str) -> dict:
        """The CSRF token and the signup form's token on the page at ``path``."""
        _, html = self.request("GET", path)
        found = {name: re.search(rf'name="{name}" value="([^"]*)"', html)
                 for name in ("csrfmiddlewaretoken", "token")}
        return {name: match.group(1) for name, match in found.items() if match}

    def post(self, path: str, fields: dict) -> tuple[int, str]:
        return self.request("POST", path, urlencode(fields), {"Content-Type": FORM})
