#!/usr/bin/env bash
# Install Debian's chromium for the browser tests when it is missing (Playwright's own
# browser download is not used). Needs root; otherwise it only reports what is missing.
set -euo pipefail
CHROMIUM=${CHROMIUM_PATH:-/usr/bin/chromium}
if [ -x "$CHROMIUM" ]; then
  exit 0
fi
if [ "$(id -u)" -eq 0 ] && command -v apt-get >/dev/null 2>&1; then
  echo "Installing chromium for the browser tests..."
  export DEBIAN_FRONTEND=noninteractive
  apt-get update -qq
  apt-get install -y -qq chromium >/dev/null
else
  echo "chromium not found at $CHROMIUM and not root: the browser tests will be skipped." >&2
fi
