"""The documentation site in a browser: built strictly, served by a static file server on
127.0.0.1, and looked at at desktop and phone width. Nothing is fetched from anywhere else
(Material's assets, search and the vendored Mermaid are all on the site), and the
concepts' diagrams are drawn."""
import os
import subprocess
import sys
from pathlib import Path
from urllib.parse import urlsplit

import pytest

from localdynamo.process import terminate
from tests.browser.conftest import free_port, wait_for_port

ROOT = Path(__file__).resolve().parents[2]


@pytest.fixture(scope="module")
def docs_site(tmp_path_factory):
    site = tmp_path_factory.mktemp("docs") / "site"
    subprocess.run([sys.executable, "-m", "mkdocs", "build", "--strict", "--site-dir", str(site)],
                   cwd=ROOT, env={**os.environ, "NO_MKDOCS_2_WARNING": "1"}, check=True,
                   capture_output=True, timeout=300)
    port, log = free_port(), site.parent / "http.log"
    with log.open("w") as output:
        server = subprocess.Popen(
            [sys.executable, "-m", "http.server", str(port), "--bind", "127.0.0.1",
             "--directory", str(site)], stdout=output, stderr=subprocess.STDOUT)
    wait_for_port(port, server, log)
    yield f"http://127.0.0.1:{port}"
    terminate(server)


@pytest.fixture
def offline_page(page):
    """The page, with every request that leaves 127.0.0.1 recorded and refused."""
    page.outside = []

    def only_local(route):
        if urlsplit(route.request.url).hostname == "127.0.0.1":
            return route.continue_()
        page.outside.append(route.request.url)
        return route.abort()
    page.route("**/*", only_local)
    return page


@pytest.mark.parametrize("path, name, text", [
    ("/", "docs-home", "never overbooks"),
    ("/concepts/guards/", "docs-concepts-guards", "Lock item in a transaction"),
    ("/reference/http-api/", "docs-http-api", "/api/v1/events/{event_id}/registrations/"),
])
def test_docs_pages(docs_site, offline_page, screenshot, path, name, text):
    page = offline_page
    page.goto(docs_site + path)
    assert text in page.inner_text("article")
    if "concepts" in path:
        # Every diagram drawn by the vendored Mermaid (no CDN): Material replaces each
        # <pre class="mermaid"> source with a <div class="mermaid"> holding the drawing (in
        # a closed shadow root), and leaves the source in place when drawing fails.
        page.wait_for_function(
            "document.querySelectorAll('div.mermaid').length >= 8 && "
            "document.querySelectorAll('pre.mermaid').length == 0", timeout=20_000)
    screenshot(page, name)
    assert page.outside == []


def test_search_works_offline(docs_site, offline_page):
    page = offline_page
    page.goto(docs_site + "/")
    page.keyboard.press("/")
    page.keyboard.type("idempotency")
    page.wait_for_selector(".md-search-result__item", timeout=15_000)
    assert page.outside == []
