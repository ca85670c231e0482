"""`make run` (scripts/run.sh) shows the worker's e-mails on the console, where the web
server's are, and keeps them in var/booking_worker.log. Run with a stand-in for Python
that answers each step at once: the worker "sends" one offer and keeps running, the
development server stops after a moment, and the script stops the worker on its way out."""
import os
import subprocess
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
OFFER = "Subject: A seat is yours: Stand-in night"

STAND_IN = f"""#!/usr/bin/env bash
case "$1" in
  -c) echo "https://dynamodb.invalid" ;;   # the endpoint: not local, so nothing to start
  manage.py)
    case "$2" in
      booking_worker) echo "{OFFER}"; exec sleep 30 ;;
      runserver) sleep 1 ;;
    esac ;;
esac
"""


def test_make_run__worker_e_mails_show_on_the_console_and_in_its_log(tmp_path):
    python = tmp_path / "python"
    python.write_text(STAND_IN)
    python.chmod(0o755)
    log = ROOT / "var" / "booking_worker.log"
    before = log.read_text() if log.exists() else ""
    result = subprocess.run(["bash", "scripts/run.sh"], cwd=ROOT, capture_output=True,
                            text=True, timeout=60, env={**os.environ, "PY": str(python)})
    assert result.returncode == 0, result.stderr
    assert OFFER in result.stdout  # on the console
    deadline = time.monotonic() + 5
    while OFFER not in log.read_text()[len(before):] and time.monotonic() < deadline:
        time.sleep(0.05)
    assert OFFER in log.read_text()[len(before):]  # and in the log
