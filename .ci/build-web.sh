#!/usr/bin/env bash
# Builds the browser pages into web/dist/:
#
#   bash .ci/build-web.sh
#
#   web/dist/index.html           links to the pages
#   web/dist/island.html          the island prototype as ONE file (wasm + JS + CSS
#                                 inlined): works opened straight from disk (file://)
#   web/dist/island-module.html   the same page loading its modules and .wasm
#   web/dist/horde.html           the horde page (30 Hz sim, interpolated drawing)
#   web/dist/netplay.html         two rollback peers side by side over the network
#                                 simulator (tickwise-net, no UDP in the wasm)
#   web/dist/room.html            one horde match across tabs, one player per tab, in a
#                                 room of `tickwise serve` (WebRTC data channels or
#                                 the server's relay)
#   web/dist/pkg/                 wasm-bindgen output for crates/tickwise-web
#   web/dist/counter/             the smallest page for a sim of one's own
#                                 (example counter_page, via .ci/build-page.sh)
#   web/dist/duel/                the duel example game's page (its own crate,
#                                 examples/duel-web without its `room` feature,
#                                 via .ci/build-page.sh)
#   web/dist/duel-room/           the duel's room page: the shared lobby
#                                 (room.html, room.js) with the duel's RoomMatch
#                                 class and examples/duel-web/room/room-main.js;
#                                 served by the duel's own `duel serve`
#
# Needs `bash .ci/setup-web.sh` once (wasm target or Debian build-std route,
# wasm-bindgen-cli, node). Serve the result with `tickwise serve`.
set -euo pipefail

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
SRC="$ROOT/web/src"
DIST="$ROOT/web/dist"

log() { printf '[build-web] %s\n' "$*" >&2; }

rm -rf "$DIST"
mkdir -p "$DIST"
# Whole-program optimisation for the page's wasm (smaller, and no slower);
# build-wasm.sh passes the environment on to cargo.
export CARGO_PROFILE_RELEASE_LTO="${CARGO_PROFILE_RELEASE_LTO:-fat}"
export CARGO_PROFILE_RELEASE_CODEGEN_UNITS="${CARGO_PROFILE_RELEASE_CODEGEN_UNITS:-1}"
# The netplay page uses tickwise-net's no_std core: its `std` feature (UDP,
# std::net) must not reach the wasm build. The check fails closed (a cargo
# tree that fails is an error, not a pass).
bash "$ROOT/.ci/check-wasm-features.sh"
bash "$ROOT/.ci/build-wasm.sh" tickwise-web "$DIST/pkg"
rm -f "$DIST"/pkg/*.d.ts

for f in "$SRC"/*; do
  case "$(basename "$f")" in
    island.html) cp "$f" "$DIST/island-module.html" ;;
    *.html | *.js | *.css) cp "$f" "$DIST/" ;;
  esac
done

node "$ROOT/web/build/single-file.mjs" "$DIST/island-module.html" "$DIST/island.html"

WASM="$DIST/pkg/tickwise_web_bg.wasm"
log "wasm: $(wc -c < "$WASM") bytes raw, $(gzip -9 -c "$WASM" | wc -c) bytes gzip -9"
log "island.html (single file): $(wc -c < "$DIST/island.html") bytes raw, $(gzip -9 -c "$DIST/island.html" | wc -c) bytes gzip -9"
# A page for a sim that is not built in, the way a game builds its own: the
# generic adapter only (no island or horde in its wasm).
bash "$ROOT/.ci/build-page.sh" tickwise-web "$ROOT/web/examples/counter" "$DIST/counter" \
  -- --example counter_page --no-default-features
log "counter page wasm: $(wc -c < "$DIST/counter/pkg/counter_page_bg.wasm") bytes raw"
# The example game's page: a crate outside tickwise-web, as a game has.
bash "$ROOT/.ci/build-page.sh" tickwise-example-duel-web "$ROOT/examples/duel-web/page" "$DIST/duel" \
  -- --no-default-features
DUEL_WASM="$DIST/duel/pkg/duel_page_bg.wasm"
log "duel page wasm: $(wc -c < "$DUEL_WASM") bytes raw, $(gzip -9 -c "$DUEL_WASM" | wc -c) bytes gzip -9"
# Its room page: the same crate with its `room` feature (the default).
bash "$ROOT/.ci/build-page.sh" tickwise-example-duel-web "$ROOT/examples/duel-web/room" "$DIST/duel-room"
DUEL_ROOM_WASM="$DIST/duel-room/pkg/duel_page_bg.wasm"
log "duel room page wasm: $(wc -c < "$DUEL_ROOM_WASM") bytes raw, $(gzip -9 -c "$DUEL_ROOM_WASM" | wc -c) bytes gzip -9"
log "done: $DIST"
