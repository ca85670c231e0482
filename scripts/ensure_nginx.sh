#!/usr/bin/env bash
# Install Debian's nginx for `make serve` and its slow-client test when it is missing: the
# buffering proxy that faces clients in front of gunicorn (config/nginx.conf). Needs root;
# otherwise it only reports what is missing. Installing it starts no service (the
# project runs nginx itself, with its own config, as `make serve` does).
set -euo pipefail
NGINX=${NGINX_PATH:-/usr/sbin/nginx}
if [ -x "$NGINX" ]; then
  exit 0
fi
if [ "$(id -u)" -eq 0 ] && command -v apt-get >/dev/null 2>&1; then
  echo "Installing nginx (the buffering proxy of make serve)..."
  export DEBIAN_FRONTEND=noninteractive
  apt-get update -qq
  apt-get install -y -qq --no-install-recommends nginx >/dev/null
else
  echo "nginx not found at $NGINX and not root: install Debian's nginx to use make serve;" \
       "the slow-client test will be skipped." >&2
fi
