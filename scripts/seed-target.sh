#!/usr/bin/env bash
# Seeds a build's own target directory with this tree's compiled release
# dependencies, so a second tree (the base of scripts/bench-compare.sh, the
# game crate of scripts/outside-crate.sh, the copy of scripts/readme_blocks.py)
# compiles only its own crates:
#
#   bash scripts/seed-target.sh FROM_TARGET_DIR TO_TARGET_DIR
#
# Copies FROM/release (this tree's target/release) to TO/release once
# (nothing happens when TO/release exists or FROM/release does not), then
# removes the workspace's own crates (tickwise*, duel*) and the top-level
# binaries. Two trees must never share those: cargo names a workspace
# crate's artifacts by its path inside the workspace, so the second tree
# would link the first one's. Dependencies from crates.io are reused only when they were compiled
# with the same features and flags (the same .cargo/config.toml rustflags,
# given once); others are compiled as usual.
set -euo pipefail
[ $# -eq 2 ] || { echo "usage: bash scripts/seed-target.sh FROM_TARGET_DIR TO_TARGET_DIR" >&2; exit 2; }
from="$1/release" to="$2"
[ ! -d "$to/release" ] && [ -d "$from" ] || exit 0
mkdir -p "$to"
cp -a "$from" "$to/release"
find "$to/release" -maxdepth 1 -type f -delete
for d in .fingerprint deps build; do
  [ -d "$to/release/$d" ] || continue
  find "$to/release/$d" -mindepth 1 -maxdepth 1 \
    \( -name 'tickwise*' -o -name 'libtickwise*' -o -name 'duel*' -o -name 'libduel*' \) \
    -exec rm -rf {} +
done
echo "seeded $to/release from $from (the workspace's own crates left out)"
