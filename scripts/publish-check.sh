#!/usr/bin/env bash
# `cargo publish --dry-run --workspace`: every publishable crate packs into a
# tarball that builds on its own (complete metadata, versioned path
# dependencies, no file outside its crate), in dependency order, against the
# other crates' tarballs. Nothing is uploaded. Part of scripts/test-all.sh.
#
#   bash scripts/publish-check.sh
#
# Needs the crates.io index (the registry the build already uses). Uncommitted
# changes are packed as they are (--allow-dirty), so the check runs before a
# commit too.
#
# Cargo unpacks the dry run's temporary registry under
# $CARGO_HOME/registry/src/-<hash>/ and never unpacks a crate of the same
# version there again, so a second run would build the FIRST run's sources.
# The directories this run creates are removed when it ends. Likewise cargo
# takes a registry crate's build artifacts as fresh by name and version, so
# the check builds in a target directory of its own (target/publish-check,
# the dependencies kept between runs) whose tickwise artifacts are removed
# before each run.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
export CARGO_TERM_COLOR="${CARGO_TERM_COLOR:-never}"
export CARGO_TARGET_DIR="$PWD/target/publish-check"
# The dry run only has to show that each tarball compiles: no debug info and
# no incremental caches (205 s -> 155 s from an empty target directory).
export CARGO_PROFILE_DEV_DEBUG="${CARGO_PROFILE_DEV_DEBUG:-false}"
export CARGO_INCREMENTAL="${CARGO_INCREMENTAL:-0}"
for d in "$CARGO_TARGET_DIR"/debug/{.fingerprint,deps,build}; do
  [ -d "$d" ] && find "$d" -maxdepth 1 -name '*tickwise*' -exec rm -rf {} +
done
src="${CARGO_HOME:-$HOME/.cargo}/registry/src"
mkdir -p "$src"
before=$(cd "$src" && ls -d -- -* 2>/dev/null || true)
cleanup() {
  local d
  for d in $(cd "$src" && ls -d -- -* 2>/dev/null || true); do
    grep -qxF -- "$d" <<<"$before" || rm -rf -- "${src:?}/$d"
  done
  rm -rf "$CARGO_TARGET_DIR/package"
}
trap cleanup EXIT
# An unpack left by an earlier, interrupted run of this script holds stale
# sources under the same name: refuse rather than build them.
for d in $before; do
  if ls -d -- "$src/$d"/tickwise-* >/dev/null 2>&1 && [ -d "$CARGO_TARGET_DIR/package/tmp-registry" ]; then
    printf 'publish-check: stale unpack %s/%s from an interrupted run; remove it and run again\n' "$src" "$d" >&2
    exit 1
  fi
done
cargo publish --dry-run --workspace --locked --allow-dirty
printf '\npublish-check: PASS (cargo publish --dry-run --workspace)\n'
