#!/usr/bin/env bash
# Install Debian's JDK (Java 17+, with javac) for DynamoDB Local when no Java 17+ is found.
# Needs root; otherwise it only says what to install. javac lets the store bind one address.
set -euo pipefail
java_major() {
  "$1" -version 2>&1 | sed -n 's/.*version "\([0-9]*\)\.\{0,1\}\([0-9]*\).*/\1 \2/p' | head -1 |
    awk '{ print ($1 == 1) ? $2 : $1 }'
}
JAVA=${JAVA_HOME:+$JAVA_HOME/bin/java}
JAVA=${JAVA:-$(command -v java || true)}
if [ -n "$JAVA" ] && [ -x "$JAVA" ] && [ "$(java_major "$JAVA")" -ge 17 ] &&
   [ -x "$(dirname "$(readlink -f "$JAVA")")/javac" ]; then
  exit 0
fi
if [ "$(id -u)" -eq 0 ] && command -v apt-get >/dev/null 2>&1; then
  echo "Installing a Java 17+ JDK for DynamoDB Local..."
  export DEBIAN_FRONTEND=noninteractive
  apt-get update -qq
  apt-get install -y -qq default-jdk-headless >/dev/null
else
  echo "DynamoDB Local needs Java 17+ (a JDK, for javac): install default-jdk-headless" \
       "(Debian/Ubuntu) or set JAVA_HOME." >&2
fi
