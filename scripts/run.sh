#!/usr/bin/env bash
# make run: migrate, start DynamoDB Local (unless one is already running or an external
# endpoint is configured), create the tables, and serve the site.
set -euo pipefail
cd "$(dirname "$0")/.."
PY=${PY:-.venv/bin/python}
mkdir -p var
# A development server on 127.0.0.1: debug pages, plain HTTP, the development key.
# Production runs under gunicorn instead (docs/deployment.md).
export DEBUG=${DEBUG:-true}

"$PY" manage.py migrate --noinput

endpoint=$("$PY" -c 'import django,os; os.environ.setdefault("DJANGO_SETTINGS_MODULE","config.settings"); django.setup(); from django.conf import settings; print(settings.DYNAMODB_ENDPOINT_URL)')
server_pid=""
cleanup() { [ -n "$server_pid" ] && kill "$server_pid" 2>/dev/null || true; }
trap cleanup EXIT INT TERM

reachable() { "$PY" - "$1" <<'PYEOF'
import socket, sys
from urllib.parse import urlsplit
u = urlsplit(sys.argv[1])
try:
    socket.create_connection((u.hostname, u.port or 80), timeout=0.5).close()
except OSError:
    sys.exit(1)
PYEOF
}

case "$endpoint" in
  http://127.0.0.1:*|http://localhost:*)
    if reachable "$endpoint"; then
      echo "Using the DynamoDB Local already running at $endpoint"
    else
      bash scripts/ensure_java.sh
      "$PY" -m localdynamo  # the first run fetches DynamoDB Local (about 50 MB)
      "$PY" manage.py dynamodb_local >var/dynamodb_local.log 2>&1 &
      server_pid=$!
      # The JVM starts in a few seconds; give up if it dies.
      for _ in $(seq 1 600); do
        reachable "$endpoint" && break
        kill -0 "$server_pid" 2>/dev/null || break
        sleep 0.2
      done
      reachable "$endpoint" || { cat var/dynamodb_local.log; exit 1; }
      echo "Started DynamoDB Local at $endpoint (log: var/dynamodb_local.log)"
    fi ;;
  *) echo "Using DynamoDB endpoint ${endpoint:-of AWS}" ;;
esac

"$PY" manage.py create_tables
"$PY" manage.py seed_demo  # demo events only when the store has none
# The one background worker: sends every e-mail (the site only records what a request
# owes; the worker looks every BOOKING_OUTBOX_INTERVAL, 0.5 s), passes lapsed waiting-list
# offers (and freed seats) to the next in line, and runs the stream decider that confirms
# or rejects the streams strategy's requests in arrival order. Its output (the e-mails it
# sends, confirmations included, printed by the console backend, and a line per pass that
# did something) shows here beside the web server's, and
# is kept in var/booking_worker.log too. $! is the worker itself, not the tee.
PYTHONUNBUFFERED=1 "$PY" manage.py booking_worker > >(tee -a var/booking_worker.log) 2>&1 &
worker_pid=$!
trap 'kill "$worker_pid" 2>/dev/null || true; cleanup' EXIT INT TERM
echo "Started the booking worker (its e-mails show here; log: var/booking_worker.log)"
address=${RUN_ADDRESS:-127.0.0.1:8000}
echo "Serving http://$address/ (Ctrl+C to stop)"
"$PY" manage.py runserver --insecure --noreload "$address"
