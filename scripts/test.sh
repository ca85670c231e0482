#!/usr/bin/env bash
# make test: the whole suite. Tests start their own embedded DynamoDB servers and web
# servers; the browser tests need Debian's chromium, installed here when missing.
set -euo pipefail
cd "$(dirname "$0")/.."
PY=${PY:-.venv/bin/python}
bash scripts/ensure_chromium.sh || echo "Could not install chromium; browser tests will be skipped." >&2
exec "$PY" -m pytest "$@"
