#!/usr/bin/env bash
# The netplay page uses tickwise-net's no_std core: its `std` feature (UDP,
# std::net) must not reach the wasm build of tickwise-web, nor of the duel's
# room page. .ci/build-web.sh runs this before building.
#
#   bash .ci/check-wasm-features.sh
#
# Fails closed: it passes only when `cargo tree` ran, showed tickwise-net in
# the wasm build's feature graph, and no `std` feature of it there. A cargo
# tree that fails or prints nothing recognisable (a renamed crate, a changed
# output format, a missing target) is an error, never a pass. CARGO picks
# the cargo to run (default: cargo on PATH).
set -euo pipefail

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
CARGO="${CARGO:-cargo}"
log() { printf '[check-wasm-features] %s\n' "$*" >&2; }
die() { printf '[check-wasm-features] ERROR: %s\n' "$*" >&2; exit 1; }

# tickwise-web's own pages, and the duel's room page (a game's crate with
# tickwise-web's `room` feature).
for crate in tickwise-web tickwise-example-duel-web; do
  cmd=("$CARGO" tree --locked -p "$crate" --target wasm32-unknown-unknown -e features -i tickwise-net)
  if ! tree="$(cd "$ROOT" && "${cmd[@]}" 2>&1)"; then
    die "'${cmd[*]}' failed, so whether tickwise-net's std feature reaches the wasm build is unknown:
$tree"
  fi
  grep -q '^tickwise-net v' <<<"$tree" ||
    die "'${cmd[*]}' did not show tickwise-net in the wasm build of $crate; its output:
$tree"
  if grep -q 'tickwise-net feature "std"' <<<"$tree"; then
    die "tickwise-net's std feature (UDP) is enabled in the wasm build of $crate:
$tree"
  fi
  log "ok: tickwise-net is in the wasm build of $crate without its std feature"
done
