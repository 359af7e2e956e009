#!/usr/bin/env bash
# A game's crate outside this repository, built and used as a game would:
# copies examples/duel (the sim, its catalog entry, its `duel` tool binary)
# to a temporary directory, points its tickwise dependencies at this checkout
# by path (the only change: the `path = "../../crates/..."` lines become
# absolute), makes it a workspace of its own, builds it, and runs the game's
# own tool: `duel record` then `duel verify`, plus a forged replay
# (parity/replay_v4.py forge) that `duel verify` must report as DIVERGED.
#
#   bash scripts/outside-crate.sh            # part of scripts/test-all.sh
#
# The build has a target directory of its own, target/outside (kept between
# runs; CARGO_TARGET_DIR overrides it): a build rooted outside the workspace
# must not share the workspace's target/, or the two builds' artifacts of the
# same path crates get mixed. A first run seeds it from target/release
# (scripts/seed-target.sh): the game copies this repository's
# .cargo/config.toml, as the README tells a game to, so the dependencies
# compiled with the same features are reused.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
repo=$PWD
export CARGO_TERM_COLOR="${CARGO_TERM_COLOR:-never}"
export CARGO_TARGET_DIR="${CARGO_TARGET_DIR:-$repo/target/outside}"

fail() { printf 'outside-crate: FAILED: %s\n' "$*" >&2; exit 1; }

work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
case "$work" in "$repo"/*) fail "temporary directory $work is inside the repository" ;; esac
game="$work/my-game"
cp -r examples/duel "$game"
rm -rf "$game/target"
# The same dependency versions as the checkout's lock file (cargo drops the
# entries the game does not use).
cp Cargo.lock "$game/Cargo.lock"
sed -i "s#path = \"\\.\\./\\.\\./crates/#path = \"$repo/crates/#" "$game/Cargo.toml"
# The CPU level, as the README's "CPU level" paragraph tells a game to do.
mkdir -p "$game/.cargo"
cp .cargo/config.toml "$game/.cargo/config.toml"
printf '\n# Its own workspace: not a member of any tree above it.\n[workspace]\n' >>"$game/Cargo.toml"
if grep -n 'workspace = true\|\.\./\.\./' "$game/Cargo.toml"; then
  fail "the copied Cargo.toml still reaches into the repository (lines above)"
fi
printf '==> a game crate outside the repository: %s\n' "$game"
grep -n '^tickwise' "$game/Cargo.toml"

printf '\n==> build (cargo build --release --features cli)\n'
# With the same flags and profile (this workspace's release profile keeps
# line tables: debug = 1), most of the CLI's dependencies are this tree's
# release artifacts: seeded once, the game's build compiles the rest.
bash scripts/seed-target.sh "$repo/target" "$CARGO_TARGET_DIR"
(cd "$game" && CARGO_PROFILE_RELEASE_DEBUG=1 cargo build --release --quiet --features cli --bin duel)
duel="$CARGO_TARGET_DIR/release/duel"

cd "$work"
printf '\n==> record, then verify, with the game'"'"'s own tool\n'
"$duel" record --ticks 3000 --inputs random:7 --out match.twr | tee record.out
grep -q '^wrote match.twr: duel 3000 ticks, 2 players' record.out || fail "record printed no 'wrote match.twr: duel 3000 ticks'"
"$duel" verify match.twr | tee verify.out
grep -q '^OK  *match.twr (3000 ticks, digest ' verify.out || fail "verify did not print OK for match.twr"

printf '\n==> a forged replay (one input changed, checksum recomputed) is DIVERGED\n'
python3 "$repo/parity/replay_v4.py" forge match.twr forged.twr 100 1
rc=0
"$duel" verify forged.twr >forged.out 2>&1 || rc=$?
cat forged.out
[ "$rc" -eq 1 ] || fail "verify of the forged replay exited $rc, expected 1"
grep -q '^DIVERGED  forged.twr: checkpoint ' forged.out || fail "verify did not report the forgery as DIVERGED"
printf '\noutside-crate: PASS (a crate outside the repository depends on tickwise by path, records and verifies)\n'
