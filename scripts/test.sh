#!/usr/bin/env bash
# make test: the whole suite. Tests start their own embedded DynamoDB servers.
set -euo pipefail
cd "$(dirname "$0")/.."
PY=${PY:-.venv/bin/python}
exec "$PY" -m pytest "$@"
