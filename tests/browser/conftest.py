"""Browser fixtures: the site served live by `runserver` on the embedded DynamoDB, and a
headless Chromium page driven by Playwright.

- ``live_site`` (session): the served site. ``.url``, ``.env`` (the server's environment),
  ``.mail_dir`` (e-mails land there as files), ``.manage(*args)`` runs a management command
  against the same database and tables (e.g. ``createsuperuser --noinput`` with
  ``DJANGO_SUPERUSER_PASSWORD`` in ``env=``).
- ``site_service``: a BookingService in the test process on the live site's tables.
- ``browser`` (session) and ``page`` (a fresh context per test, 1024x768).
- ``screenshot`` fixture: ``screenshot(page, name)`` saves ``test-artifacts/<name>-1280.png``
  and ``<name>-390.png`` (desktop and phone width, full page), and checks that the page
  never scrolls sideways at phone width.

Browser tests are skipped when Debian's chromium is missing (scripts/ensure_chromium.sh
installs it). Playwright's own browser download is never used.
"""
import os
import socket
import subprocess
import sys
import time
import uuid
from pathlib import Path

import pytest

from booking import wiring
from booking.wiring import reset_services
from harness.controls import local_store
from localdynamo.process import terminate

# Playwright's sync API keeps an asyncio loop running in this process's main thread while
# the session's browser is open; Django then refuses every ORM call (SynchronousOnlyOperation)
# in the database tests that run after a browser test in the same process, as happens
# under `make test`'s two workers, which take files as they come. The servers the tests
# start inherit it too, which guards nothing there: the product has no async code.
os.environ.setdefault("DJANGO_ALLOW_ASYNC_UNSAFE", "true")
ROOT = Path(__file__).resolve().parents[2]
ARTIFACTS = ROOT / "test-artifacts"
CHROMIUM = os.environ.get("CHROMIUM_PATH", "/usr/bin/chromium")
CHROMIUM_ARGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-quic",
                 "--no-first-run", "--disable-background-networking",
                 "--disable-component-update", "--disable-sync"]


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


def wait_for_port(port: int, process, log: Path, timeout: float = 30.0) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline and process.poll() is None:
        try:
            socket.create_connection(("127.0.0.1", port), timeout=0.5).close()
            return
        except OSError:
            time.sleep(0.1)
    process.kill()
    raise RuntimeError(f"the web server did not start:\n{log.read_text()}")


class LiveSite:
    def __init__(self, env: dict, workdir: Path):
        self.env, self.workdir = env, workdir
        self.mail_dir = workdir / "mail"
        self.process, self.url, self.worker = None, None, None

    def manage(self, *args, env=None, check=True) -> subprocess.CompletedProcess:
        return subprocess.run([sys.executable, "manage.py", *args], cwd=ROOT,
                              env={**self.env, **(env or {})}, check=check,
                              capture_output=True, text=True, timeout=120)

    def sent_mail(self) -> list[str]:
        """The e-mails the site has sent so far (the file backend's files), oldest first."""
        files = sorted(self.mail_dir.glob("*.log"), key=lambda f: f.stat().st_mtime)
        return [f.read_text() for f in files]

    def mail_containing(self, text: str, count: int = 1, timeout: float = 10.0) -> list[str]:
        """Wait until ``count`` e-mails containing ``text`` were sent (the site's booking
        worker sends what a request owes, within its outbox interval); return them."""
        deadline = time.monotonic() + timeout
        while True:
            found = [m for m in self.sent_mail() if text in m]
            if len(found) >= count or time.monotonic() > deadline:
                return found
            time.sleep(0.05)

    def start(self) -> None:
        port, log = free_port(), self.workdir / "runserver.log"
        self.url = f"http://127.0.0.1:{port}"
        self.env["SITE_URL"] = self.url  # links in e-mails point at this server
        with log.open("w") as output:
            self.process = subprocess.Popen(
                [sys.executable, "manage.py", "runserver", "--insecure", "--noreload",
                 f"127.0.0.1:{port}"],
                cwd=ROOT, env=self.env, stdout=output, stderr=subprocess.STDOUT)
        wait_for_port(port, self.process, log)
        # The site's worker, as `make run` starts one: it sends the e-mails requests owe.
        # Without the decider and the waiting lists' clock (an hour apart, after its first
        # pass): the tests that need them run a pass themselves.
        with (self.workdir / "booking_worker.log").open("w") as output:
            self.worker = subprocess.Popen(
                [sys.executable, "manage.py", "booking_worker", "--no-decider",
                 "--interval", "3600", "--outbox-interval", "0.2"],
                cwd=ROOT, env=self.env, stdout=output, stderr=subprocess.STDOUT)

    def stop(self) -> None:
        terminate(self.worker)
        terminate(self.process)


