"""The documentation site builds strictly (a broken link or anchor, a page left out of the
navigation, a missing page all fail), no page runs past 400 lines, the README stays short,
and the pages use plain words."""
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
DOCS = ROOT / "docs"
MAX_PAGE_LINES = 400
MAX_README_LINES = 150
# Words no reader can look up: the source articles' numbering and ticket numbers.
UNPLAIN = re.compile(r"seed 0|pattern 2-|countermeasure|[Ii]ssue [0-9]+")


def build(site_dir: Path, docs_dir: Path | None = None) -> subprocess.CompletedProcess:
    """`make docs-build` (mkdocs build --strict), into ``site_dir``."""
    config = ROOT / "mkdocs.yml"
    if docs_dir is not None:  # the same configuration over another copy of the pages
        text = config.read_text().replace("docs_dir: docs", f"docs_dir: {docs_dir}")
        text = text.replace("scripts/docs_hooks.py", str(ROOT / "scripts" / "docs_hooks.py"))
        config = site_dir.parent / "mkdocs.yml"
        config.write_text(text)
    return subprocess.run(
        [sys.executable, "-m", "mkdocs", "build", "--strict", "--config-file", str(config),
         "--site-dir", str(site_dir)],
        cwd=ROOT, env={**os.environ, "NO_MKDOCS_2_WARNING": "1"}, capture_output=True,
        text=True, timeout=300)


def test_the_site_builds_strictly(tmp_path):
    done = build(tmp_path / "site")
    assert done.returncode == 0, done.stderr
    assert "WARNING" not in done.stderr, done.stderr
    for page in ("index.html", "start/tutorial/index.html", "concepts/guards/index.html",
                 "reference/http-api/index.html", "reference/settings/index.html"):
        assert (tmp_path / "site" / page).is_file(), page
    api = (tmp_path / "site" / "reference/http-api/index.html").read_text()
    assert "/api/v1/events/{event_id}/registrations/" in api  # rendered from the schema


def test_a_broken_link_fails_the_build(tmp_path):
    """The control: the same build over a copy of the pages with one broken link fails."""
    docs = tmp_path / "docs"
    shutil.copytree(DOCS, docs)
    page = docs / "concepts" / "write-skew.md"
    page.write_text(page.read_text() + "\nSee [nowhere](no-such-page.md).\n")
    done = build(tmp_path / "site", docs_dir=docs)
    assert done.returncode != 0
    assert "no-such-page.md" in done.stderr


def test_no_page_is_longer_than_400_lines():
    long = {str(p.relative_to(ROOT)): n for p in DOCS.rglob("*.md")
            if (n := len(p.read_text().splitlines())) > MAX_PAGE_LINES}
    assert long == {}


def test_the_readme_is_short():
    assert len((ROOT / "README.md").read_text().splitlines()) < MAX_README_LINES


@pytest.mark.parametrize("where", ["README.md", "docs", "booking"])
def test_plain_words(where):
    files = [ROOT / where] if where.endswith(".md") else \
        [p for p in (ROOT / where).rglob("*") if p.suffix in (".md", ".py", ".html", ".txt")]
    found = [f"{f.relative_to(ROOT)}:{n}: {line.strip()}" for f in files
             for n, line in enumerate(f.read_text().splitlines(), 1) if UNPLAIN.search(line)]
    assert found == []
