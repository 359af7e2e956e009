#!/usr/bin/env bash
# Installs the tools the test run uses besides Rust, when they are missing
# (Debian packages): node and npm (the browser tests, the wasm build's
# scripts), python3 (the Python reference parity), a C++ compiler (g++:
# libfuzzer-sys builds libFuzzer with it for fuzz/run.sh), b3sum (the
# service tests check job ids against it, an implementation of BLAKE3
# independent of the service's), and valgrind (the benchmark reports'
# instruction counts: scripts/bench-compare.sh, bench_service_pinned.py).
#
#   bash .ci/setup-base.sh      (.ci/run runs it before scripts/test-all.sh)
#
# Idempotent and cached: when every tool is on PATH it only says so; else it
# runs `apt-get update` once, then installs the missing packages in one
# `apt-get install`, and checks each tool is there afterwards.
set -euo pipefail

log() { printf '[setup-base] %s\n' "$*" >&2; }
die() { printf '[setup-base] ERROR: %s\n' "$*" >&2; exit 1; }
have() { command -v "$1" >/dev/null 2>&1; }

# tool on PATH -> Debian package that provides it
tools=(node npm python3 g++ b3sum valgrind)
packages=(nodejs npm python3 g++ b3sum valgrind)
missing=()
for i in "${!tools[@]}"; do
  have "${tools[$i]}" || missing+=("${packages[$i]}")
done
if [ ${#missing[@]} -eq 0 ]; then
  log "already installed: ${tools[*]}"
  exit 0
fi

SUDO=()
if [ "${EUID:-$(id -u)}" -ne 0 ]; then
  have sudo || die "not root and no sudo: cannot apt-get install ${missing[*]}"
  SUDO=(sudo)
fi
log "apt: apt-get update"
"${SUDO[@]}" env DEBIAN_FRONTEND=noninteractive apt-get update -qq
log "apt: installing ${missing[*]}"
"${SUDO[@]}" env DEBIAN_FRONTEND=noninteractive \
  apt-get install -y -qq --no-install-recommends "${missing[@]}" >&2
hash -r
for t in "${tools[@]}"; do
  have "$t" || die "$t is still missing after installing ${missing[*]}"
done
log "installed: ${missing[*]}"
