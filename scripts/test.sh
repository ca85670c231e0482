#!/usr/bin/env bash
# make test: the layout check, then the whole suite. Tests start their own DynamoDB Local and web servers;
# DynamoDB Local needs Java 17+, the browser tests Debian's chromium and the slow-client
# test Debian's nginx, each installed
# here when missing (as root).
set -euo pipefail
cd "$(dirname "$0")/.."
PY=${PY:-.venv/bin/python}
"$PY" scripts/check_layout.py  # import cycles, layers, settings reads (README "Layout")
DEBUG=true "$PY" -m mypy  # all of booking/, the Django plugin reading the settings (mypy.ini)
bash scripts/ensure_java.sh
"$PY" -m localdynamo  # fetches DynamoDB Local once per user, checks Java
bash scripts/ensure_chromium.sh || echo "Could not install chromium; browser tests will be skipped." >&2
bash scripts/ensure_nginx.sh || echo "Could not install nginx; the slow-client test will be skipped." >&2
# Every DynamoDB Local the tests start lives minutes, not hours: the JVM's quick compiler
# and serial collector cost the 2-core machine less CPU (measured in docs/local-dynamodb.md).
export DYNAMODB_LOCAL_JAVA_OPTIONS=${DYNAMODB_LOCAL_JAVA_OPTIONS:-"-XX:TieredStopAtLevel=1 -XX:+UseSerialGC"}
# Two workers (pytest-xdist), a file each at a time: each worker starts its own DynamoDB
# Local and servers. TEST_WORKERS=0 runs in this process alone (arguments after it win too).
exec "$PY" -m pytest -n "${TEST_WORKERS:-2}" --dist loadfile "$@"