@pytest.fixture(scope="session")
def live_site(local_server, tmp_path_factory):
    """The whole site served by `runserver --insecure` (static files too) on fresh tables."""
    workdir = tmp_path_factory.mktemp("live_site")
    env = {
        **os.environ,
        "DJANGO_SETTINGS_MODULE": "config.settings",
        "DYNAMODB_ENDPOINT_URL": local_server.url,
        "DYNAMODB_TABLE_PREFIX": f"w{uuid.uuid4().hex[:8]}-",
        "DATABASE_URL": f"sqlite:///{workdir / 'db.sqlite3'}",
        # environ drops the first "/" of the path: four slashes make an absolute path.
        "EMAIL_URL": f"filemail:///{workdir / 'mail'}",
        "DEBUG": "false",
        "ALLOWED_HOSTS": "127.0.0.1,localhost",
        "PYTHONUNBUFFERED": "1",
        # Every browser test signs up from 127.0.0.1: the signup limit is tested elsewhere.
        "BOOKING_SIGNUP_RATE": "off",
        "BOOKING_CANCEL_RATE": "off",
    }
    site = LiveSite(env, workdir)
    site.manage("migrate", "--noinput")
    site.manage("create_tables")
    site.manage("create_organizer", "acme", "--name", "Acme")  # the admin's events are its
    site.start()
    yield site
    site.stop()


@pytest.fixture
def site_service(live_site):
    """The booking service of this test process, on the live site's tables."""
    store = local_store(live_site.env["DYNAMODB_ENDPOINT_URL"],
                        table_prefix=live_site.env["DYNAMODB_TABLE_PREFIX"])
    service = wiring.service_from_settings(store=store)
    wiring.install(service)
    yield service
    reset_services()


@pytest.fixture(scope="session")
def browser():
    if not Path(CHROMIUM).exists():
        pytest.skip(f"no chromium at {CHROMIUM} (run scripts/ensure_chromium.sh)")
    sync_api = pytest.importorskip("playwright.sync_api")
    with sync_api.sync_playwright() as playwright:
        chromium = playwright.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS,
                                              headless=True)
        yield chromium
        chromium.close()


@pytest.fixture
def page(browser):
    context = browser.new_context(viewport={"width": 1024, "height": 768})
    context.set_default_timeout(15_000)
    page = context.new_page()
    yield page
    context.close()


SCREEN_WIDTHS = (1280, 390)  # desktop, phone
PHONE_WIDTH = 390
# Sub-pixel rounding of a page that fits exactly; anything more is a sideways scroll.
WIDTH_TOLERANCE = 2


def page_width(page) -> int:
    """How wide the page's content is (what scrolls sideways when above the viewport)."""
    return page.evaluate("document.documentElement.scrollWidth")


@pytest.fixture
def screenshot():
    """``screenshot(page, name)`` saves test-artifacts/<name>-<width>.png at each of
    ``SCREEN_WIDTHS`` (full page), restores the viewport, then fails if the page was
    wider than the phone's ``PHONE_WIDTH`` (it would scroll sideways there; a table may
    scroll inside its own box, the page may not)."""
    def save(page, name: str) -> list[Path]:
        ARTIFACTS.mkdir(exist_ok=True)
        viewport, paths, widest = page.viewport_size, [], None
        for width in SCREEN_WIDTHS:
            page.set_viewport_size({"width": width, "height": 800})
            path = ARTIFACTS / f"{name}-{width}.png"
            page.screenshot(path=str(path), full_page=True)
            paths.append(path)
            if width == PHONE_WIDTH:
                widest = page_width(page)
        page.set_viewport_size(viewport)
        assert widest is None or widest <= PHONE_WIDTH + WIDTH_TOLERANCE, (
            f"{name}: the page is {widest} px wide at {PHONE_WIDTH} px and scrolls sideways")
        return paths
    return save
