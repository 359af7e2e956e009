#!/usr/bin/env bash
# A game's page crate outside this repository, built as a game would build it:
# copies examples/duel (the sim) and examples/duel-web (its page crate) side by
# side into a temporary directory, points their tickwise dependencies at this
# checkout by path (the only change: `path = "../../crates/..."` becomes
# absolute), makes each a workspace of its own, and builds the page with
# .ci/build-page.sh given the page crate's folder. Checks that the page, its
# wasm and the shared runtime are there, and that the wasm names no
# built-in sim (a game's page must not carry the island or the horde).
#
#   bash scripts/outside-page.sh            # part of scripts/test-all.sh (browser step)
#
# Needs `bash .ci/setup-web.sh` first (as .ci/build-web.sh does). The wasm
# build has a target directory of its own, target/wasm-outside (kept between
# runs): sharing the workspace's target/wasm with a build rooted elsewhere
# mixed the two builds' artifacts of the same path crates (two `tickwise`s
# in one graph).
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
repo=$PWD
export TICKWISE_WASM_TARGET_DIR="${TICKWISE_WASM_TARGET_DIR:-$repo/target/wasm-outside}"
fail() { printf 'outside-page: FAILED: %s\n' "$*" >&2; exit 1; }

work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
case "$work" in "$repo"/*) fail "temporary directory $work is inside the repository" ;; esac
mkdir -p "$work/games"
for c in duel duel-web; do
  cp -r "examples/$c" "$work/games/$c"
  rm -rf "$work/games/$c/target"
  cp Cargo.lock "$work/games/$c/Cargo.lock"
  sed -i "s#path = \"\\.\\./\\.\\./crates/#path = \"$repo/crates/#" "$work/games/$c/Cargo.toml"
  printf '\n# Its own workspace: not a member of any tree above it.\n[workspace]\n' >>"$work/games/$c/Cargo.toml"
  if grep -n 'workspace = true\|\.\./\.\./' "$work/games/$c/Cargo.toml"; then
    fail "the copied $c/Cargo.toml still reaches into the repository (lines above)"
  fi
done
printf '==> a page crate outside the repository: %s\n' "$work/games/duel-web"
out="$work/site"
bash .ci/build-page.sh "$work/games/duel-web" "$work/games/duel-web/page" "$out" -- --no-default-features

for f in duel.html pkg/duel_page.js pkg/duel_page_bg.wasm platform.js start.js webloop.js; do
  [ -s "$out/$f" ] || fail "$out/$f is missing or empty"
done
if grep -q -a -i 'horde\|island' "$out/pkg/duel_page_bg.wasm"; then
  fail "the page's wasm names a built-in sim (horde or island): a game's page must not carry them"
fi
printf 'outside-page: PASS (a page crate outside the repository builds with .ci/build-page.sh: %s bytes of wasm)\n' \
  "$(wc -c < "$out/pkg/duel_page_bg.wasm")"
