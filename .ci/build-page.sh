#!/usr/bin/env bash
# Builds a browser page for any crate that exports a `tickwise_web::wasm_page!`
# class (a game's own page crate, or an example):
#
#   bash .ci/build-page.sh CRATE SRC_DIR OUT_DIR [-- EXTRA_CARGO_ARGS...]
#
# CRATE: a workspace member's package name, or the path of a crate folder
# anywhere (a game's page crate outside this repository: see
# scripts/outside-page.sh and README.md, "A page for your game").
#
#   OUT_DIR/pkg/   wasm-bindgen output: <lib name>.js and <lib name>_bg.wasm
#   OUT_DIR/       the shared page runtime from web/src (platform.js, start.js,
#                  webloop.js, replay.js, style.css), then SRC_DIR's
#                  .html/.js/.css (which may replace them)
#
# A SRC_DIR with a room-main.js is a room page (a `tickwise_web::room_page!`
# class; docs/browser.md): it also gets the shared lobby, web/src's room.html,
# room.js and meter.js, and its room-main.js is the game's part (drawing).
#
# EXTRA_CARGO_ARGS go to cargo (`--example NAME`, `--no-default-features`,
# `--features ...`). Needs `bash .ci/setup-web.sh` once. Serve the result with
# `tickwise serve --dir OUT_DIR`.
set -euo pipefail

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
log() { printf '[build-page] %s\n' "$*" >&2; }
die() { printf '[build-page] ERROR: %s\n' "$*" >&2; exit 1; }

[ $# -ge 3 ] || die "usage: $0 CRATE SRC_DIR OUT_DIR [-- EXTRA_CARGO_ARGS...]"
CRATE="$1"; SRC="$2"; OUT="$3"; shift 3
[ -d "$SRC" ] || die "no such source folder: $SRC"

# Whole-program optimisation for a page's wasm (smaller, and no slower).
export CARGO_PROFILE_RELEASE_LTO="${CARGO_PROFILE_RELEASE_LTO:-fat}"
export CARGO_PROFILE_RELEASE_CODEGEN_UNITS="${CARGO_PROFILE_RELEASE_CODEGEN_UNITS:-1}"
mkdir -p "$OUT"
bash "$ROOT/.ci/build-wasm.sh" "$CRATE" "$OUT/pkg" "$@"
rm -f "$OUT"/pkg/*.d.ts

shared=(platform.js start.js webloop.js replay.js style.css)
[ -f "$SRC/room-main.js" ] && shared+=(room.html room.js meter.js)
for f in "${shared[@]}"; do
  cp "$ROOT/web/src/$f" "$OUT/"
done
for f in "$SRC"/*; do
  case "$(basename "$f")" in
    *.html | *.js | *.css) cp "$f" "$OUT/" ;;
  esac
done
log "done: $OUT"
