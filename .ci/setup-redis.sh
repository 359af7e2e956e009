#!/usr/bin/env bash
# Installs redis-server (Debian's package) for the verification service's
# tests, if it is missing. Idempotent: does nothing when it is there. The
# tests start their own private instance on a free port in a temp dir; the
# package's system service is never used (and is stopped if apt started it).
set -euo pipefail
if command -v redis-server >/dev/null 2>&1 && command -v redis-cli >/dev/null 2>&1; then
  exit 0
fi
export DEBIAN_FRONTEND=noninteractive
SUDO=""
if [ "$(id -u)" != 0 ]; then SUDO="sudo"; fi
if ! $SUDO apt-get install -y --no-install-recommends redis-server; then
  $SUDO apt-get update
  $SUDO apt-get install -y --no-install-recommends redis-server
fi
# apt may start the packaged service; the tests do not want it.
if command -v systemctl >/dev/null 2>&1; then
  $SUDO systemctl stop redis-server >/dev/null 2>&1 || true
fi
redis-server --version
