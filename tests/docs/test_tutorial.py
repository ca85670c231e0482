"""The tutorial (docs/start/tutorial.md) runs as written against a fresh store.

Its first ``sh`` block is ``make run``. Here that is what the Makefile's ``run`` target
runs after installing (``bash scripts/run.sh``), with a fresh in-memory DynamoDB Local of
this test as the endpoint, a fresh SQLite file and a free port (``RUN_ADDRESS``); nothing
else of the environment is set, so every other setting has its definition's default, as in
a new shell. Every later ``sh`` block then runs, in order, in one bash session with
``set -euo pipefail``, exactly as written, except two substitutions: the free port for
``127.0.0.1:8000`` when 8000 is not the port, and this test's interpreter for
``.venv/bin/python`` when the checkout has no ``.venv`` (a worktree on a shared
virtualenv; ``make test`` makes ``.venv``).
"""
import json
import os
import re
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from config.settings_reference import BY_NAME
from tests.conftest import start_server, stop_server

ROOT = Path(__file__).resolve().parents[2]
TUTORIAL = ROOT / "docs" / "start" / "tutorial.md"
BLOCK = re.compile(r"^```sh\n(.*?)^```", re.MULTILINE | re.DOTALL)
MARK = "=== tutorial block done ==="


def sh_blocks(text: str) -> list[str]:
    return BLOCK.findall(text)


def fresh_shell_environment(**values) -> dict:
    """The test process's environment less every setting of the project (the suite sets
    test defaults), plus ``values``."""
    env = {k: v for k, v in os.environ.items()
           if k not in BY_NAME and k not in ("DJANGO_SETTINGS_MODULE", "PY")}
    return {**env, **values}


def run_blocks(blocks: list[str], env: dict, timeout: float = 300) -> list[str]:
    """Run ``blocks`` in one bash session; return each block's output. A failing block
    raises with its source and output."""
    script = ["set -euo pipefail", f"cd {ROOT}"]
    for block in blocks:
        script += [block, f"echo '{MARK}'"]
    done = subprocess.run(["bash", "-c", "\n".join(script)], env=env, capture_output=True,
                          text=True, timeout=timeout)
    outputs = done.stdout.split(MARK + "\n")
    if done.returncode != 0:
        failed = blocks[len(outputs) - 1] if len(outputs) <= len(blocks) else "?"
        raise AssertionError(f"tutorial block failed (exit {done.returncode}):\n{failed}\n"
                             f"--- output:\n{outputs[-1]}\n--- stderr:\n{done.stderr}")
    return outputs[:len(blocks)]


def wait_for(url: str, process, log: Path, timeout: float = 120) -> None:
    import urllib.request
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if process.poll() is not None:
            raise AssertionError(f"make run stopped:\n{log.read_text()}")
        try:
            urllib.request.urlopen(url, timeout=2).close()
            return
        except OSError:
            time.sleep(0.3)
    raise AssertionError(f"make run did not serve {url}:\n{log.read_text()}")


def free_port() -> int:
    import socket
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


def test_a_failing_block_fails_the_run():
    """The control: the runner does not pass a block that fails."""
    with pytest.raises(AssertionError, match="exit 3"):
        run_blocks(["echo fine", "exit 3"], fresh_shell_environment())


@pytest.fixture
def made_run(tmp_path):
    """`make run` (scripts/run.sh) on a fresh store; yields (base url, environment)."""
    server = start_server()
    port = free_port()
    env = fresh_shell_environment(
        DYNAMODB_ENDPOINT_URL=server.url,
        DATABASE_URL=f"sqlite:///{tmp_path / 'db.sqlite3'}",
        RUN_ADDRESS=f"127.0.0.1:{port}", PY=sys.executable, PYTHONUNBUFFERED="1")
    log = tmp_path / "make-run.log"
    with log.open("w") as output:
        process = subprocess.Popen(["bash", "scripts/run.sh"], cwd=ROOT, env=env,
                                   stdout=output, stderr=subprocess.STDOUT,
                                   start_new_session=True)
    try:
        wait_for(f"http://127.0.0.1:{port}/", process, log)
        yield f"http://127.0.0.1:{port}", env, log
    finally:
        # Ctrl+C in the terminal: the whole group (runserver, the worker, the script).
        with_group(process, signal.SIGINT)
        try:
            process.wait(timeout=20)
        except subprocess.TimeoutExpired:
            with_group(process, signal.SIGKILL)
            process.wait()
        stop_server(server)


def with_group(process, sig) -> None:
    try:
        os.killpg(process.pid, sig)
    except ProcessLookupError:
        pass


def test_the_tutorial_runs_as_written(made_run):
    url, env, log = made_run
    blocks = sh_blocks(TUTORIAL.read_text())
    assert blocks[0].strip() == "make run"
    rest = []
    for block in blocks[1:]:
        if url != "http://127.0.0.1:8000":
            block = block.replace("http://127.0.0.1:8000", url)
        if not (ROOT / ".venv" / "bin" / "python").exists():
            block = block.replace(".venv/bin/python", sys.executable)
        rest.append(block)
    env = {k: v for k, v in env.items() if k != "PY"}
    outputs = dict(zip(blocks[1:], run_blocks(rest, env)))

    def output_of(text: str) -> str:
        return next(out for block, out in outputs.items() if text in block)

    created = output_of("create_event").splitlines()
    event_id = created[0].strip()
    assert re.fullmatch(r"[0-9a-f-]{8,}", event_id), created
    assert "Intro to DynamoDB" in output_of("create_event")

    posts = [out for block, out in outputs.items() if "-X POST" in block]
    first, repeat = (json.loads(out) for out in posts)
    assert first["status"] == "confirmed" and first["email"] == "ada@example.com"
    assert repeat["id"] == first["id"]  # the same request: the same registration

    event = json.loads(output_of('curl -s "$API/events/$EVENT/"'))
    assert event["id"] == event_id and event["availability"]["confirmed"] == 1

    python = output_of("manage.py shell")
    assert "refused:" in python
    assert "after the cancellation: 2 seats left" in python

    # The token's list (curl prints no newline after it), then the two status codes.
    admin = re.search(r'(\{"results".*\})(\d{3})\s+(\d{3})\s*$', output_of("create_api_token"),
                      re.S)
    listed, codes = admin.group(1), [admin.group(2), admin.group(3)]
    registrations = json.loads(listed)["results"]
    assert [r["email"] for r in registrations] == ["ada@example.com"]
    assert all("secret" not in r for r in registrations)  # a read token sees no secrets
    assert codes == ["401", "200"]  # no token: 401; the admin's login page
    assert "Serving" in log.read_text()
